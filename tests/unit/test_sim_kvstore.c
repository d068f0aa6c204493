/* The simulated LLM's two KV tiers and fork placement (sim/llm_model.c) on hand-checked
 * cases. Two instances, no KV capacity, 100 tokens/s per stream at any batch; first-token
 * latency 1 s (a fork's: 0.3 s); prompt 1000 tokens, prefill 1000 tokens/s; reasoning 3000
 * tokens in 64-token chunks (no cue, no code block); fork answers 450 tokens (4.5 s). The
 * kvstore: 100,000 bytes a token over 1 GB/s (0.1 ms a token) after a 10 ms request latency,
 * in chunks of 256 tokens.
 *
 * A reasoning stream on instance 0 ends at 2 + 30 = 32 s; its whole prefix (4000 tokens) is
 * then in its instance's prefix cache and, as 15 whole chunks (3840 tokens), in the kvstore.
 * At 40 s a fork from 2000 tokens into it (prefix 3000, prompt 3040 with its answer prefix):
 *   - own cache (cache_tokens 1e6): prefills its 40 tokens: 40 + 0.3 + 0.04 + 4.5 = 44.84 s;
 *   - kvstore (cache_tokens 0): fetches 3000 tokens (0.01 + 0.3 s), prefills 40 (0.04 s):
 *     40 + 0.3 + 0.31 + 0.04 + 4.5 = 45.15 s;
 *   - neither (cache_tokens 0, no kvstore): prefills 3040 tokens: 40 + 0.3 + 3.04 + 4.5 =
 *     47.84 s. */
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
    uint64_t prompt, cached;
    int done;
} seen;

static void on_done(void *arg, uint64_t reasoning, uint64_t content, uint64_t prompt,
                    uint64_t cached) {
    (void)reasoning, (void)content;
    seen *s = arg;
    s->done_s = (double)sg_loop_now(s->loop) / SG_SEC;
    s->prompt = prompt;
    s->cached = cached;
    s->done = 1;
}

static void on_reasoning(void *arg, const char *t, size_t n, uint64_t tokens) {
    (void)arg, (void)t, (void)n, (void)tokens;
}

static void on_content(void *arg, const char *t, size_t n) { (void)arg, (void)t, (void)n; }

static void workload(sg_sim_workload *w, double cache, double store, double placement) {
    sg_sim_workload_default(w);
    w->instances = 2;
    w->rate_points = 2;
    w->rate_batch[0] = 1, w->rate_tok_s[0] = 100;
    w->rate_batch[1] = 8, w->rate_tok_s[1] = 100;
    w->first_token_s = 1;
    w->prompt_tokens = 1000;
    w->prefill_tok_s = 1000;
    w->reasoning_cv = 0;
    w->reasoning_tokens = 3000.5; /* exp(log()) of it: 3000 whole tokens */
    w->fork_tokens = 450;
    w->code_every_tokens = 1e12;
    w->cue_every_tokens = 1e12;
    w->kv_tokens = 0;
    w->cache_tokens = cache;
    w->kvstore_tokens = store;
    w->kvstore_chunk_tokens = 256;
    w->kv_bytes_per_token = 100000;
    w->kvstore_gb_s = 1;
    w->kvstore_latency_s = 0.01;
    w->kv_placement = placement;
}

typedef struct forker {
    sg_sim_llm *m;
    int task;
    uint64_t prefix;
    seen *out;
} forker;

static void fork_now(sg_loop *loop, void *arg) {
    (void)loop;
    forker *f = arg;
    sg_sim_gen_cb cb = {NULL, on_content, on_done, f->out};
    assert_non_null(sg_sim_llm_fork(f->m, f->task, 1, 0, f->prefix, &cb));
}

/* Reasoning streams of tasks 0..nreason-1 (task 0 on instance 0, then alternating), and at
 * fork_s a fork from `prefix` tokens of task 0's. */
static void run_case(const sg_sim_workload *w, int nreason, double fork_s, uint64_t prefix,
                     seen *fork, sg_sim_llm_signals *sig) {
    sg_err err;
    sg_loop *loop = sg_loop_new_virtual(0, &err);
    assert_non_null(loop);
    sg_sim_llm *m = sg_sim_llm_new(loop, w, 3);
    seen r[4];
    memset(r, 0, sizeof r);
    memset(fork, 0, sizeof *fork);
    fork->loop = loop;
    for (int i = 0; i < nreason; i++) {
        r[i].loop = loop;
        sg_sim_gen_cb cb = {on_reasoning, on_content, on_done, &r[i]};
        assert_non_null(sg_sim_llm_reason(m, i, 1, 0, &cb));
    }
    forker f = {m, 0, prefix, fork};
    sg_loop_timer(loop, (int64_t)(fork_s * SG_SEC), fork_now, &f);
    assert_int_equal(sg_loop_run(loop, &err), 0);
    assert_true(fork->done);
    sg_sim_llm_signals_get(m, sig);
    sg_sim_llm_free(m);
    sg_loop_free(loop);
}

static void test_fork_from_own_cache(void **state) {
    (void)state;
    sg_sim_workload w;
    workload(&w, 1e6, 1e6, SG_SIM_PLACE_PREFIX);
    seen f;
    sg_sim_llm_signals sig;
    run_case(&w, 1, 40, 2000, &f, &sig);
    assert_int_equal(f.prompt, 3040);
    assert_int_equal(f.cached, 3000);
    assert_float_equal(f.done_s, 44.84, 1e-6);
    assert_int_equal(sig.fork_hits, 1);
    assert_int_equal(sig.fork_fetches, 0);
    assert_int_equal(sig.fetched_tokens, 0);
}

