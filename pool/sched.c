/* The scheduler: a queue of validate and profile jobs, slots with roles, priorities,
 * cancel, the elastic split and its measurements. Everything runs on the loop; time comes
 * from sg_loop_now only (pool.h states the rules). */
#include "pool/pool.h"

#include "common/assert.h"
#include "common/buf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NCLASS = 4 }; /* final of a live iteration, newest fork, older forks, ended */

typedef struct qjob {
    sg_pool_job j;
    int iter;      /* index of its iteration in sg_pool.it (entries are never removed) */
    long wait_idx; /* its sample in sg_pool.wait (a re-queued job updates it): -1 none */
    int stale;     /* running, marked by sg_pool_preempt: yields its slot when a job waits */
    sg_pool_done_fn done;
    void *arg;
} qjob;

typedef struct slot {
    sg_pool_slot_desc d;
    sg_pool_role role;
    int offline; /* its implementation lost it: it takes no job until it is back */
    qjob *job;   /* running, or NULL */
} slot;

typedef struct iter {
    uint64_t id;
    int ended;
    uint64_t newest_fork; /* seq of its newest fork job, 0: none */
} iter;

struct sg_pool {
    sg_loop *loop;
    sg_pool_config cfg;
    const sg_pool_slot_ops *ops;
    void *impl;
    int n, ndev;
    slot *s;
    qjob **q; /* queued, in arrival order */
    int nq, capq;
    iter *it;
    int nit, capit;
    int *itx; /* open-addressed index of it[] by id: capitx entries, -1 empty */
    int capitx;
    int online_role[SG_POOL_NROLES]; /* online slots per role, kept as they change */
    int nonline, nbusy;              /* online slots, and those of them running a job */
    int nqueued[SG_POOL_NROLES], nrunning[SG_POOL_NROLES]; /* jobs by kind (work_of) */
    uint64_t next_id, next_seq;
    int target_v, prev_v; /* validate slots the split wants, and wanted before */
    int64_t dwell;        /* grows when splits reverse each other */
    int64_t t0, last_split, acc_t;
    int splits, ntasks;
    int last_task[NCLASS];
    double arrivals[SG_POOL_NROLES]; /* decayed counts */
    int64_t arrivals_t[SG_POOL_NROLES];
    double service[SG_POOL_NROLES];
    int nservice[SG_POOL_NROLES];
    int64_t avail_ns[SG_POOL_NROLES]; /* exact: a double sum of ns rounds past 2^53 */
    double busy_ns[SG_POOL_NROLES];
    double queued_avail_ns, queued_busy_ns; /* slot time while jobs waited, and its busy part */
    uint64_t jobs[SG_POOL_NROLES], dropped[SG_POOL_NROLES], killed[SG_POOL_NROLES];
    uint64_t preempted[SG_POOL_NROLES];
    int nstale; /* running jobs marked stale */
    double *wait[SG_POOL_NROLES];
    size_t nwait[SG_POOL_NROLES], capwait[SG_POOL_NROLES];
    uint64_t dispatch_timer;
    int freeing;
    int lending; /* dispatch is lending slots to the other kind of job */
    void (*on_event)(void *arg, json_t *ev);
    void *ev_arg;
};

static const char *const ROLE_NAMES[SG_POOL_NROLES] = {
#define SG_POOL_ROLE_NAME(id, name) [SG_POOL_##id] = name,
    SG_POOL_ROLES(SG_POOL_ROLE_NAME)
#undef SG_POOL_ROLE_NAME
};

const char *sg_pool_role_name(sg_pool_role r) {
    return (unsigned)r < SG_POOL_NROLES ? ROLE_NAMES[r] : "?";
}

int sg_pool_role_parse(const char *name, sg_pool_role *out) {
    for (int i = 0; i < SG_POOL_NROLES; i++)
        if (!strcmp(name, ROLE_NAMES[i])) return *out = (sg_pool_role)i, 0;
    return -1;
}

const char *sg_pool_end_name(sg_pool_end e) {
    static const char *const names[] = {"done", "dropped", "killed", "failed"};
    return e <= SG_POOL_FAILED ? names[e] : "?";
}

void sg_pool_config_default(sg_pool_config *c) {
    memset(c, 0, sizeof *c);
    c->mode = SG_POOL_ELASTIC;
    c->dwell_ns = 5 * SG_SEC;
    c->hysteresis = 0.2;
    c->rate_window_ns = 60 * SG_SEC;
    c->service_init_s[SG_POOL_VALIDATE] = 1;
    c->service_init_s[SG_POOL_PROFILE] = 3;
}

int sg_pool_config_parse(const char *str, sg_pool_config *c, sg_err *err) {
    int v, p, used = 0;
    if (!strcmp(str, "elastic")) {
        c->mode = SG_POOL_ELASTIC;
        return 0;
    }
    if (sscanf(str, "static:%d/%d%n", &v, &p, &used) == 2 && str[used] == '\0' && v >= 0 &&
        p >= 0 && v + p > 0) {
        c->mode = SG_POOL_STATIC;
        c->static_validate = v;
        c->static_profile = p;
        return 0;
    }
    return sg_errf(err, "--pools '%s': expected elastic or static:V/P (e.g. static:1/1)", str);
}

