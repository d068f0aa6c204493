/* fit_json.c — a fitted workload as a workload file (sim.h's sg_sim_fit_json). */
#include "sim/sim.h"

#include <stdio.h>
#include <string.h>

/* The workload's numeric fields, as workload.c reads them. */
static void fields(const sg_sim_workload *w, json_t *o) {
    const struct {
        const char *name;
        double v;
    } f[] = {
        {"prefill_tok_s", w->prefill_tok_s},
        {"first_token_s", w->first_token_s},
        {"prompt_tokens", w->prompt_tokens},
        {"cache_tokens", w->cache_tokens},
        {"kvstore_tokens", w->kvstore_tokens},
        {"kvstore_chunk_tokens", w->kvstore_chunk_tokens},
        {"kv_bytes_per_token", w->kv_bytes_per_token},
        {"kvstore_gb_s", w->kvstore_gb_s},
        {"kvstore_latency_s", w->kvstore_latency_s},
        {"reasoning_tokens", w->reasoning_tokens},
        {"reasoning_cv", w->reasoning_cv},
        {"code_every_tokens", w->code_every_tokens},
        {"cue_every_tokens", w->cue_every_tokens},
        {"fork_tokens", w->fork_tokens},
        {"final_tokens", w->final_tokens},
        {"q0", w->q0},
        {"q1", w->q1},
        {"q_gamma", w->q_gamma},
        {"q_sd", w->q_sd},
        {"q_final", w->q_final},
        {"q_iter", w->q_iter},
        {"q_carry", w->q_carry},
        {"validate_s", w->slots.service_s[SG_POOL_VALIDATE]},
        {"profile_s", w->slots.service_s[SG_POOL_PROFILE]},
        {"service_cv", w->slots.cv},
        {"p_compile_error", w->slots.p_compile_error},
        {"p_wrong", w->slots.p_wrong},
        {"max_speedup", w->slots.max_speedup},
        {"speedup_cv", w->slots.speedup_cv},
        {"target_speedup", w->target_speedup},
    };
    json_object_set_new(o, "instances", json_integer(w->instances));
    json_t *rate = json_array();
    for (int i = 0; i < w->rate_points; i++)
        json_array_append_new(rate, json_pack("[f,f]", w->rate_batch[i], w->rate_tok_s[i]));
    json_object_set_new(o, "decode_rate", rate);
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        json_object_set_new(o, f[i].name, json_real(f[i].v));
}

json_t *sg_sim_fit_json(const sg_fit *f) {
    json_t *o = json_object(), *src = json_object(), *fit = json_object();
    json_object_set_new(o, "name", json_string("measured"));
    json_object_set_new(
        o, "about",
        json_string("Fitted by `specgen sim fit` to calibration data (docs/calibration.md). "
                    "`fit` gives each fitted parameter's estimate, 95% interval and sample "
                    "count; `sources` says for every field whether it was fitted or is the base "
                    "workload's ASSUMPTION, and why."));
    fields(&f->w, o);
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        if (!strcmp(key, "name") || !strcmp(key, "about")) continue;
        json_object_set_new(src, key,
                            json_string("ASSUMPTION (the base workload's: the "
                                        "calibration does not measure it)"));
    }
    int rates = 0;
    for (int i = 0; i < f->np; i++) {
        const sg_fit_param *p = &f->p[i];
        char s[400];
        int rate = !strncmp(p->name, "decode_rate", 11);
        if (p->fitted)
            snprintf(s, sizeof s, "M (fitted: %.6g, 95%% interval %.6g-%.6g, %d samples)", p->value,
                     p->lo, p->hi, p->n);
        else
            snprintf(s, sizeof s, "ASSUMPTION (not fitted: %s)", p->why);
        if (p->fitted)
            json_object_set_new(fit, p->name,
                                json_pack("{s:f,s:f,s:f,s:i}", "value", p->value, "lo", p->lo, "hi",
                                          p->hi, "n", p->n));
        if (rate && p->fitted && rates++) continue; /* one source line for the curve */
        json_object_set_new(src, rate ? "decode_rate" : p->name,
                            json_string(rate && p->fitted
                                            ? "M (fitted: the ramp's per-stream rates; `fit` "
                                              "gives each point's interval)"
                                            : s));
    }
    json_object_set_new(o, "sources", src);
    json_object_set_new(o, "fit", fit);
    return o;
}
