/* fast_p checked by hand: a database filled through the recorder with known outcomes —
 * problems that did not import, one that never got a correct kernel, one with no candidate
 * at all, correct kernels below 1x, at exactly 1x, between 1x and 2x, above 2x, one never
 * timed — and `results fastp`'s figures (JSON, the table), with KernelBench's own check,
 * for an empty campaign, and the report's section, compared with the counts worked out
 * below. */
#include "results/internal.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static char path[64];
static sg_results *db;

static void record(int64_t campaign, int64_t task, json_t *ev) {
    sg_err err;
    assert_int_equal(sg_results_record(db, campaign, task, ev, &err), 0);
    json_decref(ev);
}

/* A candidate n of task with its verdict; speedup < 0: not timed; kb: -1 not computed,
 * else KernelBench's own check passed (1) or not (0). */
static void candidate(int64_t c, int64_t task, int n, int correct, double speedup, int kb) {
    record(c, task,
           json_pack("{s:s,s:i,s:i,s:s,s:s}", "ev", "candidate", "candidate", n, "iteration", 1,
                     "origin", "fork", "status", "submitted"));
    json_t *done = json_pack("{s:s,s:i,s:i,s:b,s:s}", "ev", "job_done", "candidate", n, "iteration",
                             1, "correct", correct, "verdict", correct ? "pass" : "mismatch");
    json_object_set_new(done, "speedup", speedup < 0 ? json_null() : json_real(speedup));
    if (kb >= 0)
        json_object_set_new(
            done, "kb_check",
            json_pack("{s:b,s:i,s:i}", "correct", kb, "trials", 5, "passed", kb ? 5 : 3));
    record(c, task, done);
}

/* A problem of campaign c that imported and ran (torch eager baseline, fp32). */
static int64_t problem(int64_t c, const char *name) {
    sg_err err;
    int64_t t = sg_results_task_begin(db, c, name, name, &err);
    assert_true(t > 0);
    assert_int_equal(sg_results_task_origin(db, t, "kernelbench", name, "ab12", &err), 0);
    json_t *start =
        json_pack("{s:s,s:s,s:s,s:f,s:s,s:s}", "ev", "task_start", "task", name, "lang", "opencl",
                  "target", 1.0, "baseline_kind", "torch-eager", "precision", "fp32");
    record(c, t, start);
    return t;
}

/* Campaign 1, ten problems:
 *   p1, p2  did not import (skipped)                 -> not fast
 *   p3      candidates, none correct (one at 9x)     -> not fast
 *   p4      no candidate                             -> not fast
 *   p5      correct at 0.5x                          -> fast_0
 *   p6      correct at exactly 1x                    -> fast_0 (1x is not > 1)
 *   p7      correct at 1.5x, wrong at 9x             -> fast_0, fast_1 (1.5 is not > 1.5)
 *   p8      correct at 2.5x                          -> fast_0, fast_1, fast_2
 *   p9      correct at 3x (KB check failed), 1.2x    -> fast_0, fast_1, fast_2
 *   p10     correct, never timed                     -> fast_0
 * fast_0 = 6/10, fast_1 = 3/10, fast_1.5 = 2/10, fast_2 = 2/10.
 * With KernelBench's own check as well (p10 has none: not correct; p9's best is 1.2x):
 *   correct 5 (p5..p9): fast_0 = 0.5, fast_1 = 3/10 (p7, p8, p9), fast_2 = 1/10 (p8).
 * Campaign 2: no problem (its figures are NULL). */