int sg_pool_by_distance_parse(const char *s, sg_pool_config *c, sg_err *err) {
    static const char *const names[] = {"near", "off", "far"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, names[i])) return c->by_distance = i - 1, 0;
    return sg_errf(err, "--by-distance '%s': expected far, near or off", s);
}

static double now_s(const sg_pool *p) { return (double)(sg_loop_now(p->loop) - p->t0) / SG_SEC; }

/* Only with a listener: EMIT builds the fields only then. */
static void emit(sg_pool *p, const char *ev, json_t *fields) {
    if (!fields) return; /* json_pack refused a field (text that is not UTF-8) */
    json_object_set_new(fields, "ev", json_string(ev));
    json_object_set_new(fields, "t_s", json_real(now_s(p)));
    p->on_event(p->ev_arg, fields);
}

/* An event whose fields json_pack builds from the arguments, only when someone listens. */
#define EMIT(p, ev, ...)                                                                           \
    do {                                                                                           \
        if ((p)->on_event) emit(p, ev, json_pack(__VA_ARGS__));                                    \
    } while (0)

/* ---- iterations ---- */
static size_t itx_home(uint64_t id, int cap) {
    id ^= id >> 33; /* a 64-bit mix (murmur3's finaliser): ids are often sequential */
    id *= 0xff51afd7ed558ccdULL;
    id ^= id >> 33;
    return (size_t)id & (size_t)(cap - 1);
}

/* The slot of `id` in the index: its entry, or the empty one where it goes. */
static size_t itx_find(const sg_pool *p, uint64_t id) {
    size_t h = itx_home(id, p->capitx);
    while (p->itx[h] >= 0 && p->it[p->itx[h]].id != id) h = (h + 1) & (size_t)(p->capitx - 1);
    return h;
}

/* Index sized for capit entries at most half full. */
static void itx_rebuild(sg_pool *p) {
    free(p->itx);
    p->capitx = 2 * p->capit;
    p->itx = sg_xmalloc((size_t)p->capitx * sizeof *p->itx);
    for (int i = 0; i < p->capitx; i++) p->itx[i] = -1;
    for (int i = 0; i < p->nit; i++) p->itx[itx_find(p, p->it[i].id)] = i;
}

static iter *find_iter(sg_pool *p, uint64_t id, int add) {
    size_t h = p->capitx ? itx_find(p, id) : 0;
    if (p->capitx && p->itx[h] >= 0) return &p->it[p->itx[h]];
    if (!add) return NULL;
    if (p->nit == p->capit) {
        p->capit = p->capit ? 2 * p->capit : 16;
        p->it = sg_xrealloc(p->it, (size_t)p->capit * sizeof *p->it);
        itx_rebuild(p);
        h = itx_find(p, id);
    }
    p->it[p->nit] = (iter){.id = id};
    p->itx[h] = p->nit;
    return &p->it[p->nit++];
}

static int job_class(sg_pool *p, const qjob *q) {
    const iter *it = &p->it[q->iter];
    if (it->ended) return 3;
    if (q->j.origin == SG_POOL_FINAL) return 0;
    return q->j.seq == it->newest_fork ? 1 : 2;
}

/* ---- time accounting ---- */
/* Slot time up to now: per role, and while jobs were waiting (utilisation under load).
 * Called before anything changes the roles, the queue or which slots are busy. */
static void account(sg_pool *p) {
    int64_t now = sg_loop_now(p->loop);
    int64_t dns = now - p->acc_t;
    double dt = (double)dns;
    for (int r = 0; r < SG_POOL_NROLES; r++) p->avail_ns[r] += dns * p->online_role[r];
    if (p->nq > 0) {
        p->queued_avail_ns += dt * p->nonline;
        p->queued_busy_ns += dt * p->nbusy;
    }
    /* time only moves forward; the counts kept as slots change stay in range */
    SG_ASSERT(dns >= 0 && p->nbusy >= 0 && p->nbusy <= p->nonline && p->nonline <= p->n);
    p->acc_t = now;
}

/* The counts account() reads: call with a slot's state as it was (-1) and as it is (+1). */
static void count_slot(sg_pool *p, const slot *s, int sign) {
    if (s->offline) return;
    p->online_role[s->role] += sign;
    p->nonline += sign;
    p->nbusy += sign * (s->job != NULL);
    if (s->job) p->nrunning[s->job->j.work.kind] += sign;
}

static void decay(sg_pool *p, int r) {
    int64_t now = sg_loop_now(p->loop);
    p->arrivals[r] *= exp(-(double)(now - p->arrivals_t[r]) / (double)p->cfg.rate_window_ns);
    p->arrivals_t[r] = now;
}

/* Arrivals per second: the decayed count over the decayed time it covers (so the first
 * seconds after the start are not underestimated). */
static double rate(sg_pool *p, int r) {
    decay(p, r);
    double tau = (double)p->cfg.rate_window_ns / SG_SEC;
    double age = (double)(sg_loop_now(p->loop) - p->t0) / SG_SEC;
    double span = tau * (1 - exp(-age / tau));
    return p->arrivals[r] / fmax(span, tau / 4); /* a few first arrivals are no rate yet */
}

