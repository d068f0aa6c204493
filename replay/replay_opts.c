/* Parsing replay-llm's --dialect and --fault values. */
#include "replay/replay.h"

#include "common/buf.h"
#include "common/units.h"

#include <stdlib.h>
#include <string.h>

static const char *const NAMES[] = {"vllm", "sglang", "deepseek", "llamacpp", "raw"};

int sg_replay_dialect_parse(const char *name, sg_replay_dialect *out, sg_err *err) {
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
        if (!strcmp(name, NAMES[i])) return *out = (sg_replay_dialect)i, 0;
    return sg_errf(err, "'%s' is not a dialect (vllm, sglang, deepseek, llamacpp, raw)", name);
}

const char *sg_replay_dialect_name(sg_replay_dialect d) { return NAMES[d]; }

int sg_replay_fault_parse(const char *spec, sg_replay_fault *f, sg_err *err) {
    static const struct {
        const char *name;
        sg_replay_fault_kind kind;
    } kinds[] = {{"drop", SG_FAULT_DROP},
                 {"429", SG_FAULT_429},
                 {"503", SG_FAULT_503},
                 {"stall", SG_FAULT_STALL},
                 {"malformed", SG_FAULT_MALFORMED},
                 {"abort", SG_FAULT_ABORT},
                 {"ignore_max_tokens", SG_FAULT_IGNORE_MAX_TOKENS},
                 {"no_completions", SG_FAULT_NO_COMPLETIONS},
                 {"no_stream", SG_FAULT_NO_STREAM}};
    memset(f, 0, sizeof *f);
    f->retry_after = 1;
    f->ms = 1000;
    char *copy = sg_xstrdup(spec);
    char *save = NULL, *kind = strtok_r(copy, ":", &save);
    int rc = 0;
    for (size_t i = 0; kind && i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(kind, kinds[i].name)) f->kind = kinds[i].kind;
    if (f->kind == SG_FAULT_NONE)
        rc = sg_errf(err,
                     "fault '%s': kind must be drop, 429, 503, stall, malformed, abort, "
                     "ignore_max_tokens, no_completions or no_stream",
                     spec);
    for (char *kv; !rc && (kv = strtok_r(NULL, ":", &save));) {
        char *eq = strchr(kv, '=');
        int64_t v = 0;
        sg_err e2;
        if (!eq || sg_parse_int(eq + 1, &v, &e2) < 0 || v < 0) {
            rc = sg_errf(err, "fault '%s': '%s' is not KEY=N (N >= 0)", spec, kv);
            break;
        }
        *eq = '\0';
        if (!strcmp(kv, "after"))
            f->after = v;
        else if (!strcmp(kv, "ms"))
            f->ms = v;
        else if (!strcmp(kv, "retry_after"))
            f->retry_after = v;
        else if (!strcmp(kv, "times"))
            f->times = v;
        else
            rc = sg_errf(err, "fault '%s': unknown key '%s' (after, ms, retry_after, times)", spec,
                         kv);
    }
    free(copy);
    return rc;
}
