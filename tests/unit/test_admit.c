/* The admission policy (specgen/admit.c) against a small simulated server: its KV holds `cap`
 * tasks; past it every extra task costs preemptions (2 per interval each), a waiting queue
 * and token rate. Tasks over a lowered limit leave only as their iterations end (a fifth of
 * them per interval), as the gate lets them. A step in load (the server's room halves, then
 * comes back) must make the limit fall below the new room and rise again; fixed:N ignores
 * the signals; the parser names a bad value. */
#include "specgen/admit.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define SEC 1000000000LL

typedef struct plant {
    sg_admit a;
    int active, demand;
    double preemptions, tokens;
    int64_t now;
    int backoffs, fork_capped;
    int kv_unknown; /* the server does not report its cache usage (-1) */
} plant;

/* One interval of the server with room for cap tasks; returns the new limit. */
static int step(plant *p, int cap) {
    int limit = sg_admit_limit(&p->a);
    int want = p->demand < limit ? p->demand : limit;
    if (want >= p->active) {
        p->active = want;
    } else { /* started iterations run to their end */
        int leave = p->active / 5 > 0 ? p->active / 5 : 1;
        p->active = p->active - leave > want ? p->active - leave : want;
    }
    int over = p->active > cap ? p->active - cap : 0;
    p->preemptions += 2.0 * over;
    p->tokens += 10 * (100.0 * (p->active < cap ? p->active : cap) - 20.0 * over);
    p->now += p->a.c.interval_ns;
    sg_admit_signals s = {.now_ns = p->now,
                          .active = p->active,
                          .demand = p->demand,
                          .kv_usage = p->kv_unknown      ? -1
                                      : p->active >= cap ? 1.0
                                                         : (double)p->active / cap,
                          .preemptions = p->preemptions,
                          .waiting = over,
                          .tokens = p->tokens,
                          .restarts = 0};
    sg_admit_decision d;
    sg_admit_update(&p->a, &s, &d);
    assert_string_not_equal(sg_admit_reason_name(d.why), "?");
    if (d.limit < d.previous) {
        p->backoffs++;
        assert_true(d.why == SG_ADMIT_PREEMPTIONS || d.why == SG_ADMIT_QUEUE ||
                    d.why == SG_ADMIT_THROUGHPUT);
        p->fork_capped += d.fork_cap == p->a.c.fork_pressure;
    }
    return d.limit;
}

/* Mean limit over n intervals at room cap; *peak, *low: its extremes. */
static double phase(plant *p, int cap, int n, int *peak, int *low) {
    double sum = 0;
    *peak = 0;
    *low = 1 << 30;
    for (int i = 0; i < n; i++) {
        int l = step(p, cap);
        sum += l;
        if (l > *peak) *peak = l;
        if (l < *low) *low = l;
    }
    return sum / n;
}

/* The room halves after 80 intervals and comes back after 130; kv: the server reports its
 * cache usage. */
static void step_in_load(int kv_unknown) {
    plant p;
    memset(&p, 0, sizeof p);
    p.kv_unknown = kv_unknown;
    sg_admit_config c;
    sg_admit_config_default(&c);
    sg_admit_init(&p.a, &c);
    p.demand = 200;
    int peak, low;
    /* room for 30: it climbs to about the room and stays around it */
    phase(&p, 30, 40, &peak, &low);
    assert_true(peak >= 24);
    double settled = phase(&p, 30, 40, &peak, &low);
    assert_true(settled >= 22 && settled <= 32);
    if (!kv_unknown) { /* the cache usage stops it short of the room: no preemption at all */
        assert_true(peak <= 30);
        assert_int_equal(p.backoffs, 0);
    } else { /* AIMD's saw: over the room, preempted, back off, climb again */
        assert_true(p.backoffs >= 2);
    }
    /* the room halves: within 10 intervals the limit is under it, with forks held back */
    int b0 = p.backoffs;
    phase(&p, 15, 10, &peak, &low);
    assert_true(low <= 15);
    assert_true(p.backoffs > b0);
    assert_true(p.fork_capped == p.backoffs);
    double halved = phase(&p, 15, 40, &peak, &low);
    assert_true(halved >= 10 && halved <= 16);
    /* the room comes back: the limit rises again */
    phase(&p, 30, 60, &peak, &low);
    assert_true(peak >= 24);
}

static void test_step_in_load(void **state) {
    (void)state;
    step_in_load(0);
}

static void test_step_in_load_no_kv_signal(void **state) {
    (void)state;
    step_in_load(1);
}

/* Fewer tasks want to run than the limit allows: it does not grow past them. */
static void test_no_demand_no_growth(void **state) {
    (void)state;
    plant p;
    memset(&p, 0, sizeof p);
    sg_admit_config c;
    sg_admit_config_default(&c);
    sg_admit_init(&p.a, &c);
    p.demand = 5;
    int peak, low;
    phase(&p, 100, 30, &peak, &low);
    assert_int_equal(peak, c.start);
    assert_int_equal(p.backoffs, 0);
}

static void test_fixed_ignores_signals(void **state) {
    (void)state;
    plant p;
    memset(&p, 0, sizeof p);
    sg_admit_config c;
    sg_admit_config_default(&c);
    char msg[256];
    assert_int_equal(sg_admit_parse("fixed:12", &c, msg, sizeof msg), 0);
    sg_admit_init(&p.a, &c);
    p.demand = 200;
    int peak, low;
    phase(&p, 4, 30, &peak, &low); /* far over the room: still 12 */
    assert_int_equal(peak, 12);
    assert_int_equal(low, 12);
    assert_int_equal(sg_admit_fork_cap(&p.a), -1);
}

static void test_parse(void **state) {
    (void)state;
    sg_admit_config c;
    sg_admit_config_default(&c);
    char msg[256];
    assert_int_equal(sg_admit_parse("fixed:3", &c, msg, sizeof msg), 0);
    assert_int_equal(c.fixed, 3);
    assert_int_equal(sg_admit_parse("auto", &c, msg, sizeof msg), 0);
    assert_int_equal(c.fixed, 0);
    const char *bad[] = {"fixed:0", "fixed:", "fixed:2x", "manual", "fixed:-1", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(sg_admit_parse(bad[i], &c, msg, sizeof msg), -1);
        char quoted[64];
        snprintf(quoted, sizeof quoted, "'%s'", bad[i]);
        assert_non_null(strstr(msg, quoted));
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_in_load),
        cmocka_unit_test(test_step_in_load_no_kv_signal),
        cmocka_unit_test(test_no_demand_no_growth),
        cmocka_unit_test(test_fixed_ignores_signals),
        cmocka_unit_test(test_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
