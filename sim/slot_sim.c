/* Simulated slots: each job is a timer on the loop; its end reports a drawn (or given)
 * outcome to the pool. */
#include "sim/sim.h"

#include "common/buf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sim_slot {
    sg_sim_slots *owner;
    int index;
    uint64_t timer;
    sg_pool_result r;
    sg_val_result vr; /* what r.val / r.prof point to, as real slots report them */
    sg_prof_result pr;
} sim_slot;

struct sg_sim_slots {
    sg_loop *loop;
    sg_pool *pool;
    sg_sim_slot_model m;
    uint64_t rng;
    int n;
    sim_slot *s;
};

static uint64_t next(uint64_t *x) { /* splitmix64 */
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double uniform(uint64_t *x) { return ((double)(next(x) >> 11) + 0.5) / 9007199254740992.0; }

/* A lognormal draw with the given mean and coefficient of variation. */
static double lognormal(uint64_t *x, double mean, double cv) {
    if (cv <= 0) return mean;
    double s2 = log(1 + cv * cv), mu = log(mean) - s2 / 2;
    double z = sqrt(-2 * log(uniform(x))) * cos(2 * M_PI * uniform(x));
    return exp(mu + sqrt(s2) * z);
}

sg_sim_slots *sg_sim_slots_new(sg_loop *loop, const sg_sim_slot_model *m, int nslots) {
    sg_sim_slots *s = sg_xcalloc(1, sizeof *s);
    s->loop = loop;
    s->m = *m;
    s->rng = m->seed ? m->seed : 1;
    s->n = nslots;
    s->s = sg_xcalloc((size_t)nslots, sizeof *s->s);
    for (int i = 0; i < nslots; i++) s->s[i] = (sim_slot){.owner = s, .index = i};
    return s;
}

void sg_sim_slots_bind(sg_sim_slots *s, sg_pool *p) { s->pool = p; }

void sg_sim_slots_free(sg_sim_slots *s) {
    if (!s) return;
    for (int i = 0; i < s->n; i++)
        if (s->s[i].timer) sg_loop_timer_cancel(s->loop, s->s[i].timer);
    free(s->s);
    free(s);
}

static void job_end(sg_loop *loop, void *arg) {
    (void)loop;
    sim_slot *ss = arg;
    ss->timer = 0;
    sg_pool_result r = ss->r;
    sg_pool_slot_done(ss->owner->pool, ss->index, &r);
}

/* A candidate from the LLM model ("#define SIM_Q Q" and "#define SIM_ID N" in its source):
 * its outcome follows its quality, drawn from (seed, N) so validation and timing agree. 0
 * when not such a source. */
static int quality_outcome(sg_sim_slots *s, const sg_pool_job *job, sg_pool_result *r) {
    const char *src = job->work.candidate;
    static const char qtag[] = "#define SIM_Q ", itag[] = "#define SIM_ID ";
    const char *qa = src ? strstr(src, qtag) : NULL, *ia = src ? strstr(src, itag) : NULL;
    if (!qa || !ia) return 0;
    qa += sizeof qtag - 1;
    ia += sizeof itag - 1;
    char *qe, *ie; /* strtod and strtoull: sscanf's %lf and %llu, at a fraction of its cost */
    double q = strtod(qa, &qe);
    unsigned long long id = strtoull(ia, &ie, 10);
    if (qe == qa || ie == ia) return 0;
    uint64_t rng = s->m.seed * 0x9e3779b97f4a7c15ULL ^ id * 0xbf58476d1ce4e5b9ULL;
    double u1 = uniform(&rng), u2 = uniform(&rng);
    const sg_sim_slot_model *m = &s->m;
    if (u1 < m->p_compile_error * (1 - q)) {
        snprintf(r->verdict, sizeof r->verdict, "compile_error");
        snprintf(r->message, sizeof r->message, "error: the simulated compiler refused it");
    } else if (u2 < m->p_wrong * (1 - q)) {
        snprintf(r->verdict, sizeof r->verdict, "mismatch");
        snprintf(r->message, sizeof r->message, "output y differs from the reference");
    } else {
        r->pass = 1;
        snprintf(r->verdict, sizeof r->verdict, "pass");
        r->speedup =
            pow(m->max_speedup > 1 ? m->max_speedup : 1, q) * lognormal(&rng, 1, m->speedup_cv);
    }
    return 1;
}

/* The validation and timing results a real slot would report, from the drawn outcome. */
static void as_val(sg_pool_result *r, sg_val_result *v) {
    memset(v, 0, sizeof *v);
    v->first_bad = -1;
    if (sg_val_verdict_parse(r->verdict, &v->verdict) < 0) v->verdict = SG_VAL_MISMATCH;
    snprintf(v->message, sizeof v->message, "%s", r->message);
    if (v->verdict == SG_VAL_COMPILE_ERROR) snprintf(v->detail, sizeof v->detail, "%s", r->message);
    v->compile_ms = r->compile_ms;
    v->run_ms = r->run_ms;
    r->val = v;
}

static void as_prof(sg_pool_result *r, sg_prof_result *p) {
    memset(p, 0, sizeof *p);
    p->baseline.median_ns = r->base_ns;
    p->baseline.runs = r->runs;
    if (r->cand_ns > 0) {
        p->candidate.median_ns = r->cand_ns;
        p->candidate.runs = r->runs;
        p->speedup.speedup = r->speedup;
        p->speedup.band = r->noise;
        p->speedup.verdict = r->speedup > 1 + r->noise   ? SG_CMP_FASTER
                             : r->speedup < 1 - r->noise ? SG_CMP_SLOWER
                                                         : SG_CMP_SAME;
    }
    p->verdict = SG_VAL_PASS;
    r->prof = p;
}

static int sim_start(void *impl, int slot, const sg_pool_job *job, sg_err *err) {
    sg_sim_slots *s = impl;
    if (slot < 0 || slot >= s->n) return sg_errf(err, "sim: no slot %d", slot);
    sim_slot *ss = &s->s[slot];
    const sg_sim_job *given = job->work.model;
    int kind = job->work.kind;
    double service = given && given->service_s > 0
                         ? given->service_s
                         : lognormal(&s->rng, s->m.service_s[kind], s->m.cv);
    memset(&ss->r, 0, sizeof ss->r);
    sg_pool_result q;
    memset(&q, 0, sizeof q);
    int modelled = !given && quality_outcome(s, job, &q);
    if (kind == SG_POOL_VALIDATE) {
        if (modelled)
            ss->r = q;
        else if (!given && !job->work.candidate) /* the baseline is right */
            ss->r.pass = 1;
        else
            ss->r.pass = given ? given->pass : uniform(&s->rng) < s->m.pass_rate;
        ss->r.run_ms = service * 1000;
    } else {
        ss->r.pass = 1;
        ss->r.speedup =
            modelled ? q.speedup
            : given && given->speedup > 0
                ? given->speedup
                : lognormal(&s->rng, s->m.speedup_mean > 0 ? s->m.speedup_mean : 1, 0.3);
        if (!given && !job->work.candidate) ss->r.speedup = 0; /* the baseline alone */
        ss->r.base_ns = 1e6;
        ss->r.cand_ns = ss->r.speedup > 0 ? ss->r.base_ns / ss->r.speedup : 0;
        ss->r.noise = 0.02;
        ss->r.runs = 20;
    }
    if (!ss->r.verdict[0])
        snprintf(ss->r.verdict, sizeof ss->r.verdict, "%s", ss->r.pass ? "pass" : "mismatch");
    if (kind == SG_POOL_VALIDATE)
        as_val(&ss->r, &ss->vr);
    else
        as_prof(&ss->r, &ss->pr);
    ss->timer = sg_loop_timer(s->loop, (int64_t)(service * SG_SEC), job_end, ss);
    return 0;
}

static void sim_kill(void *impl, int slot) {
    sg_sim_slots *s = impl;
    if (slot < 0 || slot >= s->n || !s->s[slot].timer) return;
    sg_loop_timer_cancel(s->loop, s->s[slot].timer);
    s->s[slot].timer = 0;
}

const sg_pool_slot_ops sg_sim_slot_ops = {sim_start, sim_kill, NULL};
