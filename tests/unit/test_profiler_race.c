/* profiler/stats.c's racing rule (sg_race_check): a candidate clearly slower than the best
 * so far stops after a few paired runs, one clearly past the target too; a close one does
 * not stop, whatever the number of runs; a wide separation stops sooner than a narrow one;
 * with the "not_better" stop on, a close one stops only after tie_min_runs pairs.
 * Samples are made with a fixed noise pattern (no clock, no device). */
#include "profiler/stats.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define N 200

/* n paired samples: the baseline near 1 ms, the candidate near 1 ms / speedup, each with
 * +-amp relative noise from two different fixed patterns (so the pairs do not cancel). */
static void make(double speedup, double amp, int n, double *base, double *cand) {
    for (int i = 0; i < n; i++) {
        base[i] = 1e6 * (1 + amp * sin(1.7 * i + 0.3));
        cand[i] = 1e6 / speedup * (1 + amp * cos(2.3 * i + 1.1));
    }
}

/* The first n at which the rule stops (0: it never does up to N). */
static int first_stop(double speedup, double amp, const sg_race *r, sg_race_stop *why) {
    double base[N], cand[N], lo, hi;
    make(speedup, amp, N, base, cand);
    for (int n = 1; n <= N; n++)
        if ((*why = sg_race_check(base, cand, n, r, &lo, &hi)) != SG_RACE_GO) return n;
    return 0;
}

static void test_clearly_slower_stops_early(void **state) {
    (void)state;
    sg_race r;
    sg_race_default(&r);
    r.best = 1.0; /* the baseline */
    sg_race_stop why;
    int n = first_stop(0.5, 0.05, &r, &why); /* twice as slow, 5% noise */
    assert_int_equal(why, SG_RACE_SLOWER);
    assert_int_equal(n, r.min_runs); /* as soon as racing may stop */
    assert_string_equal(sg_race_stop_name(why), "slower");
}

static void test_close_candidate_does_not_stop(void **state) {
    (void)state;
    sg_race r;
    sg_race_default(&r);
    r.best = 1.0;
    r.target = 2.0;
    sg_race_stop why = SG_RACE_GO;
    /* 3% faster than the best, 5% noise: neither clearly below it nor past the target */
    assert_int_equal(first_stop(1.03, 0.05, &r, &why), 0);
    /* 3% slower than the best with 5% noise: the interval still holds the best at 3 runs */
    double base[N], cand[N], lo, hi;
    make(0.97, 0.05, N, base, cand);
    assert_int_equal(sg_race_check(base, cand, 3, &r, &lo, &hi), SG_RACE_GO);
    assert_true(lo < 1.0 && hi > 1.0);
}

static void test_past_target_stops(void **state) {
    (void)state;
    sg_race r;
    sg_race_default(&r);
    r.best = 1.0;
    r.target = 2.0;
    sg_race_stop why;
    int n = first_stop(3.0, 0.05, &r, &why);
    assert_int_equal(why, SG_RACE_PAST_TARGET);
    assert_true(n >= r.min_runs && n <= 5); /* 1.5x the bar: a few runs */
    /* just at the target: never clearly past it */
    assert_int_equal(first_stop(2.0, 0.05, &r, &why), 0);
}

static void test_wide_separation_stops_sooner(void **state) {
    (void)state;
    sg_race r;
    sg_race_default(&r);
    r.best = 1.0;
    sg_race_stop why;
    int wide = first_stop(0.5, 0.08, &r, &why);
    int narrow = first_stop(0.9, 0.08, &r, &why);
    assert_int_equal(why, SG_RACE_SLOWER);
    assert_true(wide > 0 && narrow > wide);
}