static int setup(void **state) {
    (void)state;
    snprintf(path, sizeof path, "/tmp/sg-fastp-%d-XXXXXX", (int)getpid());
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    sg_err err;
    assert_int_equal(sg_results_open(path, 0, &db, &err), 0);
    int64_t c = sg_results_campaign_begin(db, "campaign", "kb/level1", NULL, &err);
    assert_true(c > 0);
    for (int i = 1; i <= 2; i++) {
        char name[8];
        snprintf(name, sizeof name, "p%d", i);
        int64_t t = sg_results_task_begin(db, c, name, name, &err);
        assert_int_equal(sg_results_task_origin(db, t, "kernelbench", name, "cd34", &err), 0);
        assert_int_equal(
            sg_results_task_skip(db, t, "cannot import: data-dependent output shape", &err), 0);
    }
    int64_t t = problem(c, "p3");
    candidate(c, t, 1, 0, -1, -1);
    candidate(c, t, 2, 0, 9.0, 0);
    problem(c, "p4");
    candidate(c, problem(c, "p5"), 1, 1, 0.5, 1);
    candidate(c, problem(c, "p6"), 1, 1, 1.0, 1);
    t = problem(c, "p7");
    candidate(c, t, 1, 1, 1.5, 1);
    candidate(c, t, 2, 0, 9.0, 0);
    candidate(c, problem(c, "p8"), 1, 1, 2.5, 1);
    t = problem(c, "p9");
    candidate(c, t, 1, 1, 3.0, 0);
    candidate(c, t, 2, 1, 1.2, 1);
    candidate(c, problem(c, "p10"), 1, 1, -1, -1);
    assert_true(sg_results_campaign_begin(db, "campaign", "empty", NULL, &err) == 2);
    assert_int_equal(sg_results_flush(db, &err), 0);
    assert_int_equal(sg_results_close(db, &err), 0);
    assert_int_equal(sg_results_open(path, 1, &db, &err), 0);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    sg_results_close(db, NULL);
    static const char *const suffix[] = {"", "-wal", "-shm"}; /* the file, SQLite's sides */
    for (int i = 0; i < 3; i++) {
        char file[80];
        snprintf(file, sizeof file, "%s%s", path, suffix[i]);
        unlink(file);
    }
    return 0;
}

/* fastp's output for thresholds spec in fmt (a new string). */
static char *fastp(const char *spec, int kb, sg_results_fmt fmt) {
    double p[SG_RESULTS_MAX_P];
    int np, n;
    int64_t *ids;
    sg_err err;
    assert_int_equal(sg_results_fastp_parse(spec, p, SG_RESULTS_MAX_P, &np, &err), 0);
    assert_int_equal(sg_results_campaign_ids(db, NULL, &ids, &n, &err), 0);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_int_equal(sg_results_fastp(db, ids, n, p, np, kb, fmt, out, &err), 2);
    fclose(out);
    free(ids);
    return text;
}

