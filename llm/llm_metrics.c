#include "llm/llm_metrics.h"

#include "common/buf.h"
#include "common/dialect.h"
#include "llm/llm_impl.h"

#include <stdlib.h>
#include <string.h>

/* 1 when a dialect before i already has i's metric names (vllm-legacy and raw are vLLM's). */
static int seen_before(int i) {
    for (int j = 0; j < i; j++)
        if (sg_dialects[j].running && !strcmp(sg_dialects[j].running, sg_dialects[i].running))
            return 1;
    return 0;
}

/* Value of a sample line "name{labels} value" or "name value" if it names `name`. */
static int sample(const char *line, const char *name, double *v) {
    size_t n = strlen(name);
    if (strncmp(line, name, n) || (line[n] != ' ' && line[n] != '{')) return 0;
    const char *sp = strrchr(line, ' ');
    if (!sp) return 0;
    *v = strtod(sp + 1, NULL);
    return 1;
}

int sg_llm_metrics_parse(const char *text, sg_llm_metrics *m) {
    memset(m, 0, sizeof *m);
    int found = 0;
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        if (*l == '#') continue;
        char line[512];
        size_t k = strcspn(l, "\n");
        if (k >= sizeof line) continue;
        memcpy(line, l, k);
        line[k] = '\0';
        double v;
        for (int i = 0; i < SG_DIALECT_N; i++) { /* each name once: its first dialect's */
            const sg_dialect_info *d = &sg_dialects[i];
            if (!d->running || seen_before(i)) continue;
            if (sample(line, d->running, &v))
                m->running += v, m->running_name = d->running, found = 1;
            if (sample(line, d->generated, &v)) m->generated += v;
        }
    }
    return found ? 0 : 1;
}

int sg_llm_metrics_fetch(const char *base_url, long timeout_ms, sg_llm_metrics *m, sg_err *err) {
    sg_buf body = {0};
    long status;
    int out = sg_llm_http_root(base_url, "/metrics", NULL, NULL, timeout_ms, &body, &status, err);
    if (out == 0) out = status != 200 ? 1 : sg_llm_metrics_parse(body.data ? body.data : "", m);
    sg_buf_free(&body);
    return out;
}