static void test_fork_from_kvstore(void **state) {
    (void)state;
    sg_sim_workload w;
    workload(&w, 0, 1e6, SG_SIM_PLACE_PREFIX);
    seen f;
    sg_sim_llm_signals sig;
    run_case(&w, 1, 40, 2000, &f, &sig);
    assert_int_equal(f.cached, 3000);
    assert_float_equal(f.done_s, 45.15, 1e-6);
    assert_int_equal(sig.fork_hits, 0);
    assert_int_equal(sig.fork_fetches, 1);
    assert_int_equal(sig.fetched_tokens, 3000);
}

static void test_fork_prefilled(void **state) {
    (void)state;
    sg_sim_workload w;
    workload(&w, 0, 0, SG_SIM_PLACE_PREFIX);
    seen f;
    sg_sim_llm_signals sig;
    run_case(&w, 1, 40, 2000, &f, &sig);
    assert_int_equal(f.cached, 0);
    assert_float_equal(f.done_s, 47.84, 1e-6);
    assert_int_equal(sig.fork_fetches, 0);
}

/* The kvstore holds whole chunks only, as they were decoded: a fork at 12.3 s, when the
 * running reasoning has 1024 tokens (its 16th chunk ended at 12.24 s; prefix 2024, 1792 of
 * it stored), no own cache: it goes to the least loaded instance (1), fetches 1792 tokens
 * (0.01 + 0.1792 s) and prefills 2064 - 1792 = 272 (0.272 s): done at 12.3 + 0.3 + 0.1892 +
 * 0.272 + 4.5 = 17.5612 s. */
static void test_fork_whole_chunks_only(void **state) {
    (void)state;
    sg_sim_workload w;
    workload(&w, 0, 1e6, SG_SIM_PLACE_PREFIX);
    seen f;
    sg_sim_llm_signals sig;
    run_case(&w, 1, 12.3, 1024, &f, &sig);
    assert_int_equal(f.prompt, 2064);
    assert_int_equal(f.cached, 1792);
    assert_float_equal(f.done_s, 17.5612, 1e-6);
}

/* Placement: three reasoning streams (tasks 0 and 2 on instance 0, task 1 on instance 1) and
 * a fork of task 0's at 12 s from 900 tokens into it (task 0 has decoded 960 by then: 15
 * chunks; prefix 1900, in instance 0's cache; 1960 tokens written, 1792 of them as whole
 * chunks in the kvstore; the fork's prompt 1940). Instance 0 has 2 requests,
 * instance 1 one: prefix:0 sends the fork to instance 1 (2 - 1 > 0 and 2 > 1.5), where it
 * fetches its prefix (its own cache is on instance 0); prefix:1 and prefix keep it on
 * instance 0 (free); load sends it to instance 1. */
static void placed(double placement, double store, seen *f, sg_sim_llm_signals *sig) {
    sg_sim_workload w;
    workload(&w, 1e6, store, placement);
    run_case(&w, 3, 12, 900, f, sig);
}

static void test_placement_threshold(void **state) {
    (void)state;
    seen f;
    sg_sim_llm_signals sig;
    /* on instance 1: 1792 fetched, 1940 - 1792 = 148 prefilled: 12 + 0.3 + (0.01 + 0.1792)
     * + 0.148 + 4.5 = 17.1372 s */
    placed(0, 1e6, &f, &sig);
    assert_int_equal(f.cached, 1792);
    assert_int_equal(sig.fork_hits, 0);
    assert_int_equal(sig.fork_fetches, 1);
    assert_float_equal(f.done_s, 17.1372, 1e-6);
    placed(-1, 1e6, &f, &sig); /* load: the same */
    assert_int_equal(f.cached, 1792);
    assert_float_equal(f.done_s, 17.1372, 1e-6);
    placed(0, 0, &f, &sig); /* no kvstore: all 1940 tokens prefilled */
    assert_int_equal(f.cached, 0);
    assert_float_equal(f.done_s, 12 + 0.3 + 1.94 + 4.5, 1e-6);
    placed(1, 1e6, &f, &sig); /* on instance 0: 40 prefilled */
    assert_int_equal(f.cached, 1900);
    assert_int_equal(sig.fork_hits, 1);
    assert_float_equal(f.done_s, 12 + 0.3 + 0.04 + 4.5, 1e-6);
    placed(SG_SIM_PLACE_PREFIX, 1e6, &f, &sig);
    assert_int_equal(f.cached, 1900);
}

static void test_placement_parse(void **state) {
    (void)state;
    double p;
    sg_err err;
    char name[32];
    assert_int_equal(sg_sim_placement_parse("prefix:4", &p, &err), 0);
    assert_float_equal(p, 4, 0);
    sg_sim_placement_name(p, name, sizeof name);
    assert_string_equal(name, "prefix:4");
    assert_int_equal(sg_sim_placement_parse("load", &p, &err), 0);
    assert_true(p < 0);
    assert_int_equal(sg_sim_placement_parse("prefix", &p, &err), 0);
    assert_true(p >= SG_SIM_PLACE_PREFIX);
    assert_true(sg_sim_placement_parse("prefix:-1", &p, &err) < 0);
    assert_non_null(strstr(err.msg, "prefix:-1"));
    assert_true(sg_sim_placement_parse("near", &p, &err) < 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fork_from_own_cache), cmocka_unit_test(test_fork_from_kvstore),
        cmocka_unit_test(test_fork_prefilled),      cmocka_unit_test(test_fork_whole_chunks_only),
        cmocka_unit_test(test_placement_threshold), cmocka_unit_test(test_placement_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