static double service_s(const sg_pool *p, int r) {
    return p->nservice[r] ? p->service[r] : p->cfg.service_init_s[r];
}

/* ---- ending a job ---- */
static void finish(sg_pool *p, qjob *q, sg_pool_result *r, sg_pool_end how) {
    account(p);
    int kind = q->j.work.kind;
    q->j.ended_ns = sg_loop_now(p->loop);
    r->end = how;
    if (q->stale) p->nstale--, q->stale = 0;
    if (how == SG_POOL_DROPPED) p->dropped[kind]++;
    if (how == SG_POOL_KILLED) p->killed[kind]++;
    if (how == SG_POOL_DROPPED || how == SG_POOL_KILLED)
        snprintf(r->verdict, sizeof r->verdict, "%s", sg_pool_end_name(how));
    SG_ASSERT(q->j.slot < p->n);
    if (q->j.slot >= 0) {
        SG_ASSERT(p->s[q->j.slot].job == q); /* a running job is its slot's job */
        double served = (double)(q->j.ended_ns - q->j.started_ns);
        count_slot(p, &p->s[q->j.slot], -1);
        p->s[q->j.slot].job = NULL; /* consistent before anyone hears of it */
        count_slot(p, &p->s[q->j.slot], +1);
        p->busy_ns[p->s[q->j.slot].role] += served;
        if (how == SG_POOL_DONE) { /* service-time average: finished jobs only */
            double x = served / SG_SEC;
            p->service[kind] = p->nservice[kind] ? 0.7 * p->service[kind] + 0.3 * x : x;
            p->nservice[kind]++;
            p->jobs[kind]++;
        }
        EMIT(p, "job_end", "{s:i,s:s,s:s,s:s,s:I,s:i,s:I,s:s,s:s,s:f}", "slot", q->j.slot,
             "slot_name", p->s[q->j.slot].d.name, "role", sg_pool_role_name(p->s[q->j.slot].role),
             "kind", sg_pool_role_name(kind), "job", (json_int_t)q->j.id, "task", q->j.task,
             "iteration", (json_int_t)q->j.iteration, "end", sg_pool_end_name(how), "verdict",
             r->verdict, "service_s", served / SG_SEC);
    }
    q->done(q->arg, &q->j, r);
    free(q);
}

static void remove_queued(sg_pool *p, int i) {
    SG_ASSERT(i >= 0 && i < p->nq && p->q[i]->j.slot == -1); /* a queued job has no slot */
    p->nqueued[p->q[i]->j.work.kind]--;
    memmove(&p->q[i], &p->q[i + 1], (size_t)(p->nq - i - 1) * sizeof *p->q);
    p->nq--;
}

static void schedule_dispatch(sg_pool *p);

/* ---- the split ---- */
/* Slots of a role that can take jobs (offline ones cannot). */
static int count_role(const sg_pool *p, sg_pool_role r) { return p->online_role[r]; }

static int count_online(const sg_pool *p) { return p->nonline; }

static void work_of(const sg_pool *p, int queued[SG_POOL_NROLES], int running[SG_POOL_NROLES]) {
    for (int r = 0; r < SG_POOL_NROLES; r++) { /* kept as jobs come, start and end */
        SG_ASSERT(p->nqueued[r] >= 0 && p->nqueued[r] <= p->nq && p->nrunning[r] >= 0 &&
                  p->nrunning[r] <= p->nbusy);
        queued[r] = p->nqueued[r];
        running[r] = p->nrunning[r];
    }
}

/* An upper bound on sg_pool_split_cost(v, n, ...) in O(1): an M/M/c wait is at most
 * s / (c - a) (the chance to wait is at most 1). INFINITY where a role cannot keep up. The
 * caller leaves a relative margin far above the recurrence's rounding (~n ulp). */
static double wait_bound(int v, int n, const double lambda[SG_POOL_NROLES],
                         const double svc[SG_POOL_NROLES]) {
    int c[SG_POOL_NROLES] = {v, n - v};
    double sum = 0, total = 0;
    for (int r = 0; r < SG_POOL_NROLES; r++) {
        if (lambda[r] <= 0) continue;
        total += lambda[r];
        if (svc[r] <= 0) continue;
        double a = lambda[r] * svc[r];
        if (c[r] <= 0 || a >= c[r]) return INFINITY;
        sum += lambda[r] * (svc[r] / (c[r] - a));
    }
    return total > 0 ? sum / total : 0;
}

/* Decide the split (elastic mode). The load of a role is its decayed arrival rate plus
 * its backlog beyond one job a slot, to be drained within a quarter of the rate window
 * (that is what reacts to a burst; the rate itself is smooth on purpose). A split that
 * undoes the previous one doubles the dwell (up to 16 times the configured one). */
