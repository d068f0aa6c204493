/* sg_prof_time: the parent's side of a profile job. It sends the job to the slot's
 * worker through the pool (same deadlines, kill and respawn as validation; the worker
 * restarts the run deadline after every timing batch) and turns the raw samples it
 * returns into timings, a speedup with its band, and the candidate's static facts. */
#include "profiler/profiler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

void sg_prof_opts_default(sg_prof_opts *o) {
    memset(o, 0, sizeof *o);
    o->warmup = 2;
    o->input_sets = 3;
    o->flush_cache = 1;
    sg_stability_default(&o->stab);
    sg_race_default(&o->race);
    o->race.tie_min_runs = -1; /* the "not_better" stop from the stability rule's min_runs */
}

static double mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int summarize(const json_t *arr, sg_timing *t, double *total_ns) {
    size_t n = json_array_size(arr);
    memset(t, 0, sizeof *t);
    if (!n) return 0;
    double *v = sg_xcalloc(n, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        v[i] = json_number_value(json_array_get(arr, i));
        *total_ns += v[i];
    }
    sg_timing_summarize(v, (int)n, t);
    free(v);
    return (int)n;
}

/* The speedup's paired 99% interval over all runs (racing's, sg_race_check), racing or not. */
static void paired_interval(const json_t *base, const json_t *cand, sg_prof_result *r) {
    size_t n = json_array_size(cand);
    if (n < 2 || json_array_size(base) < n) return;
    double *b = sg_xcalloc(n, sizeof *b), *c = sg_xcalloc(n, sizeof *c);
    for (size_t i = 0; i < n; i++) {
        b[i] = json_number_value(json_array_get(base, i));
        c[i] = json_number_value(json_array_get(cand, i));
    }
    sg_race_check(b, c, (int)n, NULL, &r->speedup_lo, &r->speedup_hi);
    free(b);
    free(c);
}

/* The occupancy limiter as a string literal (sg_fb_static keeps a pointer). */
static const char *limiter_literal(const char *s) {
    static const char *const known[] = {"registers", "shared memory", "block size",
                                        "blocks per multiprocessor"};
    for (size_t i = 0; s && i < sizeof known / sizeof *known; i++)
        if (!strcmp(s, known[i])) return known[i];
    return NULL;
}

/* Per-kernel facts into one line each, and the worst of them into sg_fb_static. */
static void take_facts(const json_t *facts, sg_prof_result *r) {
    size_t i;
    json_t *f;
    sg_buf b = {0};
    json_array_foreach(facts, i, f) {
        json_int_t wg = json_integer_value(json_object_get(f, "wg_limit"));
        json_int_t priv = json_integer_value(json_object_get(f, "private_bytes"));
        json_int_t local = json_integer_value(json_object_get(f, "local_bytes"));
        json_int_t shared = json_integer_value(json_object_get(f, "shared_bytes"));
        int regs = (int)json_integer_value(json_object_get(f, "registers"));
        double occ = json_number_value(json_object_get(f, "occupancy"));
        const char *lim = limiter_literal(json_string_value(json_object_get(f, "limiter")));
        sg_buf_printf(&b, "%s%s: block %lld of at most %lld", i ? "; " : "",
                      json_string_value(json_object_get(f, "kernel")),
                      (long long)json_integer_value(json_object_get(f, "block")), (long long)wg);
        if (regs) sg_buf_printf(&b, ", %d registers", regs);
        if (priv) sg_buf_printf(&b, ", %lld B private", (long long)priv);
        if (local) sg_buf_printf(&b, ", %lld B local (spills)", (long long)local);
        sg_buf_printf(&b, ", %lld B shared/local", (long long)shared);
        if (occ > 0) sg_buf_printf(&b, ", occupancy %.0f%% (%s)", 100 * occ, lim ? lim : "?");
        sg_fb_static *s = &r->facts;
        s->have = 1;
        if (regs > s->registers) s->registers = regs;
        if (shared > s->shared_bytes) s->shared_bytes = (int)shared;
        if (local > s->local_bytes) s->local_bytes = (int)local;
        if (occ > 0 && (s->occupancy == 0 || occ < s->occupancy)) {
            s->occupancy = occ;
            s->occupancy_limiter = lim;
        }
    }
    snprintf(r->facts_text, sizeof r->facts_text, "%s", b.data ? b.data : "");
    sg_buf_free(&b);
}

