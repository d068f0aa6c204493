/* The elastic split as arithmetic: expected waits of M/M/c queues (Erlang C) and the
 * number of validate slots that minimises them. Pure: no loop, no clock. */
#include "pool/pool.h"

#include <math.h>
#include <stdlib.h>

double sg_pool_mmc_wait(double lambda, double service_s, int c) {
    if (lambda <= 0 || service_s <= 0) return 0;
    if (c <= 0) return INFINITY;
    double a = lambda * service_s; /* offered load in servers */
    if (a >= c) return INFINITY;
    /* Erlang C by the stable recurrence on Erlang B: B(0)=1, B(k)=a*B/(k+a*B). */
    double b = 1;
    for (int k = 1; k <= c; k++) b = a * b / (k + a * b);
    double rho = a / c;
    double pwait = b / (1 - rho + rho * b);
    return pwait * service_s / (c - a);
}

/* Arrival-weighted mean wait; an overloaded role costs more the more it is overloaded,
 * so that between two infeasible splits the less overloaded one wins. */
double sg_pool_split_cost(int validate, int n, const double lambda[SG_POOL_NROLES],
                          const double service_s[SG_POOL_NROLES]) {
    int c[SG_POOL_NROLES] = {validate, n - validate};
    double sum = 0, total = 0, over = 0;
    for (int r = 0; r < SG_POOL_NROLES; r++) {
        if (lambda[r] <= 0) continue;
        double w = sg_pool_mmc_wait(lambda[r], service_s[r], c[r]);
        if (isinf(w)) {
            double load = lambda[r] * service_s[r] / (c[r] > 0 ? c[r] : 0.5);
            over = fmax(over, load);
            continue;
        }
        sum += lambda[r] * w;
        total += lambda[r];
    }
    if (over > 0) return 1e9 * over;
    return total > 0 ? sum / total : 0;
}

int sg_pool_best_split(int n, const double lambda[SG_POOL_NROLES],
                       const double service_s[SG_POOL_NROLES], const int need[SG_POOL_NROLES],
                       double *cost) {
    int lo = need[SG_POOL_VALIDATE] ? 1 : 0, hi = need[SG_POOL_PROFILE] ? n - 1 : n;
    if (lo > hi) { /* one slot and both roles have work: the cheaper of the two */
        lo = 0;
        hi = n;
    }
    int best = lo;
    double bc = INFINITY;
    for (int v = lo; v <= hi; v++) {
        double c = sg_pool_split_cost(v, n, lambda, service_s);
        /* ties: the split closest to even, so an idle pool keeps both roles */
        if (c < bc || (c == bc && abs(2 * v - n) < abs(2 * best - n))) {
            bc = c;
            best = v;
        }
    }
    if (cost) *cost = bc;
    return best;
}