static void decide_split(sg_pool *p) {
    if (p->cfg.mode != SG_POOL_ELASTIC) return;
    int n = count_online(p); /* the split is over the slots that can take jobs */
    if (n == 0) return;
    if (p->target_v > n) p->target_v = n;
    int queued[2], running[2], need[2];
    work_of(p, queued, running);
    double lambda[2], svc[2];
    for (int r = 0; r < SG_POOL_NROLES; r++) {
        need[r] = queued[r] + running[r] > 0;
        int slots = r == SG_POOL_VALIDATE ? p->target_v : n - p->target_v;
        double backlog = queued[r] > slots ? queued[r] - slots : 0;
        lambda[r] = rate(p, r) + backlog / ((double)p->cfg.rate_window_ns / SG_SEC / 4);
        svc[r] = service_s(p, r);
    }
    int starved =
        (need[SG_POOL_VALIDATE] && p->target_v == 0) || (need[SG_POOL_PROFILE] && p->target_v == n);
    int64_t now = sg_loop_now(p->loop);
    if (!starved && now - p->last_split < p->dwell)
        return; /* dwell: roles must not flap (known before the search, which is the cost) */
    /* No split can be worth it when the current one's wait is within the noise margin
     * below (every wait is >= 0): then skip the O(n) search (most dispatches, at scale). */
    double noise = 0.05 * fmin(svc[0], svc[1]);
    if (!starved && (wait_bound(p->target_v, n, lambda, svc) <= noise * (1 - 1e-9) ||
                     sg_pool_split_cost(p->target_v, n, lambda, svc) <= noise))
        return;
    double best_cost, cur_cost;
    int v = sg_pool_best_split_from(n, lambda, svc, need, p->target_v, &best_cost, &cur_cost);
    if (v == p->target_v) return;
    const char *reason;
    if (starved) /* at once: a role with work and no slot would wait forever */
        reason = p->target_v == 0 ? "validate jobs but no validate slot"
                                  : "profile jobs but no profile slot";
    else if (best_cost < cur_cost * (1 - p->cfg.hysteresis) && cur_cost - best_cost > noise)
        reason = "lower expected wait"; /* by a fraction, and by more than noise */
    else
        return;
    /* a wait only where the split has one: an overloaded role's is none (null), not the
     * search's penalty (1e9 and more) */
    EMIT(p, "pool_split", "{s:i,s:i,s:i,s:i,s:s,s:f,s:f,s:f,s:f,s:o,s:o,s:i,s:i}", "validate", v,
         "profile", n - v, "was_validate", p->target_v, "was_profile", n - p->target_v, "reason",
         reason, "rate_validate", lambda[0], "rate_profile", lambda[1], "service_validate_s",
         svc[0], "service_profile_s", svc[1], "wait_before_s",
         isinf(cur_cost) || cur_cost >= 1e9 ? json_null() : json_real(cur_cost), "wait_after_s",
         isinf(best_cost) || best_cost >= 1e9 ? json_null() : json_real(best_cost),
         "queued_validate", queued[0], "queued_profile", queued[1]);
    if (v == p->prev_v && p->dwell < 16 * p->cfg.dwell_ns) p->dwell *= 2; /* a reversal */
    p->prev_v = p->target_v;
    p->target_v = v;
    p->last_split = now;
    p->splits++;
}

/* Give idle slots the roles the split wants; busy slots change when their job ends. A
 * slot that becomes a profile slot is preferably one whose device is idle. */
static void apply_split(sg_pool *p) {
    if (p->cfg.mode != SG_POOL_ELASTIC) return; /* static roles never change */
    int n = count_online(p), v = p->target_v < n ? p->target_v : n;
    int want[2] = {v, n - v};
    int have[2] = {count_role(p, SG_POOL_VALIDATE), count_role(p, SG_POOL_PROFILE)};
    for (int from = 0; from < SG_POOL_NROLES; from++) {
        int to = 1 - from;
        for (int pass = 0; pass < 2 && have[from] > want[from]; pass++)
            for (int i = 0; i < p->n && have[from] > want[from]; i++) {
                slot *s = &p->s[i];
                if (s->role != (sg_pool_role)from || s->job || s->offline) continue;
                if (pass == 0 && to == SG_POOL_PROFILE) { /* first: slots on idle devices */
                    int busy = 0;
                    for (int k = 0; k < p->n; k++)
                        busy |= p->s[k].d.device == s->d.device && p->s[k].job;
                    if (busy) continue;
                }
                account(p);
                count_slot(p, s, -1);
                s->role = (sg_pool_role)to;
                count_slot(p, s, +1);
                if (p->ops->role) p->ops->role(p->impl, i, s->role);
                have[from]--;
                have[to]++;
                SG_ASSERT(have[from] >= 0 && have[to] <= n);
            }
    }
}

