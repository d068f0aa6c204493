/* The wire format of results and timing options between a remote slot and its agent
 * (pool/internal.h states it). */
#include "pool/internal.h"

#include "common/json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }
static double denum(const json_t *j) { return json_is_number(j) ? json_number_value(j) : NAN; }
static double getnum(const json_t *o, const char *k) { return denum(json_object_get(o, k)); }
static int getint(const json_t *o, const char *k) {
    return (int)json_integer_value(json_object_get(o, k));
}
static void getstr(const json_t *o, const char *k, char *out, size_t n) {
    const char *s = json_string_value(json_object_get(o, k));
    snprintf(out, n, "%s", s ? s : "");
}

static json_t *timing_json(const sg_timing *t) {
    return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:i}", "median_ns", num(t->median_ns), "p25_ns",
                     num(t->p25_ns), "p75_ns", num(t->p75_ns), "min_ns", num(t->min_ns), "max_ns",
                     num(t->max_ns), "noise", num(t->noise), "runs", t->runs);
}

static void timing_from(const json_t *j, sg_timing *t) {
    t->median_ns = getnum(j, "median_ns");
    t->p25_ns = getnum(j, "p25_ns");
    t->p75_ns = getnum(j, "p75_ns");
    t->min_ns = getnum(j, "min_ns");
    t->max_ns = getnum(j, "max_ns");
    t->noise = getnum(j, "noise");
    t->runs = getint(j, "runs");
}

static json_t *prof_json(const sg_prof_result *p) {
    const sg_fb_static *f = &p->facts;
    const sg_fb_roofline *rf = &p->roof;
    return json_pack("{s:o,s:o,s:{s:o,s:o,s:i},s:{s:b,s:i,s:i,s:i,s:o,s:s?},s:{s:b,s:o,s:o,s:o,s:o,"
                     "s:s,s:s},s:s,s:s,"
                     "s:o,s:o,s:s,s:s,s:i,s:o}",
                     "baseline", timing_json(&p->baseline), "candidate", timing_json(&p->candidate),
                     "speedup", "speedup", num(p->speedup.speedup), "band", num(p->speedup.band),
                     "verdict", (int)p->speedup.verdict, "facts", "have", f->have, "registers",
                     f->registers, "shared_bytes", f->shared_bytes, "local_bytes", f->local_bytes,
                     "occupancy", num(f->occupancy), "limiter", f->occupancy_limiter, "roof",
                     "have", rf->have, "bytes", num(rf->bytes), "flops", num(rf->flops), "peak_gbs",
                     num(rf->peak_gbs), "peak_gflops", num(rf->peak_gflops), "peak", rf->peak,
                     "bw_source", rf->bw_source, "facts_text", p->facts_text, "metrics", p->metrics,
                     "wall_ms", num(p->wall_ms), "device_ms", num(p->device_ms), "verdict",
                     sg_val_verdict_name(p->verdict), "message", p->message, "input_sets",
                     p->input_sets, "flush_bytes", num(p->flush_bytes));
}

/* The facts' limiter is one of the profiler's literals (a pointer, not a copy). */
static const char *limiter_literal(const char *s) {
    static const char *const known[] = {"registers", "shared memory", "block size",
                                        "blocks per multiprocessor"};
    for (size_t i = 0; s && i < sizeof known / sizeof *known; i++)
        if (!strcmp(s, known[i])) return known[i];
    return NULL;
}

