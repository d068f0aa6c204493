/* orchestrator/progress.h (the ETA from the budgets), common/prom.h (the text format's
 * pieces) and orchestrator/metrics.h (the counts the events make). */
#include "common/prom.h"
#include "orchestrator/metrics.h"
#include "orchestrator/progress.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define S 1000000000LL

static void test_eta_time_budget(void **state) {
    (void)state;
    sg_progress p = {.elapsed_ns = 10 * S, .budget_ns = 60 * S};
    assert_int_equal(sg_progress_eta(&p), 50 * S);
    p.elapsed_ns = 70 * S; /* past it: 0, not negative */
    assert_int_equal(sg_progress_eta(&p), 0);
    sg_progress none = {.elapsed_ns = 5 * S};
    assert_int_equal(sg_progress_eta(&none), -1);
}

static void test_eta_tokens(void **state) {
    (void)state;
    /* 1000 tokens in 10 s, 4000 left: 40 s, sooner than the time budget's 50 s */
    sg_progress p = {
        .elapsed_ns = 10 * S, .budget_ns = 60 * S, .tokens = 1000, .budget_tokens = 5000};
    assert_int_equal(sg_progress_eta(&p), 40 * S);
}

static void test_eta_queue(void **state) {
    (void)state;
    /* two ended in 20 s each; 2 running (longest 5 s in), 3 left, 2 at a time:
     * 15 s for the running ones, then 2 waves of 20 s */
    sg_progress p = {.elapsed_ns = 45 * S,
                     .left = 3,
                     .running = 2,
                     .concurrency = 2,
                     .ended = 2,
                     .ended_task_ns = 40 * S,
                     .running_elapsed_max = 5 * S,
                     .task_budget_ns = 1800 * S};
    assert_int_equal(sg_progress_eta(&p), 15 * S + 40 * S);
    /* none ended: the task budget per task */
    sg_progress q = {.left = 1,
                     .running = 1,
                     .concurrency = 1,
                     .task_budget_ns = 100 * S,
                     .running_elapsed_max = 30 * S};
    assert_int_equal(sg_progress_eta(&q), 70 * S + 100 * S);
    /* a running task past the mean is not done: half a mean more */
    sg_progress r = {.running = 1,
                     .concurrency = 1,
                     .ended = 1,
                     .ended_task_ns = 10 * S,
                     .running_elapsed_max = 12 * S};
    assert_int_equal(sg_progress_eta(&r), 5 * S);
}

static void test_prom_pieces(void **state) {
    (void)state;
    sg_buf b = {0};
    sg_prom_label(&b, "a\"b\\c\nd");
    assert_string_equal(b.data, "a\\\"b\\\\c\\nd");
    sg_buf_free(&b);
    static const double le[] = {1, 2};
    sg_prom_hist h;
    sg_prom_hist_init(&h, le, 2);
    sg_prom_hist_observe(&h, 0.5);
    sg_prom_hist_observe(&h, 1.5);
    sg_prom_hist_observe(&h, 9);
    sg_prom_hist_write(&b, "x", "k=\"v\"", &h);
    assert_non_null(strstr(b.data, "x_bucket{k=\"v\",le=\"1\"} 1\n"));
    assert_non_null(strstr(b.data, "x_bucket{k=\"v\",le=\"2\"} 2\n"));
    assert_non_null(strstr(b.data, "x_bucket{k=\"v\",le=\"+Inf\"} 3\n"));
    assert_non_null(strstr(b.data, "x_count{k=\"v\"} 3\n"));
    sg_buf_free(&b);
    sg_prom_build_info(&b, "test");
    assert_non_null(strstr(b.data, "specgen_build_info{version=\""));
    assert_non_null(strstr(b.data, "component=\"test\"} 1\n"));
    sg_buf_free(&b);
}

static void ev(sg_metrics *m, int task, const char *json) {
    json_t *e = json_loads(json, 0, NULL);
    assert_non_null(e);
    sg_metrics_event(m, task, e);
    json_decref(e);
}

static void test_metrics_events(void **state) {
    (void)state;
    sg_metrics *m = sg_metrics_new("campaign");
    sg_metrics_set_tasks(m, 3);
    ev(m, 1, "{\"ev\":\"task_start\",\"t_ms\":0,\"task\":\"softmax\"}");
    ev(m, 1, "{\"ev\":\"iteration_start\",\"t_ms\":1}");
    ev(m, 1, "{\"ev\":\"candidate\",\"t_ms\":1000,\"candidate\":1,\"status\":\"submitted\"}");
    ev(m, 1, "{\"ev\":\"candidate\",\"t_ms\":1100,\"candidate\":2,\"status\":\"duplicate\"}");
    ev(m, 1, "{\"ev\":\"job_done\",\"t_ms\":3000,\"candidate\":1,\"verdict\":\"pass\"}");
    ev(m, 1, "{\"ev\":\"new_best\",\"t_ms\":3000,\"candidate\":1,\"speedup\":1.5}");
    ev(m, 1,
       "{\"ev\":\"generation_done\",\"kind\":\"fork\",\"reasoning_tokens\":0,"
       "\"content_tokens\":40,\"first_token_ms\":200}");
    sg_buf b = {0};
    sg_metrics_write(m, &b);
    const char *want[] = {"specgen_tasks{state=\"queued\"} 2\n",
                          "specgen_tasks{state=\"running\"} 1\n",
                          "specgen_task_best_speedup{task=\"softmax\"} 1.5\n",
                          "specgen_iterations_total 1\n",
                          "specgen_candidates_total{verdict=\"duplicate\"} 1\n",
                          "specgen_candidates_total{verdict=\"pass\"} 1\n",
                          "specgen_tokens_total{kind=\"fork\"} 40\n",
                          "specgen_feedback_latency_seconds_bucket{le=\"2.5\"} 1\n",
                          "specgen_feedback_latency_seconds_bucket{le=\"1\"} 0\n",
                          "specgen_llm_first_token_seconds_bucket{kind=\"fork\",le=\"0.25\"} 1\n"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(b.data, want[i])) fail_msg("missing: %s in\n%s", want[i], b.data);
    sg_buf_free(&b);
    sg_metrics_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eta_time_budget), cmocka_unit_test(test_eta_tokens),
        cmocka_unit_test(test_eta_queue),       cmocka_unit_test(test_prom_pieces),
        cmocka_unit_test(test_metrics_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
