/* Parsing replay-llm's --dialect and --fault values. */
#include "replay/replay.h"

#include "common/buf.h"
#include "common/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sg_replay_dialect_parse(const char *name, sg_replay_dialect *out, sg_err *err) {
    sg_dialect d;
    if (sg_dialect_parse(name, &d) == 0 && sg_dialects[d].replayed) return *out = d, 0;
    char names[256];
    sg_dialect_names(1, ", ", names, sizeof names);
    return sg_errf(err, "'%s' is not a dialect (%s)", name, names);
}

const char *sg_replay_dialect_name(sg_replay_dialect d) { return sg_dialect_name(d); }

static const char *const FAULT_NAMES[SG_FAULT_N] = {
#define SG_REPLAY_FAULT_NAME(id, name) [SG_FAULT_##id] = name,
    SG_REPLAY_FAULTS(SG_REPLAY_FAULT_NAME)
#undef SG_REPLAY_FAULT_NAME
};

const char *sg_replay_fault_name(sg_replay_fault_kind k) {
    return (unsigned)k < SG_FAULT_N ? FAULT_NAMES[k] : NULL;
}

/* "drop, 429, ... or no_stream" */
static void fault_names(char *out, size_t n) {
    size_t len = 0;
    out[0] = '\0';
    for (int k = 1; k < SG_FAULT_N && len < n; k++) {
        int w = snprintf(out + len, n - len, "%s%s",
                         k == 1                ? ""
                         : k == SG_FAULT_N - 1 ? " or "
                                               : ", ",
                         FAULT_NAMES[k]);
        if (w < 0) break;
        len += (size_t)w;
    }
}

int sg_replay_fault_parse(const char *spec, sg_replay_fault *f, sg_err *err) {
    memset(f, 0, sizeof *f);
    f->retry_after = 1;
    f->ms = 1000;
    char *copy = sg_xstrdup(spec);
    char *save = NULL, *kind = strtok_r(copy, ":", &save);
    int rc = 0;
    for (int k = 1; kind && k < SG_FAULT_N; k++)
        if (!strcmp(kind, FAULT_NAMES[k])) f->kind = (sg_replay_fault_kind)k;
    if (f->kind == SG_FAULT_NONE) {
        char names[256];
        fault_names(names, sizeof names);
        rc = sg_errf(err, "fault '%s': kind must be %s", spec, names);
    }
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
