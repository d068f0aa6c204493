/* Results: setting a verdict, JSON both ways, and the person-readable form. */
#include "validator/internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sg_val_result_set(sg_val_result *r, sg_val_verdict v, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    r->verdict = v;
    sg_vfmt_fit(r->message, sizeof r->message, fmt, ap); /* keeps the reason at the end */
    va_end(ap);
}

/* JSON has no Inf/NaN: errors that large are written as -1 (and read back as Inf). */
static json_t *num(double v) { return json_real(isfinite(v) ? v : -1); }
static double denum(const json_t *j) {
    double v = json_number_value(j);
    return v < 0 ? INFINITY : v;
}

json_t *sg_val_result_to_json(const sg_val_result *r) {
    char seed[24];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)r->seed);
    json_t *j = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:s, s:o, s:o, s:i, s:b, s:f, s:f, s:s, "
        "s:s}",
        "verdict", sg_val_verdict_name(r->verdict), "message", r->message, "detail", r->detail,
        "shape", r->shape, "output", r->output, "first_bad", (json_int_t)r->first_bad, "got",
        r->got, "expected", r->expected, "max_abs", num(r->max_abs), "max_rel", num(r->max_rel),
        "checks_run", r->checks_run, "cache_hit", r->cache_hit, "compile_ms", r->compile_ms,
        "run_ms", r->run_ms, "hash", r->hash, "seed", seed);
    if (r->kb_trials) { /* a torch task: KernelBench's own check beside ours */
        json_object_set_new(j, "kb_trials", json_integer(r->kb_trials));
        json_object_set_new(j, "kb_pass", json_integer(r->kb_pass));
    }
    return j;
}

static void copy_str(const json_t *j, const char *k, char *out, size_t n) {
    const char *s = json_string_value(json_object_get(j, k));
    snprintf(out, n, "%s", s ? s : "");
}

void sg_val_result_from_json(const json_t *j, sg_val_result *r) {
    memset(r, 0, sizeof *r);
    const char *v = json_string_value(json_object_get(j, "verdict"));
    r->verdict = SG_VAL_CRASH;
    for (int i = 0; v && i < SG_VAL_NVERDICT; i++)
        if (!strcmp(v, sg_val_verdict_name((sg_val_verdict)i))) r->verdict = (sg_val_verdict)i;
    copy_str(j, "message", r->message, sizeof r->message);
    copy_str(j, "detail", r->detail, sizeof r->detail);
    copy_str(j, "shape", r->shape, sizeof r->shape);
    copy_str(j, "output", r->output, sizeof r->output);
    copy_str(j, "hash", r->hash, sizeof r->hash);
    copy_str(j, "got", r->got, sizeof r->got);
    copy_str(j, "expected", r->expected, sizeof r->expected);
    r->first_bad = json_integer_value(json_object_get(j, "first_bad"));
    r->max_abs = denum(json_object_get(j, "max_abs"));
    r->max_rel = denum(json_object_get(j, "max_rel"));
    r->checks_run = (int)json_integer_value(json_object_get(j, "checks_run"));
    r->kb_trials = (int)json_integer_value(json_object_get(j, "kb_trials"));
    r->kb_pass = (int)json_integer_value(json_object_get(j, "kb_pass"));
    r->cache_hit = json_is_true(json_object_get(j, "cache_hit"));
    r->compile_ms = json_number_value(json_object_get(j, "compile_ms"));
    r->run_ms = json_number_value(json_object_get(j, "run_ms"));
    const char *seed = json_string_value(json_object_get(j, "seed"));
    r->seed = seed ? strtoull(seed, NULL, 10) : 0;
}

char *sg_val_result_json(const sg_val_result *r) {
    json_t *j = sg_val_result_to_json(r);
    if (!isfinite(r->max_abs)) json_object_set_new(j, "max_abs", json_string("inf"));
    if (!isfinite(r->max_rel)) json_object_set_new(j, "max_rel", json_string("inf"));
    char *s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return s;
}

void sg_val_result_print(const sg_val_result *r, void *file) {
    FILE *f = file;
    fprintf(f, "%s: %s\n", sg_val_verdict_name(r->verdict), r->message);
    if (r->detail[0] && r->verdict != SG_VAL_MISMATCH) { /* a mismatch's hint is in the message */
        fprintf(f, "---- compiler log ----\n%s", r->detail);
        if (r->detail[strlen(r->detail) - 1] != '\n') fputc('\n', f);
    }
    if (r->verdict == SG_VAL_PASS || r->verdict == SG_VAL_COMPILED || r->compile_ms > 0)
        fprintf(f, "compile %.1f ms%s, run %.1f ms, seed %llu, hash %s\n", r->compile_ms,
                r->cache_hit ? " (cache hit)" : "", r->run_ms, (unsigned long long)r->seed,
                r->hash);
}
