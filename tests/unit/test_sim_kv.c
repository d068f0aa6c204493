/* The simulated LLM's KV capacity (sim/llm_model.c, kv_tokens > 0) on a hand-checked case:
 * one instance of 1000 KV tokens at 100 tokens/s per stream (batch 1 or 2), prefill 1000
 * tokens/s one at a time, no first-token latency; two reasoning streams A and B of 300 prompt
 * tokens, 600 reasoning and 100 answer tokens each, started together (B second).
 *
 *   0.0   both admitted (600 KV); A prefills to 0.3, B after it to 0.6
 *   0.94, 1.24, ...  chunks of 64 tokens end, A's every 0.64 s from 0.3, B's from 0.6, each
 *         adding its tokens to the KV: 664, 728, 792, 856, 920, 984
 *   2.86  A's fourth chunk: 556 + 492 = 1048 > 1000: B (the newest) is preempted. B had
 *         decoded 34 of its fifth chunk (30 left) and must recompute 300 + 192 = 492 tokens;
 *         556 + 492 does not fit, so B waits
 *   7.3   A ends (0.3 + 700 tokens / 100; its KV peaks at exactly 1000, not over); B is
 *         admitted, prefills 492 tokens (0.492 s) and resumes at 7.792: 30 + 344 reasoning
 *         + 100 answer tokens = 4.74 s
 *  12.532 B ends, with all 600 reasoning tokens.
 * (No kvstore there; test_preempted_fetch_from_kvstore is the same case with one.) */
#include "common/buf.h"
#include "common/loop.h"
#include "sim/sim.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

typedef struct seen {
    sg_loop *loop;
    double done_s;
    uint64_t reasoning, content;
    int done;
} seen;

static void on_done(void *arg, uint64_t reasoning, uint64_t content, uint64_t prompt,
                    uint64_t cached) {
    (void)prompt, (void)cached;
    seen *s = arg;
    s->done_s = (double)sg_loop_now(s->loop) / SG_SEC;
    s->reasoning = reasoning;
    s->content = content;
    s->done = 1;
}

static void on_reasoning(void *arg, const char *t, size_t n, uint64_t tokens) {
    (void)arg, (void)t, (void)n, (void)tokens;
}

static void on_content(void *arg, const char *t, size_t n) { (void)arg, (void)t, (void)n; }

static void workload(sg_sim_workload *w, double kv_tokens) {
    sg_sim_workload_default(w);
    w->instances = 1;
    w->rate_points = 2; /* 100 tokens/s per stream at batch 1 and 2 */
    w->rate_batch[0] = 1, w->rate_tok_s[0] = 100;
    w->rate_batch[1] = 8, w->rate_tok_s[1] = 100;
    w->first_token_s = 0;
    w->prompt_tokens = 300;
    w->prefill_tok_s = 1000;
    w->reasoning_cv = 0;
    w->reasoning_tokens = 600.5; /* exp(log()) of it: 600 whole tokens */
    w->final_tokens = 100;
    w->code_every_tokens = 1e12; /* no cue, no code block: 64-token chunks */
    w->cue_every_tokens = 1e12;
    w->cache_tokens = 0;
    w->kv_tokens = kv_tokens;
    w->kvstore_tokens = 0; /* no kvstore: the preempted recompute everything */
}

/* kvstore (store > 0): its capacity; a token's KV is 100,000 bytes over 1 GB/s (0.1 ms a
 * token) after a 10 ms request latency, in chunks of 256 tokens. */
static void run_two_store(double kv_tokens, double store, seen *a, seen *b,
                          sg_sim_llm_signals *sig) {
    sg_err err;
    sg_loop *loop = sg_loop_new_virtual(0, &err);
    assert_non_null(loop);
    sg_sim_workload w;
    workload(&w, kv_tokens);
    w.kvstore_tokens = store;
    w.kvstore_chunk_tokens = 256;
    w.kv_bytes_per_token = 100000;
    w.kvstore_gb_s = 1;
    w.kvstore_latency_s = 0.01;
    sg_sim_llm *m = sg_sim_llm_new(loop, &w, 7);
    memset(a, 0, sizeof *a);
    memset(b, 0, sizeof *b);
    a->loop = b->loop = loop;
    sg_sim_gen_cb ca = {on_reasoning, on_content, on_done, a};
    sg_sim_gen_cb cb = {on_reasoning, on_content, on_done, b};
    assert_non_null(sg_sim_llm_reason(m, 0, 1, 0, &ca));
    assert_non_null(sg_sim_llm_reason(m, 1, 1, 0, &cb));
    assert_int_equal(sg_loop_run(loop, &err), 0);
    sg_sim_llm_signals_get(m, sig);
    sg_sim_llm_free(m);
    sg_loop_free(loop);
}