static void test_off_or_too_few_runs_never_stop(void **state) {
    (void)state;
    double base[N], cand[N], lo, hi;
    make(0.25, 0.02, N, base, cand);
    sg_race r;
    sg_race_default(&r);
    r.best = 1.0;
    assert_int_equal(sg_race_check(base, cand, 2, &r, &lo, &hi), SG_RACE_GO); /* < min_runs */
    assert_true(hi < 1.0);                                                    /* but computed */
    r.on = 0;
    assert_int_equal(sg_race_check(base, cand, 50, &r, &lo, &hi), SG_RACE_GO);
    sg_race_default(&r); /* on, but no best and no target: nothing to race against */
    assert_int_equal(sg_race_check(base, cand, 50, &r, &lo, &hi), SG_RACE_GO);
    base[1] = 0; /* a run without a time: no decision */
    r.best = 1.0;
    assert_int_equal(sg_race_check(base, cand, 50, &r, &lo, &hi), SG_RACE_GO);
}

/* The "not_better" stop (an indifference zone of one noise band): a close candidate is
 * never stopped before tie_min_runs, then stops once its interval is below best * (1 +
 * band / 2); one clearly faster than the best never stops that way; off by default. */
static void test_not_better_close_candidate(void **state) {
    (void)state;
    sg_race r;
    sg_race_default(&r);
    assert_int_equal(r.tie_min_runs, 0); /* the pure rule's default: off */
    r.best = 1.0;
    r.target = 2.0;
    r.tie_min_runs = 10;
    sg_race_stop why = SG_RACE_GO;
    /* an A/A pair (the same kernel) and one 1% faster, 5% noise (a band near 7%): not
     * before 10 pairs */
    int aa = first_stop(1.0, 0.05, &r, &why);
    assert_int_equal(why, SG_RACE_NOT_BETTER);
    assert_string_equal(sg_race_stop_name(why), "not_better");
    assert_true(aa >= r.tie_min_runs);
    int n = first_stop(1.01, 0.05, &r, &why);
    assert_int_equal(why, SG_RACE_NOT_BETTER);
    assert_true(n >= aa); /* nearer the band's edge: at least as many pairs */
    double base[N], cand[N], lo, hi;
    make(1.01, 0.05, N, base, cand);
    assert_int_equal(sg_race_check(base, cand, n, &r, &lo, &hi), SG_RACE_NOT_BETTER);
    assert_true(lo < 1.0 && hi > 1.0); /* not clearly slower: a close one */
    /* 5% faster: inside the band (so full timing might still call it "no change") but
     * beyond half of it, the margin for the band's own error: keep timing */
    assert_int_equal(first_stop(1.05, 0.05, &r, &why), 0);
    /* 30% faster than the best with a band near 7%: it may be the new best, keep timing */
    assert_int_equal(first_stop(1.3, 0.05, &r, &why), 0);
    /* the same candidate against a best of 1.28: within half the band, stops after 10 */
    r.best = 1.28;
    assert_true(first_stop(1.3, 0.05, &r, &why) >= 10);
    assert_int_equal(why, SG_RACE_NOT_BETTER);
    /* clearly slower still stops at min_runs, before the tie stop could */
    r.best = 1.0;
    assert_int_equal(first_stop(0.5, 0.05, &r, &why), r.min_runs);
    assert_int_equal(why, SG_RACE_SLOWER);
    /* 40% noise (a loaded machine): the band is far over 10%, but the zone is capped, so
     * an interval this wide (it could hold a much faster kernel) does not stop it */
    make(1.0, 0.4, N, base, cand);
    for (int k = 10; k <= 30; k++) {
        assert_int_equal(sg_race_check(base, cand, k, &r, &lo, &hi), SG_RACE_GO);
        assert_true(hi > 1.1);
    }
    sg_timing tb, tc;
    sg_timing_summarize(base, 30, &tb);
    sg_timing_summarize(cand, 30, &tc);
    assert_true(tb.noise + tc.noise > 0.2);
    /* no best: nothing to be "not better" than */
    r.best = 0;
    assert_int_equal(first_stop(1.0, 0.05, &r, &why), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clearly_slower_stops_early),
        cmocka_unit_test(test_close_candidate_does_not_stop),
        cmocka_unit_test(test_past_target_stops),
        cmocka_unit_test(test_wide_separation_stops_sooner),
        cmocka_unit_test(test_off_or_too_few_runs_never_stop),
        cmocka_unit_test(test_not_better_close_candidate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