/* ---- choosing and starting jobs ---- */
/* The queued job of `kind` to run next (index in p->q), or -1. */
static int pick(sg_pool *p, sg_pool_role kind) {
    if (p->cfg.fifo) { /* no priorities: the first to arrive goes first */
        for (int i = 0; i < p->nq; i++)
            if (p->q[i]->j.work.kind == kind) return i;
        return -1;
    }
    int best = -1, bc = 0, brank = 0;
    for (int i = 0; i < p->nq; i++) {
        qjob *q = p->q[i];
        if (q->j.work.kind != kind) continue;
        int c = job_class(p, q);
        if (p->cfg.by_value && c == 2) c = 1; /* every live fork one class, by value */
        int nt = p->ntasks > 0 ? p->ntasks : 1;
        int rank = ((q->j.task - p->last_task[c] - 1) % nt + nt) % nt; /* turns */
        if (p->cfg.by_value && c == 1) rank = 0;
        if (best >= 0) {
            qjob *b = p->q[best];
            if (c != bc ? c > bc
                : p->cfg.by_distance && q->j.work.distance != b->j.work.distance
                    ? (p->cfg.by_distance > 0) == (q->j.work.distance < b->j.work.distance)
                : rank != brank ? rank > brank
                : p->cfg.by_value && c == 1 && q->j.work.value != b->j.work.value
                    ? q->j.work.value < b->j.work.value
                : c == 2 ? q->j.seq < b->j.seq /* older: newest */
                         : q->j.seq > b->j.seq)
                continue;
        }
        best = i;
        bc = c;
        brank = rank;
    }
    return best;
}

static int device_busy(const sg_pool *p, int dev, int *profiling) {
    int busy = 0;
    *profiling = 0;
    for (int i = 0; i < p->n; i++)
        if (p->s[i].d.device == dev && p->s[i].job) {
            busy++;
            if (p->s[i].job->j.work.kind == SG_POOL_PROFILE) *profiling = 1;
        }
    return busy;
}

static void start(sg_pool *p, int si, int qi) {
    account(p);
    qjob *q = p->q[qi];
    remove_queued(p, qi);
    slot *s = &p->s[si];
    /* One job per slot, only on a slot that is online. */
    SG_ASSERT(si >= 0 && si < p->n && !s->job && !s->offline);
    int c = job_class(p, q);
    p->last_task[c] = q->j.task;
    q->j.slot = si;
    q->j.started_ns = sg_loop_now(p->loop);
    count_slot(p, s, -1);
    s->job = q;
    count_slot(p, s, +1);
    int kind = q->j.work.kind;
    double wait = (double)(q->j.started_ns - q->j.queued_ns) / SG_SEC;
    if (q->wait_idx >= 0) { /* re-queued: one sample per job, its whole wait */
        p->wait[kind][q->wait_idx] = wait;
    } else {
        if (p->nwait[kind] == p->capwait[kind]) {
            p->capwait[kind] = p->capwait[kind] ? 2 * p->capwait[kind] : 64;
            p->wait[kind] = sg_xrealloc(p->wait[kind], p->capwait[kind] * sizeof(double));
        }
        q->wait_idx = (long)p->nwait[kind];
        p->wait[kind][p->nwait[kind]++] = wait;
    }
    sg_err err;
    if (p->ops->start(p->impl, si, &q->j, &err) < 0) {
        sg_pool_result r;
        memset(&r, 0, sizeof r);
        snprintf(r.verdict, sizeof r.verdict, "failed");
        snprintf(r.message, sizeof r.message, "%s", err.msg);
        count_slot(p, s, -1);
        s->job = NULL; /* it never ran: no job_start, no job_end */
        count_slot(p, s, +1);
        q->j.slot = -1;
        finish(p, q, &r, SG_POOL_FAILED);
        schedule_dispatch(p);
        return;
    }
    EMIT(p, "job_start", "{s:i,s:s,s:s,s:s,s:I,s:i,s:I,s:s,s:f,s:b,s:s,s:i}", "slot", si,
         "slot_name", s->d.name, "role", sg_pool_role_name(s->role), "kind",
         sg_pool_role_name(kind), "job", (json_int_t)q->j.id, "task", q->j.task, "iteration",
         (json_int_t)q->j.iteration, "origin", q->j.origin == SG_POOL_FINAL ? "final" : "fork",
         "wait_s", wait, "lent", p->lending, "name", q->j.work.name ? q->j.work.name : "",
         "requeued", q->j.requeued);
}

/* Start queued profile jobs on idle slots of `role`: each needs a device to itself. When
 * no such slot sits on an idle device, the device with the fewest running jobs drains
 * (*drain: it starts nothing new) so that the profile job gets it. */
static void dispatch_profile(sg_pool *p, sg_pool_role role, int *drain) {
    for (;;) {
        int qi = pick(p, SG_POOL_PROFILE);
        if (qi < 0) return;
        int chosen = -1, fewest = 1 << 30;
        for (int i = 0; i < p->n; i++) {
            if (p->s[i].role != role || p->s[i].job || p->s[i].offline) continue;
            int prof, busy = device_busy(p, p->s[i].d.device, &prof);
            if (busy == 0) {
                chosen = i;
                break;
            }
            if (role == SG_POOL_PROFILE && !prof && busy < fewest) {
                fewest = busy;
                *drain = p->s[i].d.device;
            }
        }
        if (chosen < 0) return;
        *drain = -1;
        start(p, chosen, qi);
    }
}

/* Start queued validate jobs on idle slots of `role`, on devices not profiling or
 * draining. */
