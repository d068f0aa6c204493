/* profiler/: timing statistics and the feedback text given to the model. */
#include "profiler/feedback.h"
#include "profiler/profiler.h"
#include "validator/internal.h"
#include "profiler/stats.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static sg_feedback_templates T;

static int setup(void **state) {
    const char *root = getenv("SPECGEN_ROOT");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/prompts", root ? root : ".");
    sg_err err;
    if (sg_feedback_load(dir, &T, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    return 0;
}

static int teardown(void **state) {
    sg_feedback_free(&T);
    return 0;
}

static void test_summary_and_band(void **state) {
    double s[] = {10, 12, 11, 13, 100, 11, 12, 10, 11, 12}; /* one outlier */
    sg_timing t;
    sg_timing_summarize(s, 10, &t);
    assert_int_equal(t.runs, 10);
    assert_true(t.median_ns == 11.5);
    assert_true(t.min_ns == 10 && t.max_ns == 100);
    assert_true(t.noise > 0.04 && t.noise < 0.06); /* IQR 11..12, robust to the outlier */
}

static void test_stability_rule(void **state) {
    sg_stability st = {.min_runs = 10, .max_runs = 50, .window = 5, .tol = 0.01};
    double steady[30], drifting[30];
    for (int i = 0; i < 30; i++) {
        steady[i] = 100 + (i % 3);
        drifting[i] = 100 + 10 * i;
    }
    assert_false(sg_timing_stable(steady, 9, &st)); /* below min_runs */
    assert_true(sg_timing_stable(steady, 12, &st));
    assert_false(sg_timing_stable(drifting, 30, &st));
    double many[50];
    for (int i = 0; i < 50; i++) many[i] = 100 + 10 * i;
    assert_true(sg_timing_stable(many, 50, &st)); /* max_runs ends it */
}

static void test_speedup_verdicts(void **state) {
    sg_timing b = {.median_ns = 400, .noise = 0.02}, c = {.median_ns = 100, .noise = 0.02};
    sg_speedup s = sg_speedup_compare(&b, &c);
    assert_true(s.speedup == 4.0);
    assert_int_equal(s.verdict, SG_CMP_FASTER);
    c.median_ns = 390;
    assert_int_equal(sg_speedup_compare(&b, &c).verdict, SG_CMP_SAME); /* 2.6% < 4% band */
    c.median_ns = 500;
    assert_int_equal(sg_speedup_compare(&b, &c).verdict, SG_CMP_SLOWER);
    /* A noisy baseline (band 150%): 12x slower is still slower, 2x is not. */
    b.noise = 1.48;
    c.median_ns = 4800;
    assert_int_equal(sg_speedup_compare(&b, &c).verdict, SG_CMP_SLOWER);
    c.median_ns = 800;
    assert_int_equal(sg_speedup_compare(&b, &c).verdict, SG_CMP_SAME);
    assert_string_equal(sg_cmp_name(SG_CMP_SAME), "no change");
}

static void test_compile_feedback_maps_lines_and_trims(void **state) {
    const char *nvrtc =
        "candidate.cu(14): warning: variable \"z\" was declared but never referenced\n"
        "candidate.cu(17): error: identifier \"tid\" is undefined\n"
        "      y[tid] = a * x[tid];\n"
        "        ^\n"
        "\n"
        "1 error detected in the compilation of \"candidate.cu\".\n";
    sg_fb_compile c = {.candidate = "Candidate 3", .log = nvrtc, .line_offset = 4};
    sg_buf out = {0};
    sg_feedback_compile(&T, &c, &out);
    assert_non_null(strstr(out.data, "Candidate 3 did not compile (1 error)"));
    assert_non_null(strstr(out.data, "candidate.cu(13): error: identifier \"tid\" is undefined"));
    assert_non_null(strstr(out.data, "y[tid] = a * x[tid];"));
    assert_null(strstr(out.data, "warning")); /* dropped: there are errors */
    assert_null(strstr(out.data, "(17)"));
    sg_buf_free(&out);
    /* clang/PoCL style, many errors: trimmed with a count of the rest. */
    sg_buf log = {0};
    for (int i = 1; i <= 12; i++)
        sg_buf_printf(&log, "<source>:%d:5: error: use of undeclared identifier 'v%d'\n", i + 2, i);
    sg_fb_compile many = {
        .candidate = "Candidate 4", .log = log.data, .line_offset = 2, .max_errors = 3};
    sg_feedback_compile(&T, &many, &out);
    assert_non_null(strstr(out.data, "(12 errors)"));
    assert_non_null(strstr(out.data, "<source>:1:5: error"));
    assert_null(strstr(out.data, "'v4'"));
    assert_non_null(strstr(out.data, "... and 9 more errors"));
    sg_buf_free(&out);
    sg_buf_free(&log);
    /* PoCL's own format: location after "error:", in a cache file nobody can open. */
    sg_fb_compile pocl = {.candidate = "Candidate 6",
                          .log = "error: /root/.cache/pocl/kcache/tempfile_sWY4KT.cl:4:37: use of "
                                 "undeclared identifier 'undefined_offset'\n"
                                 "Device pthread failed to build the program\n"};
    sg_feedback_compile(&T, &pocl, &out);
    assert_non_null(strstr(out.data, "Candidate 6 did not compile (1 error)"));
    assert_non_null(
        strstr(out.data, "kernel.cl:4:37: error: use of undeclared identifier 'undefined_offset'"));
    assert_null(strstr(out.data, "kcache"));
    sg_buf_free(&out);
    /* An error on a harness line says so instead of a negative number. */
    sg_fb_compile h = {
        .candidate = "Candidate 5", .log = "x.cl:1:1: error: bad\n", .line_offset = 2};
    sg_feedback_compile(&T, &h, &out);
    assert_non_null(strstr(out.data, "x.cl:harness:1: error"));
    sg_buf_free(&out);
}

static void test_mismatch_feedback(void **state) {
    sg_fb_mismatch m = {.candidate = "Candidate 2",
                        .output = "y",
                        .shape = "B=3 N=1001",
                        .index = 1000,
                        .got = "0",
                        .expected = "0.731",
                        .max_abs = 0.9,
                        .max_rel = 1,
                        .reason = "wrote outside its buffer"};
    sg_buf out = {0};
    sg_feedback_mismatch(&T, &m, &out);
    assert_string_equal(out.data, "Candidate 2 compiled but gives WRONG results for output `y` at "
                                  "sizes B=3 N=1001: at index 1000 "
                                  "it wrote 0, the reference is 0.731 (max abs error 0.9, max rel "
                                  "error 1). Also: wrote outside "
                                  "its buffer.\n");
    sg_buf_free(&out);
}

/* A wrong result reaches the model through the mismatch template, with the values the
 * validator quoted, also after the worker's JSON (the pool reads results back from it). */
static void test_wrong_result_feedback_uses_the_mismatch_template(void **state) {
    sg_val_result vr = {
        .verdict = SG_VAL_MISMATCH, .first_bad = 1000, .max_abs = 0.9, .max_rel = 1};
    snprintf(vr.output, sizeof vr.output, "y");
    snprintf(vr.shape, sizeof vr.shape, "N=1001");
    snprintf(vr.got, sizeof vr.got, "0");
    snprintf(vr.expected, sizeof vr.expected, "0.731");
    snprintf(vr.message, sizeof vr.message, "wrong result in output y");
    json_t *j = sg_val_result_to_json(&vr);
    sg_val_result back;
    sg_val_result_from_json(j, &back);
    json_decref(j);
    sg_buf out = {0};
    sg_prof_feedback(&T, "Candidate 4", &back, NULL, &out);
    assert_string_equal(out.data, "Candidate 4 compiled but gives WRONG results for output `y` at "
                                  "sizes N=1001: at index 1000 it wrote 0, the reference is 0.731 "
                                  "(max abs error 0.9, max rel error 1).\n");
    sg_buf_free(&out);
}

static void test_timing_feedback_and_diagnosis(void **state) {
    sg_fb_timing tm = {.candidate = "Candidate 7"};
    tm.baseline = (sg_timing){.median_ns = 2.0e6, .noise = 0.01, .runs = 40};
    tm.cand = (sg_timing){.median_ns = 1.0e6, .noise = 0.01, .runs = 40};
    /* 1.6 GB moved in 1 ms = 1600 GB/s of a 2000 GB/s device: memory-bound. */
    tm.roof = (sg_fb_roofline){
        .have = 1, .bytes = 1.6e9, .flops = 1e6, .peak_gbs = 2000, .peak_gflops = 50000};
    tm.facts = (sg_fb_static){.have = 1,
                              .registers = 64,
                              .local_bytes = 48,
                              .occupancy = 0.25,
                              .occupancy_limiter = "registers"};
    sg_buf out = {0};
    sg_feedback_timing(&T, &tm, &out);
    assert_non_null(
        strstr(out.data, "Candidate 7 is correct. Time 1.00 ms vs baseline 2.00 ms (medians of 40 "
                         "runs, noise ±2.0%): speedup 2.00x, faster than the baseline."));
    assert_non_null(strstr(out.data, "memory-bound at 80% of peak bandwidth"));
    assert_non_null(strstr(out.data, "spill 48 bytes"));
    assert_non_null(strstr(out.data, "occupancy is 25%, limited by registers"));
    sg_buf_free(&out);
    /* Low use of both: latency-bound. No facts: said plainly. */
    tm.roof.bytes = 1e6;
    tm.facts.have = 0;
    sg_feedback_diagnose(&tm, &out);
    assert_non_null(strstr(out.data, "latency-bound"));
    sg_buf_free(&out);
    tm.roof.have = 0;
    sg_feedback_diagnose(&tm, &out);
    assert_string_equal(out.data, "no hardware facts available for this device.");
    sg_buf_free(&out);
    /* Facts without a problem in them (OpenCL): said so, not "no facts". */
    tm.facts = (sg_fb_static){.have = 1, .shared_bytes = 1024};
    sg_feedback_diagnose(&tm, &out);
    assert_non_null(strstr(out.data, "no register spills or occupancy limit"));
    sg_buf_free(&out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary_and_band),
        cmocka_unit_test(test_stability_rule),
        cmocka_unit_test(test_speedup_verdicts),
        cmocka_unit_test(test_compile_feedback_maps_lines_and_trims),
        cmocka_unit_test(test_mismatch_feedback),
        cmocka_unit_test(test_wrong_result_feedback_uses_the_mismatch_template),
        cmocka_unit_test(test_timing_feedback_and_diagnosis),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