json_t *sg_prof_request(const sg_val_job *job, const sg_prof_opts *o, sg_err *err) {
    uint64_t seed = job->seed;
    if (!seed && getrandom(&seed, sizeof seed, 0) != sizeof seed)
        seed = (uint64_t)time(NULL) ^ 0x5eed;
    char seeds[24];
    snprintf(seeds, sizeof seeds, "%llu", (unsigned long long)(seed ? seed : 1));
    json_t *cand = json_null();
    if (job->candidate && !(cand = json_stringn(job->candidate, job->candidate_len))) {
        sg_errf(err, "the candidate is not valid UTF-8 text (or holds a NUL byte)");
        return NULL;
    }
    json_t *req = json_pack(
        "{s:s, s:s, s:o, s:s, s:s, s:i, s:i, s:b, s:i, s:i, s:i, s:f}", "type", "profile",
        "task_dir", job->task_dir, "candidate", cand, "candidate_name",
        job->candidate_name ? job->candidate_name : "candidate", "seed", seeds, "warmup", o->warmup,
        "input_sets", o->input_sets, "flush", o->flush_cache, "min_runs", o->stab.min_runs,
        "max_runs", o->stab.max_runs, "window", o->stab.window, "tol", o->stab.tol);
    int tie = o->race.tie_min_runs < 0 ? o->stab.min_runs : o->race.tie_min_runs;
    if (req && o->race.on)
        json_object_set_new(req, "race",
                            json_pack("{s:i, s:f, s:f, s:i}", "min_runs", o->race.min_runs, "best",
                                      o->race.best, "target", o->race.target, "tie_min_runs", tie));
    return req;
}

int sg_prof_from_reply(const json_t *reply, sg_prof_result *r, sg_err *err) {
    memset(r, 0, sizeof *r);
    const char *e = json_string_value(json_object_get(reply, "error"));
    if (e) return sg_errf(err, "%s", e);
    double total = 0;
    summarize(json_object_get(reply, "base"), &r->baseline, &total);
    summarize(json_object_get(reply, "cand"), &r->candidate, &total);
    paired_interval(json_object_get(reply, "base"), json_object_get(reply, "cand"), r);
    r->device_ms = total / 1e6;
    if (r->candidate.runs) r->speedup = sg_speedup_compare(&r->baseline, &r->candidate);
    take_facts(json_object_get(reply, "facts"), r);
    json_t *roof = json_object_get(reply, "roof");
    if (roof) {
        r->roof.have = 1;
        r->roof.bytes = json_number_value(json_object_get(roof, "bytes"));
        r->roof.flops = json_number_value(json_object_get(roof, "flops"));
        r->roof.peak_gbs = json_number_value(json_object_get(roof, "peak_gbs"));
        r->roof.peak_gflops = json_number_value(json_object_get(roof, "peak_gflops"));
        const char *pk = json_string_value(json_object_get(roof, "peak"));
        const char *bs = json_string_value(json_object_get(roof, "bw_source"));
        snprintf(r->roof.peak, sizeof r->roof.peak, "%s", pk ? pk : "");
        snprintf(r->roof.bw_source, sizeof r->roof.bw_source, "%s", bs ? bs : "");
    }
    snprintf(r->metrics, sizeof r->metrics, "%s",
             json_string_value(json_object_get(reply, "metrics")) ?: "");
    const char *verdict = json_string_value(json_object_get(reply, "verdict"));
    r->verdict = SG_VAL_PASS; /* or what the checks after timing found */
    for (int i = 0; verdict && i < SG_VAL_NVERDICT; i++)
        if (!strcmp(verdict, sg_val_verdict_name((sg_val_verdict)i)))
            r->verdict = (sg_val_verdict)i;
    snprintf(r->message, sizeof r->message, "%s",
             json_string_value(json_object_get(reply, "message")) ?: "");
    r->input_sets = (int)json_integer_value(json_object_get(reply, "input_sets"));
    r->flush_bytes = (double)json_integer_value(json_object_get(reply, "flush_bytes"));
    json_t *race = json_object_get(reply, "race");
    if (json_is_object(race)) {
        snprintf(r->race_stop, sizeof r->race_stop, "%s",
                 json_string_value(json_object_get(race, "stop")) ?: "");
        r->race_lo = json_number_value(json_object_get(race, "lo"));
        r->race_hi = json_number_value(json_object_get(race, "hi"));
        r->race_bar = json_number_value(json_object_get(race, "bar"));
        r->race_saved_runs = (int)json_integer_value(json_object_get(race, "saved_runs"));
        int n = r->candidate.runs;
        if (n > 0) r->race_saved_ms = r->race_saved_runs * r->device_ms / n;
    }
    return 0;
}

int sg_prof_time(sg_val_pool *pool, int slot, const sg_val_job *job, const sg_prof_opts *o,
                 sg_prof_result *r, sg_err *err) {
    memset(r, 0, sizeof *r);
    double t0 = mono_ms();
    json_t *req = sg_prof_request(job, o, err);
    if (!req) return -1;
    json_t *reply = NULL;
    sg_val_result vr;
    int rc = sg_val_pool_call(pool, slot, job, req, &reply, &vr, err);
    json_decref(req);
    if (rc < 0) return -1;
    if (rc == 1)
        return sg_errf(err, "timing %s: %s",
                       job->candidate_name ? job->candidate_name : "the baseline", vr.message);
    rc = sg_prof_from_reply(reply, r, err);
    json_decref(reply);
    if (rc < 0) return -1;
    r->wall_ms = mono_ms() - t0;
    return 0;
}