static void dispatch_validate(sg_pool *p, sg_pool_role role, int drain) {
    for (;;) {
        int qi = pick(p, SG_POOL_VALIDATE);
        if (qi < 0) return;
        int chosen = -1;
        for (int i = 0; i < p->n && chosen < 0; i++) {
            int prof;
            if (p->s[i].role != role || p->s[i].job || p->s[i].offline || p->s[i].d.device == drain)
                continue;
            device_busy(p, p->s[i].d.device, &prof);
            if (!prof) chosen = i;
        }
        if (chosen < 0) return;
        start(p, chosen, qi);
    }
}

static void dispatch_once(sg_pool *p) {
    account(p);
    decide_split(p);
    apply_split(p);
    int drain = -1;
    dispatch_profile(p, SG_POOL_PROFILE, &drain);
    dispatch_validate(p, SG_POOL_VALIDATE, drain);
    if (p->cfg.mode != SG_POOL_ELASTIC) return;
    /* Lending (elastic only): a slot idle for want of its own kind of job runs one job of
     * the other kind, so that no slot idles while work waits; its role stays (the split
     * decides roles, lending only fills gaps), and its next job is of its role again. */
    p->lending = 1;
    if (pick(p, SG_POOL_VALIDATE) < 0) dispatch_profile(p, SG_POOL_VALIDATE, &drain);
    if (pick(p, SG_POOL_PROFILE) < 0) dispatch_validate(p, SG_POOL_PROFILE, drain);
    p->lending = 0;
}

static int yield_stale(sg_pool *p);

static void dispatch(sg_pool *p) {
    do dispatch_once(p);
    while (yield_stale(p)); /* a stale job's slot, when work still waits, takes it */
}

static void dispatch_cb(sg_loop *loop, void *arg) {
    (void)loop;
    sg_pool *p = arg;
    p->dispatch_timer = 0;
    dispatch(p);
}

/* Dispatch from the loop, once for any number of changes; a timer (not a deferred call)
 * so that sg_pool_free can take it back. */
static void schedule_dispatch(sg_pool *p) {
    if (p->dispatch_timer || p->freeing) return;
    p->dispatch_timer = sg_loop_timer(p->loop, 0, dispatch_cb, p);
}

/* ---- the public calls ---- */
int sg_pool_new(sg_loop *loop, const sg_pool_config *cfg, const sg_pool_slot_desc *slots,
                int nslots, const sg_pool_slot_ops *ops, void *impl, sg_pool **out, sg_err *err) {
    if (nslots < 1) return sg_errf(err, "pool: no slots");
    if (cfg->mode == SG_POOL_STATIC && (cfg->static_validate < 1 || cfg->static_profile < 1))
        return sg_errf(err,
                       "--pools static:%d/%d: each role needs a slot (static splits do not "
                       "lend slots; elastic ones do)",
                       cfg->static_validate, cfg->static_profile);
    if (cfg->mode == SG_POOL_STATIC && cfg->static_validate + cfg->static_profile != nslots)
        return sg_errf(err, "--pools static:%d/%d: that is %d slots, but there are %d",
                       cfg->static_validate, cfg->static_profile,
                       cfg->static_validate + cfg->static_profile, nslots);
    sg_pool *p = sg_xcalloc(1, sizeof *p);
    p->loop = loop;
    p->cfg = *cfg;
    p->ops = ops;
    p->impl = impl;
    p->n = nslots;
    p->s = sg_xcalloc((size_t)nslots, sizeof *p->s);
    p->t0 = p->acc_t = p->last_split = sg_loop_now(loop);
    for (int r = 0; r < SG_POOL_NROLES; r++) p->arrivals_t[r] = p->t0;
    p->target_v = p->prev_v = cfg->mode == SG_POOL_STATIC ? cfg->static_validate : (nslots + 1) / 2;
    p->dwell = cfg->dwell_ns;
    for (int i = 0; i < nslots; i++) {
        p->s[i].d = slots[i];
        p->s[i].role = i < p->target_v ? SG_POOL_VALIDATE : SG_POOL_PROFILE;
        count_slot(p, &p->s[i], +1);
    }
    *out = p;
    return 0;
}

void sg_pool_on_event(sg_pool *p, void (*fn)(void *arg, json_t *ev), void *arg) {
    p->on_event = fn;
    p->ev_arg = arg;
}

uint64_t sg_pool_submit(sg_pool *p, int task, uint64_t iteration, sg_pool_origin origin,
                        const sg_pool_work *work, sg_pool_done_fn done, void *arg) {
    qjob *q = sg_xcalloc(1, sizeof *q);
    q->j.id = ++p->next_id;
    q->j.task = task;
    q->j.iteration = iteration;
    q->j.origin = origin;
    q->j.seq = ++p->next_seq;
    q->j.work = *work;
    q->j.queued_ns = sg_loop_now(p->loop);
    q->j.slot = -1;
    q->wait_idx = -1;
    q->done = done;
    q->arg = arg;
    if (task >= p->ntasks) p->ntasks = task + 1;
    account(p);
    iter *it = find_iter(p, iteration, 1);
    q->iter = (int)(it - p->it);
    if (origin == SG_POOL_FORK) it->newest_fork = q->j.seq;
    decay(p, work->kind);
    p->arrivals[work->kind] += 1;
    if (p->nq == p->capq) {
        p->capq = p->capq ? 2 * p->capq : 32;
        p->q = sg_xrealloc(p->q, (size_t)p->capq * sizeof *p->q);
    }
    SG_ASSERT(p->nq < p->capq);
    p->q[p->nq++] = q;
    p->nqueued[work->kind]++;
    schedule_dispatch(p);
    return q->j.id;
}