static void prof_from(const json_t *j, sg_prof_result *p) {
    memset(p, 0, sizeof *p);
    timing_from(json_object_get(j, "baseline"), &p->baseline);
    timing_from(json_object_get(j, "candidate"), &p->candidate);
    const json_t *s = json_object_get(j, "speedup");
    p->speedup.speedup = getnum(s, "speedup");
    p->speedup.band = getnum(s, "band");
    p->speedup.verdict = (sg_cmp)getint(s, "verdict");
    const json_t *f = json_object_get(j, "facts");
    p->facts.have = json_is_true(json_object_get(f, "have"));
    p->facts.registers = getint(f, "registers");
    p->facts.shared_bytes = getint(f, "shared_bytes");
    p->facts.local_bytes = getint(f, "local_bytes");
    p->facts.occupancy = getnum(f, "occupancy");
    p->facts.occupancy_limiter = limiter_literal(json_string_value(json_object_get(f, "limiter")));
    const json_t *r = json_object_get(j, "roof");
    p->roof.have = json_is_true(json_object_get(r, "have"));
    p->roof.bytes = getnum(r, "bytes");
    p->roof.flops = getnum(r, "flops");
    p->roof.peak_gbs = getnum(r, "peak_gbs");
    p->roof.peak_gflops = getnum(r, "peak_gflops");
    getstr(r, "peak", p->roof.peak, sizeof p->roof.peak);
    getstr(r, "bw_source", p->roof.bw_source, sizeof p->roof.bw_source);
    getstr(j, "facts_text", p->facts_text, sizeof p->facts_text);
    getstr(j, "metrics", p->metrics, sizeof p->metrics);
    p->wall_ms = getnum(j, "wall_ms");
    p->device_ms = getnum(j, "device_ms");
    sg_val_verdict v = SG_VAL_CRASH;
    const char *vs = json_string_value(json_object_get(j, "verdict"));
    if (vs && sg_val_verdict_parse(vs, &v) < 0) v = SG_VAL_CRASH;
    p->verdict = v;
    getstr(j, "message", p->message, sizeof p->message);
    p->input_sets = getint(j, "input_sets");
    p->flush_bytes = getnum(j, "flush_bytes");
}

json_t *sg_pool_result_to_json(const sg_pool_result *r) {
    json_t *j = json_pack("{s:s,s:b,s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:i}", "end",
                          sg_pool_end_name(r->end), "pass", r->pass, "verdict", r->verdict,
                          "message", r->message, "compile_ms", num(r->compile_ms), "run_ms",
                          num(r->run_ms), "base_ns", num(r->base_ns), "cand_ns", num(r->cand_ns),
                          "speedup", num(r->speedup), "noise", num(r->noise), "runs", r->runs);
    if (!j) { /* a message that is not UTF-8 (a compiler log can hold anything) */
        sg_pool_result clean = *r;
        snprintf(clean.message, sizeof clean.message, "(a message that is not UTF-8 text)");
        snprintf(clean.verdict, sizeof clean.verdict, "%s", "error");
        if (sg_utf8_bad_at(r->verdict, strlen(r->verdict)) < 0)
            snprintf(clean.verdict, sizeof clean.verdict, "%s", r->verdict);
        return sg_pool_result_to_json(&clean);
    }
    if (r->val) {
        json_t *v = sg_val_result_to_json(r->val);
        if (v) json_object_set_new(j, "val", v);
    }
    if (r->prof) {
        json_t *p = prof_json(r->prof);
        if (p) json_object_set_new(j, "prof", p);
    }
    return j;
}

int sg_pool_result_from_json(const json_t *j, sg_pool_result *r, sg_val_result *vr,
                             sg_prof_result *pr, sg_err *err) {
    memset(r, 0, sizeof *r);
    if (!json_is_object(j)) return sg_errf(err, "result: expected an object");
    const char *verdict = json_string_value(json_object_get(j, "verdict"));
    if (!verdict) return sg_errf(err, "result: no \"verdict\"");
    snprintf(r->verdict, sizeof r->verdict, "%s", verdict);
    r->pass = json_is_true(json_object_get(j, "pass"));
    getstr(j, "message", r->message, sizeof r->message);
    r->compile_ms = getnum(j, "compile_ms");
    r->run_ms = getnum(j, "run_ms");
    r->base_ns = getnum(j, "base_ns");
    r->cand_ns = getnum(j, "cand_ns");
    r->speedup = getnum(j, "speedup");
    r->noise = getnum(j, "noise");
    r->runs = getint(j, "runs");
    const json_t *v = json_object_get(j, "val");
    if (json_is_object(v)) {
        sg_val_result_from_json(v, vr);
        r->val = vr;
    }
    const json_t *p = json_object_get(j, "prof");
    if (json_is_object(p)) {
        prof_from(p, pr);
        r->prof = pr;
    }
    return 0;
}

