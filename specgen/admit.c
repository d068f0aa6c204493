/* admit.c — the admission policy (admit.h): AIMD of the active-task limit on cache signals. */
#include "specgen/admit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sg_admit_config_default(sg_admit_config *c) {
    memset(c, 0, sizeof *c);
    c->start = 8;
    c->min = 1;
    c->max = 4096;
    c->interval_ns = 10LL * 1000000000LL;
    c->increase = 1;
    c->decrease = 0.8;
    c->kv_high = 0.95;
    c->kv_grow = 0.85;
    c->kv_start = 0.1;
    c->drop = 0.25;
    c->preempt_share = 0.1;
    c->queue_share = 1;
    c->fork_pressure = 1;
}

int sg_admit_parse(const char *s, sg_admit_config *c, char *msg, int msglen) {
    if (!strcmp(s, "auto")) {
        c->fixed = 0;
        return 0;
    }
    char *end = NULL;
    long n = !strncmp(s, "fixed:", 6) ? strtol(s + 6, &end, 10) : 0;
    if (end && end != s + 6 && !*end && n >= 1 && n <= 100000) {
        c->fixed = (int)n;
        return 0;
    }
    snprintf(msg, (size_t)msglen,
             "'%s' is not an admission policy: auto, or fixed:N with N tasks from 1 to 100000", s);
    return -1;
}

const char *sg_admit_reason_name(sg_admit_reason r) {
    static const char *const names[] = {"start",       "fixed",   "grow",       "hold",
                                        "preemptions", "queue",   "throughput", "cache_full",
                                        "no_demand",   "draining"};
    return (unsigned)r < sizeof names / sizeof *names ? names[r] : "?";
}

void sg_admit_init(sg_admit *a, const sg_admit_config *c) {
    memset(a, 0, sizeof *a);
    a->c = *c;
    a->limit = c->fixed > 0 ? c->fixed : c->start;
    a->fork_cap = -1;
}

int sg_admit_limit(const sg_admit *a) { return a->limit; }
int sg_admit_fork_cap(const sg_admit *a) { return a->fork_cap; }

static int clamp(const sg_admit *a, double x) {
    int n = (int)x;
    if (n < a->c.min) n = a->c.min;
    if (n > a->c.max) n = a->c.max;
    return n;
}

/* Which way the signals point: a back-off's reason, or SG_ADMIT_HOLD for none. */
static sg_admit_reason pressure(const sg_admit *a, const sg_admit_signals *s, double rate,
                                double preempted) {
    const sg_admit_signals *l = &a->last;
    double restarted = s->restarts >= 0 && l->restarts >= 0 ? s->restarts - l->restarts : 0;
    double base = s->active > 1 ? s->active : 1;
    if (preempted > a->c.preempt_share * base || restarted > 0) return SG_ADMIT_PREEMPTIONS;
    if (s->waiting > a->c.queue_share * base && l->waiting >= 0 && s->waiting > l->waiting)
        return SG_ADMIT_QUEUE;
    if (a->grew && a->rate > 0 && rate >= 0 && rate < a->rate * (1 - a->c.drop))
        return SG_ADMIT_THROUGHPUT;
    return SG_ADMIT_HOLD;
}

/* The limit's move for a reason (why is updated: a hold says which). */
static int next_limit(sg_admit *a, const sg_admit_signals *s, sg_admit_reason *why) {
    int backoff =
        *why == SG_ADMIT_PREEMPTIONS || *why == SG_ADMIT_QUEUE || *why == SG_ADMIT_THROUGHPUT;
    if (a->draining && s->active > a->limit) { /* the last back-off has not taken effect yet */
        *why = SG_ADMIT_DRAINING;
        return a->limit;
    }
    a->draining = 0;
    if (backoff) {
        a->draining = 1;
        a->backed_off_once = 1;
        int from = s->active < a->limit ? s->active : a->limit;
        return clamp(a, from * a->c.decrease);
    }
    if (*why != SG_ADMIT_HOLD) return a->limit;
    if (s->kv_usage >= a->c.kv_grow) {
        *why = SG_ADMIT_CACHE_FULL;
        return a->limit;
    }
    if (s->active < a->limit || s->demand <= a->limit) {
        *why = SG_ADMIT_NO_DEMAND;
        return a->limit;
    }
    if (!a->backed_off_once && s->kv_usage >= 0 && s->kv_usage < a->c.kv_start) {
        *why = SG_ADMIT_GROW;
        return clamp(a, a->limit * 2.0); /* slow start: the cache is nearly empty */
    }
    *why = SG_ADMIT_GROW;
    return clamp(a, a->limit + a->c.increase);
}

void sg_admit_update(sg_admit *a, const sg_admit_signals *s, sg_admit_decision *d) {
    memset(d, 0, sizeof *d);
    d->previous = a->limit;
    d->tok_s = -1;
    if (a->c.fixed > 0) {
        a->limit = a->c.fixed;
        a->fork_cap = -1;
        d->limit = a->limit;
        d->fork_cap = -1;
        d->why = SG_ADMIT_FIXED;
        a->last = *s;
        return;
    }
    double dt = (double)(s->now_ns - a->last.now_ns) / 1e9;
    double rate = a->primed && dt > 0 ? (s->tokens - a->last.tokens) / dt : -1;
    double preempted = a->primed && s->preemptions >= 0 && a->last.preemptions >= 0
                           ? s->preemptions - a->last.preemptions
                           : 0;
    sg_admit_reason why = a->primed ? pressure(a, s, rate, preempted) : SG_ADMIT_START;
    int before = a->limit;
    a->limit = next_limit(a, s, &why);
    int backed_off = a->limit < before;
    a->fork_cap = backed_off || a->draining || (s->kv_usage >= 0 && s->kv_usage >= a->c.kv_high)
                      ? a->c.fork_pressure
                      : -1;
    if (rate >= 0) a->rate = a->rate > 0 ? 0.5 * a->rate + 0.5 * rate : rate; /* smoothed */
    a->grew = a->limit > before;
    a->primed = 1;
    a->last = *s;
    d->limit = a->limit;
    d->fork_cap = a->fork_cap;
    d->why = why;
    d->tok_s = rate;
    d->preempted = preempted;
}