void sg_pool_slot_done(sg_pool *p, int si, sg_pool_result *r) {
    if (si < 0 || si >= p->n || !p->s[si].job) return;
    finish(p, p->s[si].job, r, SG_POOL_DONE);
    schedule_dispatch(p);
}

/* Back into the queue at its place in arrival order (pick() orders by class, turn and
 * seq; the array's order is what fifo mode and the turns' tie-breaks read). */
static void requeue(sg_pool *p, qjob *q) {
    SG_ASSERT(q->j.slot == -1);
    int at = p->nq;
    while (at > 0 && p->q[at - 1]->j.seq > q->j.seq) at--;
    if (p->nq == p->capq) {
        p->capq = p->capq ? 2 * p->capq : 32;
        p->q = sg_xrealloc(p->q, (size_t)p->capq * sizeof *p->q);
    }
    SG_ASSERT(at >= 0 && p->nq < p->capq);
    memmove(&p->q[at + 1], &p->q[at], (size_t)(p->nq - at) * sizeof *p->q);
    p->q[at] = q;
    p->nq++;
    p->nqueued[q->j.work.kind]++;
}

void sg_pool_slot_offline(sg_pool *p, int si, const char *why) {
    if (si < 0 || si >= p->n || p->s[si].offline) return;
    account(p);
    slot *s = &p->s[si];
    count_slot(p, s, -1);
    s->offline = 1;
    EMIT(p, "slot_offline", "{s:i,s:s,s:s}", "slot", si, "slot_name", s->d.name, "reason",
         why ? why : "");
    qjob *q = s->job;
    if (q) { /* its run is lost: busy time, but no service sample and no count */
        int64_t now = sg_loop_now(p->loop);
        p->busy_ns[s->role] += (double)(now - q->j.started_ns);
        s->job = NULL;
        q->j.slot = -1;
        q->j.started_ns = 0;
        q->j.requeued++;
        requeue(p, q);
        EMIT(p, "job_requeue", "{s:i,s:s,s:s,s:I,s:i,s:I,s:i,s:s}", "slot", si, "slot_name",
             s->d.name, "kind", sg_pool_role_name(q->j.work.kind), "job", (json_int_t)q->j.id,
             "task", q->j.task, "iteration", (json_int_t)q->j.iteration, "requeued", q->j.requeued,
             "reason", why ? why : "");
    }
    if (q && q->stale) { /* a stale job is not worth running again */
        p->nstale--;
        q->stale = 0;
        sg_pool_drop_queued(p, q->j.id);
    }
    schedule_dispatch(p);
}

void sg_pool_slot_online(sg_pool *p, int si) {
    if (si < 0 || si >= p->n || !p->s[si].offline) return;
    account(p);
    p->s[si].offline = 0;
    count_slot(p, &p->s[si], +1);
    EMIT(p, "slot_online", "{s:i,s:s}", "slot", si, "slot_name", p->s[si].d.name);
    schedule_dispatch(p);
}

int sg_pool_slot_is_online(const sg_pool *p, int si) {
    return si >= 0 && si < p->n && !p->s[si].offline;
}

sg_pool_role sg_pool_slot_role(const sg_pool *p, int si) {
    return si >= 0 && si < p->n ? p->s[si].role : SG_POOL_VALIDATE;
}

static void cancel_running(sg_pool *p, int si) {
    SG_ASSERT(si >= 0 && si < p->n && p->s[si].job && p->s[si].job->j.slot == si);
    p->ops->kill(p->impl, si);
    sg_pool_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.message, sizeof r.message, "cancelled while running; the worker was killed");
    finish(p, p->s[si].job, &r, SG_POOL_KILLED);
}

/* A job waits and a running job is stale: kill one stale job (the first slot's), so that
 * its slot takes the next job; on a static split only for a job of the slot's role (no
 * other could use it). 1 when one was killed. */
static int yield_stale(sg_pool *p) {
    if (p->nq == 0 || p->nstale == 0) return 0;
    for (int i = 0; i < p->n; i++) {
        qjob *q = p->s[i].job;
        if (!q || !q->stale) continue;
        if (p->cfg.mode == SG_POOL_STATIC && !p->nqueued[p->s[i].role]) continue;
        int kind = q->j.work.kind;
        p->preempted[kind]++;
        EMIT(p, "job_preempt", "{s:i,s:s,s:s,s:I,s:i,s:I,s:i,s:f}", "slot", i, "slot_name",
             p->s[i].d.name, "kind", sg_pool_role_name(kind), "job", (json_int_t)q->j.id, "task",
             q->j.task, "iteration", (json_int_t)q->j.iteration, "queued", p->nq, "ran_s",
             (double)(sg_loop_now(p->loop) - q->j.started_ns) / SG_SEC);
        p->ops->kill(p->impl, i);
        sg_pool_result r;
        memset(&r, 0, sizeof r);
        snprintf(r.message, sizeof r.message,
                 "preempted while running (stale: it yielded its slot); the worker was killed");
        finish(p, q, &r, SG_POOL_KILLED);
        return 1;
    }
    return 0;
}