json_t *sg_pool_prof_opts_to_json(const sg_prof_opts *o) {
    json_t *j =
        json_pack("{s:i,s:i,s:b,s:i,s:i,s:i,s:f}", "warmup", o->warmup, "input_sets", o->input_sets,
                  "flush_cache", o->flush_cache, "min_runs", o->stab.min_runs, "max_runs",
                  o->stab.max_runs, "window", o->stab.window, "tol", o->stab.tol);
    if (j && o->race.on)
        json_object_set_new(j, "race",
                            json_pack("{s:i,s:f,s:f}", "min_runs", o->race.min_runs, "best",
                                      o->race.best, "target", o->race.target));
    return j;
}

/* "race": absent (an older parent) or an object; racing is off unless given. */
static int race_from_json(const json_t *j, sg_race *r, sg_err *err) {
    const json_t *v = json_object_get(j, "race");
    r->on = 0;
    if (!v || json_is_null(v)) return 0;
    if (!json_is_object(v)) return sg_errf(err, "\"prof.race\": expected an object");
    r->on = 1;
    const json_t *m = json_object_get(v, "min_runs"), *b = json_object_get(v, "best"),
                 *t = json_object_get(v, "target");
    if (m && (!json_is_integer(m) || json_integer_value(m) < 2 || json_integer_value(m) > 100000))
        return sg_errf(err, "\"prof.race.min_runs\": expected an integer 2..100000");
    if ((b && !(json_is_number(b) && json_number_value(b) >= 0)) ||
        (t && !(json_is_number(t) && json_number_value(t) >= 0)))
        return sg_errf(err, "\"prof.race\": best and target must be numbers >= 0");
    if (m) r->min_runs = (int)json_integer_value(m);
    if (b) r->best = json_number_value(b);
    if (t) r->target = json_number_value(t);
    return 0;
}

static int get_range(const json_t *j, const char *k, int lo, int hi, int *out, sg_err *err) {
    const json_t *v = json_object_get(j, k);
    if (!v) return 0;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return sg_errf(err, "\"prof.%s\": expected an integer %d..%d", k, lo, hi);
    *out = (int)json_integer_value(v);
    return 0;
}

int sg_pool_prof_opts_from_json(const json_t *j, sg_prof_opts *o, sg_err *err) {
    sg_prof_opts_default(o);
    if (!j || json_is_null(j)) return 0;
    if (!json_is_object(j)) return sg_errf(err, "\"prof\": expected an object");
    if (get_range(j, "warmup", 0, 1000, &o->warmup, err) < 0 ||
        get_range(j, "input_sets", 1, 64, &o->input_sets, err) < 0 ||
        get_range(j, "min_runs", 1, 100000, &o->stab.min_runs, err) < 0 ||
        get_range(j, "max_runs", 1, 100000, &o->stab.max_runs, err) < 0 ||
        get_range(j, "window", 1, 100000, &o->stab.window, err) < 0)
        return -1;
    const json_t *f = json_object_get(j, "flush_cache");
    if (f && !json_is_boolean(f)) return sg_errf(err, "\"prof.flush_cache\": expected a boolean");
    if (f) o->flush_cache = json_is_true(f);
    const json_t *t = json_object_get(j, "tol");
    if (t && (!json_is_number(t) || !(json_number_value(t) > 0 && json_number_value(t) < 1)))
        return sg_errf(err, "\"prof.tol\": expected a number between 0 and 1");
    if (t) o->stab.tol = json_number_value(t);
    if (o->stab.min_runs > o->stab.max_runs)
        return sg_errf(err, "\"prof\": min_runs %d is above max_runs %d", o->stab.min_runs,
                       o->stab.max_runs);
    return race_from_json(j, &o->race, err);
}
