/* The tables built from one list (X-macros): every value has a name, names are unique, and
 * parse(name(x)) == x, for the LLM dialects (common/dialect.h) as the client and the replay
 * server use them, the replay's fault kinds, and the pool's job kinds. */
#include "common/dialect.h"
#include "llm/llm_chunk.h"
#include "llm/llm_metrics.h"
#include "pool/pool.h"
#include "replay/replay.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static void test_dialects(void **state) {
    (void)state;
    int replayed = 0;
    for (int i = 0; i < SG_DIALECT_N; i++) {
        const char *n = sg_dialect_name((sg_dialect)i);
        assert_non_null(n);
        assert_true(n[0] && strcmp(n, "?"));
        for (int j = 0; j < i; j++) assert_string_not_equal(n, sg_dialect_name((sg_dialect)j));
        sg_dialect d;
        assert_int_equal(sg_dialect_parse(n, &d), 0);
        assert_int_equal(d, i);
        /* a dialect with /metrics has both names */
        assert_int_equal(!sg_dialects[i].running, !sg_dialects[i].generated);
        /* replay imitates exactly the replayed ones, and names them when it refuses */
        sg_replay_dialect rd;
        sg_err err;
        if (sg_dialects[i].replayed) {
            replayed++;
            assert_int_equal(sg_replay_dialect_parse(n, &rd, &err), 0);
            assert_int_equal(rd, i);
            assert_string_equal(sg_replay_dialect_name(rd), n);
        } else {
            assert_int_equal(sg_replay_dialect_parse(n, &rd, &err), -1);
            assert_non_null(strstr(err.msg, "vllm, sglang"));
        }
    }
    assert_int_equal(replayed, 5);
    sg_dialect d;
    assert_int_equal(sg_dialect_parse("nosuch", &d), -1);
    assert_string_equal(sg_dialect_name(SG_DIALECT_N), "?");
    char names[256];
    sg_dialect_names(1, ", ", names, sizeof names);
    assert_string_equal(names, "vllm, sglang, deepseek, llamacpp, raw");
}

/* Every metric name in the list is one the client reads back. */
static void test_dialect_metrics(void **state) {
    (void)state;
    for (int i = 0; i < SG_DIALECT_N; i++) {
        if (!sg_dialects[i].running) continue;
        char text[512];
        snprintf(text, sizeof text, "# HELP x\n%s%s 3\n%s 40\n", sg_dialects[i].running,
                 sg_dialects[i].labelled ? "{model_name=\"m\"}" : "", sg_dialects[i].generated);
        sg_llm_metrics m;
        assert_int_equal(sg_llm_metrics_parse(text, &m), 0);
        assert_true(m.running == 3 && m.generated == 40);
        assert_string_equal(m.running_name, sg_dialects[i].running);
    }
}

/* The client names every dialect of the list but the imitation-only raw from some marks. */
static void test_detection(void **state) {
    (void)state;
    static const unsigned marks[] = {SG_LLM_F_REASONING,
                                     SG_LLM_F_USAGE_NULL,
                                     SG_LLM_F_KEEPALIVE,
                                     SG_LLM_F_TIMINGS,
                                     SG_LLM_F_STOP_REASON | SG_LLM_F_REASONING_CONTENT,
                                     SG_LLM_F_STOP_REASON,
                                     SG_LLM_F_PYJSON,
                                     0};
    int seen[SG_DIALECT_N] = {0};
    for (size_t i = 0; i < sizeof marks / sizeof *marks; i++) seen[sg_llm_dialect(marks[i])] = 1;
    for (int i = 0; i < SG_DIALECT_N; i++)
        if (i != SG_DIALECT_RAW) assert_true(seen[i]);
    assert_string_equal(sg_llm_dialect_name(SG_LLM_F_STOP_REASON | SG_LLM_F_REASONING_CONTENT),
                        "vllm-legacy");
    assert_string_equal(sg_llm_dialect_name(SG_LLM_F_MATCHED_STOP | SG_LLM_F_STOP_REASON),
                        "sglang");
    assert_string_equal(sg_llm_dialect_name(0), "openai-compatible");
}

static void test_faults(void **state) {
    (void)state;
    assert_null(sg_replay_fault_name(SG_FAULT_NONE));
    assert_null(sg_replay_fault_name(SG_FAULT_N));
    for (int k = 1; k < SG_FAULT_N; k++) {
        const char *n = sg_replay_fault_name((sg_replay_fault_kind)k);
        assert_non_null(n);
        for (int j = 1; j < k; j++)
            assert_string_not_equal(n, sg_replay_fault_name((sg_replay_fault_kind)j));
        sg_replay_fault f;
        sg_err err;
        assert_int_equal(sg_replay_fault_parse(n, &f, &err), 0);
        assert_int_equal(f.kind, k);
    }
    sg_replay_fault f;
    sg_err err;
    assert_int_equal(sg_replay_fault_parse("nosuch", &f, &err), -1);
    assert_non_null(strstr(err.msg, "drop, 429, 503, stall, malformed, abort, ignore_max_tokens, "
                                    "no_completions or no_stream"));
}

static void test_pool_roles(void **state) {
    (void)state;
    for (int i = 0; i < SG_POOL_NROLES; i++) {
        const char *n = sg_pool_role_name((sg_pool_role)i);
        assert_true(n[0] && strcmp(n, "?"));
        for (int j = 0; j < i; j++) assert_string_not_equal(n, sg_pool_role_name((sg_pool_role)j));
        sg_pool_role r;
        assert_int_equal(sg_pool_role_parse(n, &r), 0);
        assert_int_equal(r, i);
    }
    sg_pool_role r;
    assert_int_equal(sg_pool_role_parse("nosuch", &r), -1);
    assert_string_equal(sg_pool_role_name(SG_POOL_NROLES), "?");
    assert_string_equal(SG_POOL_ROLE_NAMES, "validate, profile");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dialects),   cmocka_unit_test(test_dialect_metrics),
        cmocka_unit_test(test_detection),  cmocka_unit_test(test_faults),
        cmocka_unit_test(test_pool_roles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
