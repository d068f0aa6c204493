/* Workload files: the parameters of the LLM and device models, with defaults that are the
 * reference workload (sim/workloads/reference.json gives the source of every value). */
#include "sim/sim.h"

#include "common/json.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

void sg_sim_workload_default(sg_sim_workload *w) {
    memset(w, 0, sizeof *w);
    snprintf(w->name, sizeof w->name, "reference");
    w->instances = 2;
    /* DeepSeek-R1 FP8 on 8xH200 (SGLang): ~78 tok/s at 8 streams ... 29 at 64 */
    double b[] = {1, 8, 16, 32, 64}, r[] = {80, 78, 58, 39, 29};
    w->rate_points = 5;
    for (int i = 0; i < 5; i++) w->rate_batch[i] = b[i], w->rate_tok_s[i] = r[i];
    w->prefill_tok_s = 20000;
    w->first_token_s = 0.35;
    w->prompt_tokens = 2500;
    w->cache_tokens = 400000;
    w->kvstore_tokens = 4500000;
    w->kvstore_chunk_tokens = 256;
    w->kv_bytes_per_token = 70272;
    w->kvstore_gb_s = 12.5;
    w->kvstore_latency_s = 0.002;
    w->kv_placement = SG_SIM_PLACE_PREFIX;
    w->reasoning_tokens = 8000;
    w->reasoning_cv = 0.5;
    w->code_every_tokens = 900;
    w->cue_every_tokens = 600;
    w->fork_tokens = 450;
    w->final_tokens = 700;
    w->q0 = 0.15;
    w->q1 = 0.62;
    w->q_gamma = 0.7;
    w->q_sd = 0.12;
    w->q_final = 0.66;
    w->q_iter = 0.06;
    w->slots = (sg_sim_slot_model){.service_s = {2.0, 6.0},
                                   .cv = 0.3,
                                   .pass_rate = 0.5,
                                   .speedup_mean = 1.5,
                                   .seed = 1,
                                   .p_compile_error = 0.25,
                                   .p_wrong = 0.45,
                                   .max_speedup = 3.0,
                                   .speedup_cv = 0.1};
    w->target_speedup = 1.8;
}

typedef struct field {
    const char *name;
    double *d;
    int *i;
} field;

