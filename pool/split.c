/* The elastic split as arithmetic: expected waits of M/M/c queues (Erlang C) and the
 * number of validate slots that minimises them. Pure: no loop, no clock. */
#include "pool/pool.h"

#include "common/buf.h"

#include <math.h>
#include <stdlib.h>

/* Erlang C's wait from Erlang B at c servers (b = B(c)) for an offered load a. */
static double wait_from_b(double b, double a, double service_s, int c) {
    if (c <= 0 || a >= c) return INFINITY;
    double rho = a / c;
    double pwait = b / (1 - rho + rho * b);
    return pwait * service_s / (c - a);
}

double sg_pool_mmc_wait(double lambda, double service_s, int c) {
    if (lambda <= 0 || service_s <= 0) return 0;
    if (c <= 0) return INFINITY;
    double a = lambda * service_s; /* offered load in servers */
    if (a >= c) return INFINITY;
    /* Erlang C by the stable recurrence on Erlang B: B(0)=1, B(k)=a*B/(k+a*B). */
    double b = 1;
    for (int k = 1; k <= c; k++) b = a * b / (k + a * b);
    return wait_from_b(b, a, service_s, c);
}

/* w[c] = sg_pool_mmc_wait(lambda, service_s, c) for c = 0..n, in one pass of the
 * recurrence (the same arithmetic, so the same values): the split search is O(n). */
static void mmc_waits(double lambda, double service_s, int n, double *w) {
    double a = lambda * service_s, b = 1;
    for (int c = 0; c <= n; c++) {
        if (c > 0) b = a * b / (c + a * b);
        w[c] = lambda <= 0 || service_s <= 0 ? 0 : wait_from_b(b, a, service_s, c);
    }
}

/* Arrival-weighted mean wait, given each role's wait at its slot count; an overloaded role
 * costs more the more it is overloaded, so that between two infeasible splits the less
 * overloaded one wins. */
static double cost_of(const int c[SG_POOL_NROLES], const double w[SG_POOL_NROLES],
                      const double lambda[SG_POOL_NROLES], const double service_s[SG_POOL_NROLES]) {
    double sum = 0, total = 0, over = 0;
    for (int r = 0; r < SG_POOL_NROLES; r++) {
        if (lambda[r] <= 0) continue;
        if (isinf(w[r])) {
            double load = lambda[r] * service_s[r] / (c[r] > 0 ? c[r] : 0.5);
            over = fmax(over, load);
            continue;
        }
        sum += lambda[r] * w[r];
        total += lambda[r];
    }
    if (over > 0) return 1e9 * (1 + over); /* >= 1e9: no finite wait (sched.c says none) */
    return total > 0 ? sum / total : 0;
}

double sg_pool_split_cost(int validate, int n, const double lambda[SG_POOL_NROLES],
                          const double service_s[SG_POOL_NROLES]) {
    int c[SG_POOL_NROLES] = {validate, n - validate};
    double w[SG_POOL_NROLES];
    for (int r = 0; r < SG_POOL_NROLES; r++)
        w[r] = lambda[r] > 0 ? sg_pool_mmc_wait(lambda[r], service_s[r], c[r]) : 0;
    return cost_of(c, w, lambda, service_s);
}

int sg_pool_best_split(int n, const double lambda[SG_POOL_NROLES],
                       const double service_s[SG_POOL_NROLES], const int need[SG_POOL_NROLES],
                       double *cost) {
    return sg_pool_best_split_from(n, lambda, service_s, need, -1, cost, NULL);
}

int sg_pool_best_split_from(int n, const double lambda[SG_POOL_NROLES],
                            const double service_s[SG_POOL_NROLES], const int need[SG_POOL_NROLES],
                            int cur_v, double *cost, double *cur_cost) {
    int lo = need[SG_POOL_VALIDATE] ? 1 : 0, hi = need[SG_POOL_PROFILE] ? n - 1 : n;
    if (lo > hi) { /* one slot and both roles have work: the cheaper of the two */
        lo = 0;
        hi = n;
    }
    double *wv = sg_xmalloc(2 * ((size_t)n + 1) * sizeof *wv), *wp = wv + n + 1;
    mmc_waits(lambda[SG_POOL_VALIDATE], service_s[SG_POOL_VALIDATE], n, wv);
    mmc_waits(lambda[SG_POOL_PROFILE], service_s[SG_POOL_PROFILE], n, wp);
    int best = lo;
    double bc = INFINITY;
    for (int v = lo; v <= hi; v++) {
        int c[SG_POOL_NROLES] = {v, n - v};
        double w[SG_POOL_NROLES] = {wv[v], wp[n - v]};
        double cv = cost_of(c, w, lambda, service_s);
        /* ties: the split closest to even, so an idle pool keeps both roles */
        if (cv < bc || (cv == bc && abs(2 * v - n) < abs(2 * best - n))) {
            bc = cv;
            best = v;
        }
    }
    if (cur_cost && cur_v >= 0 && cur_v <= n) { /* mmc_waits' values are sg_pool_mmc_wait's */
        int c[SG_POOL_NROLES] = {cur_v, n - cur_v};
        double w[SG_POOL_NROLES] = {wv[cur_v], wp[n - cur_v]};
        *cur_cost = cost_of(c, w, lambda, service_s);
    } else if (cur_cost) {
        *cur_cost = sg_pool_split_cost(cur_v, n, lambda, service_s);
    }
    free(wv);
    if (cost) *cost = bc;
    return best;
}