static double num(const json_t *row, const char *key) {
    const json_t *v = json_object_get(row, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static void test_by_hand(void **state) {
    (void)state;
    char *text = fastp("0,1,1.5,2", 0, SG_RESULTS_JSON);
    json_t *rows = json_loads(text, 0, NULL);
    assert_non_null(rows);
    assert_int_equal(json_array_size(rows), 2);
    const json_t *c1 = json_array_get(rows, 0);
    assert_true(num(c1, "problems") == 10);
    assert_true(num(c1, "not_run") == 2);
    assert_true(num(c1, "correct") == 6);
    assert_true(num(c1, "fast_0") == 0.6);
    assert_true(num(c1, "fast_1") == 0.3);
    assert_true(num(c1, "fast_1.5") == 0.2);
    assert_true(num(c1, "fast_2") == 0.2);
    assert_string_equal(json_string_value(json_object_get(c1, "baseline")), "torch-eager");
    assert_string_equal(json_string_value(json_object_get(c1, "precision")), "fp32");
    assert_string_equal(json_string_value(json_object_get(c1, "check")), "ours");
    assert_true(num(c1, "kb_checked") == 6);    /* p3 (its 9x), p5..p9; not p10 */
    const json_t *c2 = json_array_get(rows, 1); /* no problem: no share */
    assert_true(num(c2, "problems") == 0);
    assert_true(json_is_null(json_object_get(c2, "fast_0")));
    json_decref(rows);
    free(text);
}

static void test_with_kernelbench_check(void **state) {
    (void)state;
    char *text = fastp(NULL, 1, SG_RESULTS_JSON); /* the default: 0,1,2 */
    json_t *rows = json_loads(text, 0, NULL);
    const json_t *c1 = json_array_get(rows, 0);
    assert_true(num(c1, "correct") == 5);
    assert_true(num(c1, "fast_0") == 0.5);
    assert_true(num(c1, "fast_1") == 0.3);
    assert_true(num(c1, "fast_2") == 0.1);
    assert_null(json_object_get(c1, "fast_1.5"));
    assert_string_equal(json_string_value(json_object_get(c1, "check")), "ours+kernelbench");
    json_decref(rows);
    free(text);
}

/* The table a person reads: a header with the thresholds, the figures on campaign 1's row. */
static void test_table(void **state) {
    (void)state;
    char *text = fastp("0,1,2", 0, SG_RESULTS_TEXT);
    assert_non_null(strstr(text, "fast_0"));
    assert_non_null(strstr(text, "fast_2"));
    char *row = strstr(text, "\n1 ");
    assert_non_null(row);
    assert_non_null(strstr(row, "0.6  "));
    assert_non_null(strstr(row, "0.3  "));
    assert_non_null(strstr(row, "0.2  "));
    free(text);
}

static void test_bad_thresholds(void **state) {
    (void)state;
    double p[SG_RESULTS_MAX_P];
    int np;
    sg_err err;
    assert_int_equal(sg_results_fastp_parse("1,x", p, SG_RESULTS_MAX_P, &np, &err), -1);
    assert_non_null(strstr(err.msg, "--p '1,x'"));
    assert_int_equal(sg_results_fastp_parse("-1", p, SG_RESULTS_MAX_P, &np, &err), -1);
    assert_int_equal(sg_results_fastp_parse("1,,2", p, SG_RESULTS_MAX_P, &np, &err), -1);
    assert_int_equal(sg_results_fastp_parse("0.5,3", p, SG_RESULTS_MAX_P, &np, &err), 0);
    assert_int_equal(np, 2);
    assert_true(p[0] == 0.5 && p[1] == 3);
}

/* The report shows the same figures: 60.0% (6 of 10), and KernelBench's row. */
static void test_report(void **state) {
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    sg_err err;
    assert_int_equal(sg_results_report(db, 1, out, &err), 0);
    fclose(out);
    assert_non_null(strstr(text, "<h2>fast_p</h2>"));
    assert_non_null(strstr(text, "<td>60.0% (6 of 10)</td><td>30.0% (3 of 10)</td><td>20.0% "
                                 "(2 of 10)</td><td>torch-eager</td>"));
    assert_non_null(strstr(text, "<td>50.0% (5 of 10)</td><td>30.0% (3 of 10)</td><td>10.0% "
                                 "(1 of 10)</td>"));
    assert_non_null(strstr(text, "fast_2: 2 of 10 problems"));
    free(text);
}

/* `results show` gives KernelBench's check beside ours: p9's 3x kernel failed it. */
static void test_show(void **state) {
    (void)state;
    int64_t id;
    sg_err err;
    assert_int_equal(sg_results_resolve_candidate(db, "p9:1", &id, &err), 0);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_int_equal(sg_results_show_candidate(db, id, SG_RESULTS_JSON, out, &err), 0);
    fclose(out);
    json_t *c = json_loads(text, 0, NULL);
    assert_true(num(c, "correct") == 1 && num(c, "kb_correct") == 0);
    json_t *kb = json_loads(json_string_value(json_object_get(c, "kb_check")), 0, NULL);
    assert_true(num(kb, "passed") == 3 && num(kb, "trials") == 5);
    json_decref(kb);
    json_decref(c);
    free(text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_by_hand), cmocka_unit_test(test_with_kernelbench_check),
        cmocka_unit_test(test_table),   cmocka_unit_test(test_bad_thresholds),
        cmocka_unit_test(test_report),  cmocka_unit_test(test_show),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