int sg_sim_workload_load(const char *path, sg_sim_workload *w, sg_err *err) {
    sg_err je;
    json_t *j = sg_json_load_file(path, &je); /* names the line only where there is one */
    if (!j) return sg_errf(err, "workload: %s", je.msg);
    const field fields[] = {
        {"instances", NULL, &w->instances},
        {"prefill_tok_s", &w->prefill_tok_s, NULL},
        {"first_token_s", &w->first_token_s, NULL},
        {"prompt_tokens", &w->prompt_tokens, NULL},
        {"cache_tokens", &w->cache_tokens, NULL},
        {"kv_tokens", &w->kv_tokens, NULL},
        {"kvstore_tokens", &w->kvstore_tokens, NULL},
        {"kvstore_chunk_tokens", &w->kvstore_chunk_tokens, NULL},
        {"kv_bytes_per_token", &w->kv_bytes_per_token, NULL},
        {"kvstore_gb_s", &w->kvstore_gb_s, NULL},
        {"kvstore_latency_s", &w->kvstore_latency_s, NULL},
        {"reasoning_tokens", &w->reasoning_tokens, NULL},
        {"reasoning_cv", &w->reasoning_cv, NULL},
        {"code_every_tokens", &w->code_every_tokens, NULL},
        {"cue_every_tokens", &w->cue_every_tokens, NULL},
        {"fork_tokens", &w->fork_tokens, NULL},
        {"final_tokens", &w->final_tokens, NULL},
        {"q0", &w->q0, NULL},
        {"q1", &w->q1, NULL},
        {"q_gamma", &w->q_gamma, NULL},
        {"q_sd", &w->q_sd, NULL},
        {"q_final", &w->q_final, NULL},
        {"q_iter", &w->q_iter, NULL},
        {"q_carry", &w->q_carry, NULL},
        {"kernel_step", &w->kernel_step, NULL},
        {"validate_s", &w->slots.service_s[SG_POOL_VALIDATE], NULL},
        {"profile_s", &w->slots.service_s[SG_POOL_PROFILE], NULL},
        {"service_cv", &w->slots.cv, NULL},
        {"p_compile_error", &w->slots.p_compile_error, NULL},
        {"p_wrong", &w->slots.p_wrong, NULL},
        {"max_speedup", &w->slots.max_speedup, NULL},
        {"speedup_cv", &w->slots.speedup_cv, NULL},
        {"target_speedup", &w->target_speedup, NULL},
    };
    const char *key;
    json_t *v;
    int rc = 0;
    json_object_foreach(j, key, v) {
        if (!strcmp(key, "sources") || !strcmp(key, "about") || !strcmp(key, "fit"))
            continue; /* documentation (fit: what `sim fit` measured) */
        if (!strcmp(key, "name")) {
            snprintf(w->name, sizeof w->name, "%s",
                     json_string_value(v) ? json_string_value(v) : "");
            continue;
        }
        if (!strcmp(key, "decode_rate")) { /* [[batch, tok/s], ...] */
            size_t n = json_array_size(v);
            if (n < 1 || n > 8) {
                rc = sg_errf(err, "workload %s: decode_rate: 1 to 8 [batch, tok/s] points", path);
                break;
            }
            w->rate_points = (int)n;
            for (size_t i = 0; i < n; i++) {
                w->rate_batch[i] = json_number_value(json_array_get(json_array_get(v, i), 0));
                w->rate_tok_s[i] = json_number_value(json_array_get(json_array_get(v, i), 1));
            }
            continue;
        }
        const field *f = NULL;
        for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
            if (!strcmp(fields[i].name, key)) f = &fields[i];
        if (!f) {
            rc = sg_errf(err, "workload %s: unknown field '%s'", path, key);
            break;
        }
        if (!json_is_number(v)) {
            rc = sg_errf(err, "workload %s: %s must be a number", path, key);
            break;
        }
        if (f->d) *f->d = json_number_value(v);
        if (f->i) *f->i = (int)json_number_value(v);
    }
    json_decref(j);
    if (rc == 0 && w->kvstore_tokens > 0 &&
        !(w->kvstore_gb_s > 0 && w->kv_bytes_per_token > 0 && w->kvstore_latency_s >= 0 &&
          w->kvstore_chunk_tokens >= 0))
        rc = sg_errf(err,
                     "workload %s: with a kvstore (kvstore_tokens > 0) kvstore_gb_s and "
                     "kv_bytes_per_token must be above 0, kvstore_latency_s and "
                     "kvstore_chunk_tokens at least 0",
                     path);
    if (rc == 0 && (w->instances < 1 || w->reasoning_tokens < 100 || w->prefill_tok_s <= 0 ||
                    !(w->target_speedup > 0)))
        rc = sg_errf(err,
                     "workload %s: instances >= 1, reasoning_tokens >= 100, "
                     "prefill_tok_s > 0 and target_speedup > 0 are needed",
                     path);
    return rc;
}

int sg_sim_placement_parse(const char *s, double *out, sg_err *err) {
    unsigned n;
    int used = 0;
    if (!strcmp(s, "prefix"))
        *out = SG_SIM_PLACE_PREFIX;
    else if (!strcmp(s, "load"))
        *out = -1;
    else if (!strncmp(s, "prefix:", 7) && s[7] >= '0' && s[7] <= '9' &&
             sscanf(s, "prefix:%u%n", &n, &used) == 1 && !s[used] && n <= 1000000)
        *out = n;
    else
        return sg_errf(err,
                       "--kv-placement: '%s' is not prefix, prefix:N (N requests, 0 to 1000000) "
                       "or load",
                       s);
    return 0;
}

void sg_sim_placement_name(double placement, char *out, size_t n) {
    if (placement >= SG_SIM_PLACE_PREFIX)
        snprintf(out, n, "prefix");
    else if (placement < 0)
        snprintf(out, n, "load");
    else
        snprintf(out, n, "prefix:%.0f", placement);
}

double sg_sim_decode_rate(const sg_sim_workload *w, int batch) {
    int n = w->rate_points;
    if (batch <= w->rate_batch[0]) return w->rate_tok_s[0];
    for (int i = 1; i < n; i++)
        if (batch <= w->rate_batch[i]) {
            double f = (batch - w->rate_batch[i - 1]) / (w->rate_batch[i] - w->rate_batch[i - 1]);
            return w->rate_tok_s[i - 1] + f * (w->rate_tok_s[i] - w->rate_tok_s[i - 1]);
        }
    /* past the last point: the batch's total throughput stays what it was */
    return w->rate_tok_s[n - 1] * w->rate_batch[n - 1] / batch;
}
