/* bench_loop — the event loop's own cost: 100k timers on the virtual clock (random
 * deadlines over one simulated hour, 10% cancelled), the same on the real clock with
 * zero delays, and the ratio. Goal (issue #2): 100k virtual timers well under 1 s. */
#include "common/loop.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long fired;
static void on_timer(sg_loop *l, void *arg) { fired++; }

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double run(sg_loop *l, int n, int64_t spread_ns, long *count) {
    uint64_t *ids = malloc(sizeof *ids * (size_t)n);
    fired = 0;
    srand(42);
    double t0 = cpu_now();
    for (int i = 0; i < n; i++) {
        int64_t d = spread_ns ? (int64_t)((double)rand() / RAND_MAX * (double)spread_ns) : 0;
        ids[i] = sg_loop_timer(l, d, on_timer, NULL);
    }
    for (int i = 0; i < n; i += 10) sg_loop_timer_cancel(l, ids[i]);
    sg_err err;
    if (sg_loop_run(l, &err) < 0) fprintf(stderr, "loop: %s\n", err.msg);
    double t = cpu_now() - t0;
    *count = fired;
    free(ids);
    return t;
}

int main(void) {
    const int n = 100000;
    sg_err err;
    long fv, fr;
    sg_loop *v = sg_loop_new_virtual(0, &err);
    sg_loop *r = sg_loop_new_real(&err);
    double tv = run(v, n, 3600LL * SG_SEC, &fv);
    double tr = run(r, n, 0, &fr);
    printf("bench-loop: %d timers scheduled, 10%% cancelled\n", n);
    printf("  virtual clock, deadlines over 1 h: %8.1f ms  (%ld fired, %.0f ns/timer)\n", tv * 1e3,
           fv, tv * 1e9 / n);
    printf("  real clock, zero delays:           %8.1f ms  (%ld fired, %.0f ns/timer)\n", tr * 1e3,
           fr, tr * 1e9 / n);
    printf("  ratio virtual/real: %.2f; goal virtual < 1000 ms: %s\n", tv / tr,
           tv < 1.0 ? "met" : "NOT met");
    sg_loop_free(v);
    sg_loop_free(r);
    return (fv == n - n / 10 && fr == n - n / 10) ? 0 : 1;
}