static void drop_queued(sg_pool *p, int qi) {
    qjob *q = p->q[qi];
    remove_queued(p, qi);
    sg_pool_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.message, sizeof r.message, "cancelled before it ran");
    finish(p, q, &r, SG_POOL_DROPPED);
}

void sg_pool_cancel(sg_pool *p, uint64_t job) {
    for (int i = 0; i < p->nq; i++)
        if (p->q[i]->j.id == job) {
            drop_queued(p, i);
            return;
        }
    for (int i = 0; i < p->n; i++)
        if (p->s[i].job && p->s[i].job->j.id == job) {
            cancel_running(p, i);
            schedule_dispatch(p);
            return;
        }
}

int sg_pool_drop_queued(sg_pool *p, uint64_t job) {
    for (int i = 0; i < p->nq; i++)
        if (p->q[i]->j.id == job) {
            drop_queued(p, i);
            schedule_dispatch(p);
            return 1;
        }
    return 0;
}

int sg_pool_preempt(sg_pool *p, uint64_t job) {
    if (sg_pool_drop_queued(p, job)) return 1;
    for (int i = 0; i < p->n; i++) {
        qjob *q = p->s[i].job;
        if (!q || q->j.id != job) continue;
        if (!q->stale) q->stale = 1, p->nstale++;
        schedule_dispatch(p); /* a job may wait now: the dispatch lets it in */
        return 2;
    }
    return 0;
}

void sg_pool_end_iteration(sg_pool *p, uint64_t iteration) {
    find_iter(p, iteration, 1)->ended = 1;
    /* one at a time, searching again after each: a done callback may change the queue */
    for (int i = 0; !p->cfg.keep_ended && i < p->nq;)
        if (p->q[i]->j.iteration == iteration) {
            drop_queued(p, i);
            i = 0;
        } else {
            i++;
        }
    for (int i = 0; i < p->n; i++)
        if (p->s[i].job && p->s[i].job->j.iteration == iteration &&
            p->s[i].job->j.work.kind == SG_POOL_VALIDATE)
            cancel_running(p, i);
    schedule_dispatch(p);
}

void sg_pool_free(sg_pool *p) {
    if (!p) return;
    p->freeing = 1;
    p->on_event = NULL;                          /* whoever listened may be gone already */
    while (p->nq > 0) drop_queued(p, p->nq - 1); /* jobs submitted meanwhile are ended too */
    for (int i = 0; i < p->n; i++)
        if (p->s[i].job) cancel_running(p, i);
    while (p->nq > 0) drop_queued(p, p->nq - 1);
    if (p->dispatch_timer) sg_loop_timer_cancel(p->loop, p->dispatch_timer);
    for (int r = 0; r < SG_POOL_NROLES; r++) free(p->wait[r]);
    free(p->q);
    free(p->it);
    free(p->itx);
    free(p->s);
    free(p);
}

void sg_pool_load(const sg_pool *p, int *queued, int *slots) {
    *queued = p->nq;
    *slots = count_online(p);
}

void sg_pool_stats_get(const sg_pool *cp, sg_pool_stats *st) {
    sg_pool *p = (sg_pool *)cp; /* accounting up to now changes no decision */
    account(p);
    memset(st, 0, sizeof *st);
    int64_t now = sg_loop_now(p->loop);
    for (int r = 0; r < SG_POOL_NROLES; r++) {
        sg_pool_role_stats *rs = &st->role[r];
        rs->slots = count_role(p, (sg_pool_role)r);
        rs->jobs = p->jobs[r];
        rs->dropped = p->dropped[r];
        rs->killed = p->killed[r];
        rs->preempted = p->preempted[r];
        double busy = p->busy_ns[r];
        for (int i = 0; i < p->n; i++) /* running jobs count up to now */
            if (p->s[i].job && p->s[i].role == (sg_pool_role)r)
                busy += (double)(now - p->s[i].job->j.started_ns);
        rs->busy_s = busy / SG_SEC;
        rs->available_s = (double)p->avail_ns[r] / SG_SEC;
        rs->utilisation = rs->available_s > 0 ? rs->busy_s / rs->available_s : 0;
        sg_mean_p95(p->wait[r], p->nwait[r], &rs->wait_mean_s, &rs->wait_p95_s);
        rs->arrival_rate = rate(p, r);
        rs->service_s = service_s(p, r);
        st->busy_s += rs->busy_s;
        st->available_s += rs->available_s;
    }
    st->utilisation = st->available_s > 0 ? st->busy_s / st->available_s : 0;
    st->utilisation_queued = p->queued_avail_ns > 0 ? p->queued_busy_ns / p->queued_avail_ns : 0;
    st->splits = p->splits;
    int queued[2], running[2];
    work_of(p, queued, running);
    st->queued = queued[0] + queued[1];
    st->running = running[0] + running[1];
}