static void run_two(double kv_tokens, seen *a, seen *b, sg_sim_llm_signals *sig) {
    run_two_store(kv_tokens, 0, a, b, sig);
}

static void test_preempt_and_recompute(void **state) {
    (void)state;
    seen a, b;
    sg_sim_llm_signals sig;
    run_two(1000, &a, &b, &sig);
    assert_true(a.done && b.done);
    assert_int_equal(a.reasoning, 600);
    assert_int_equal(b.reasoning, 600);
    assert_int_equal(a.content, 100);
    assert_int_equal(b.content, 100);
    assert_float_equal(a.done_s, 7.3, 1e-6);
    assert_float_equal(b.done_s, 12.532, 1e-6);
    assert_int_equal(sig.preemptions, 1);
    assert_int_equal(sig.recomputed_tokens, 492);
    assert_int_equal(sig.running, 0);
    assert_int_equal(sig.waiting, 0);
    assert_float_equal(sig.kv_usage, 0, 1e-12);
}

/* The same case with a kvstore: B's context at its preemption (492 tokens) was stored in
 * whole chunks as it decoded: 256 tokens. Re-admitted at 7.3, B prefills only the other 236
 * (0.236 s) and fetches the 256 (0.01 + 256 x 0.1 ms = 0.0356 s): it resumes at 7.5716 and
 * ends 4.74 s later, at 12.3116 (0.2204 s sooner than recomputing all 492). */
static void test_preempted_fetch_from_kvstore(void **state) {
    (void)state;
    seen a, b;
    sg_sim_llm_signals sig;
    run_two_store(1000, 1e6, &a, &b, &sig);
    assert_true(a.done && b.done);
    assert_int_equal(b.reasoning, 600);
    assert_float_equal(a.done_s, 7.3, 1e-6);
    assert_float_equal(b.done_s, 12.3116, 1e-6);
    assert_int_equal(sig.preemptions, 1);
    assert_int_equal(sig.recomputed_tokens, 236);
    assert_int_equal(sig.fetched_tokens, 256);
}

/* The same two streams with room for both: nothing is preempted; both decode side by side
 * (A from 0.3 s, B from 0.6 s after A's prefill) and end 7 s later. */
static void test_room_for_both(void **state) {
    (void)state;
    seen a, b;
    sg_sim_llm_signals sig;
    run_two(2000, &a, &b, &sig);
    assert_int_equal(sig.preemptions, 0);
    assert_float_equal(a.done_s, 7.3, 1e-6);
    assert_float_equal(b.done_s, 7.6, 1e-6);
}

/* Room for one prompt only (500): B waits in the queue until A ends, then prefills just its
 * prompt, nothing to recompute: admitted at 7.3, decoding from 7.6, done 7 s later. A, alone
 * on the instance, outgrows the capacity but is never preempted (nothing else to free). */
static void test_waits_for_room(void **state) {
    (void)state;
    seen a, b;
    sg_sim_llm_signals sig;
    run_two(500, &a, &b, &sig);
    assert_true(a.done && b.done);
    assert_int_equal(b.reasoning, 600);
    assert_int_equal(sig.preemptions, 0);
    assert_int_equal(sig.recomputed_tokens, 0);
    assert_float_equal(a.done_s, 7.3, 1e-6);
    assert_float_equal(b.done_s, 14.6, 1e-6);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_preempt_and_recompute),
        cmocka_unit_test(test_preempted_fetch_from_kvstore),
        cmocka_unit_test(test_room_for_both),
        cmocka_unit_test(test_waits_for_room),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
