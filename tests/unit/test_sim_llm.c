/* The simulated LLM (sim/llm_model.c) on the virtual loop: streams of an instance decode at
 * the rate of its batch, which changes the moment a stream leaves; reasoning chunks end at
 * each cue and code block and are at most 64 tokens; an abort counts the tokens decoded so
 * far; a fork whose prefix is cached prefills only the rest; the same seed writes the same
 * text. Rates are chosen so that every expected time is exact. */
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

#define PREFILL_S 2.0 /* first_token_s 1 + prompt 1000 at 1000 tokens/s */

typedef struct seen {
    sg_loop *loop;
    sg_sim_llm *m;
    double done_s;
    uint64_t reasoning, content, prompt, cached;
    int done;
    int chunks, cues, codes, bad_chunk;
    uint64_t last_tokens;
    sg_buf text;
    uint64_t fork_at; /* fork from this stream once it has this many tokens (0: never) */
    struct seen *fork;
    sg_sim_gen *gen;
} seen;

static void workload(sg_sim_workload *w) {
    sg_sim_workload_default(w);
    w->instances = 1;
    w->rate_points = 2; /* one stream: 100 tokens/s; two: 50 each */
    w->rate_batch[0] = 1, w->rate_tok_s[0] = 100;
    w->rate_batch[1] = 2, w->rate_tok_s[1] = 50;
    w->first_token_s = 1;
    w->prompt_tokens = 1000;
    w->prefill_tok_s = 1000;
    w->reasoning_cv = 0;
    w->reasoning_tokens = 3000;
}

static void on_done(void *arg, uint64_t reasoning, uint64_t content, uint64_t prompt,
                    uint64_t cached) {
    seen *s = arg;
    s->done_s = (double)sg_loop_now(s->loop) / SG_SEC;
    s->reasoning = reasoning, s->content = content, s->prompt = prompt, s->cached = cached;
    s->done = 1;
    s->gen = NULL;
}

static void on_content(void *arg, const char *text, size_t len) {
    seen *s = arg;
    sg_buf_append(&s->text, text, len);
}

static int ends_with(const char *t, size_t n, const char *end) {
    size_t e = strlen(end);
    return n >= e && memcmp(t + n - e, end, e) == 0;
}

static void on_reasoning(void *arg, const char *text, size_t len, uint64_t tokens) {
    seen *s = arg;
    uint64_t k = tokens - s->last_tokens;
    s->last_tokens = tokens;
    s->chunks++;
    /* a cue or a code block only ever ends a chunk */
    int cue = ends_with(text, len, ".\n\nWait,"), code = ends_with(text, len, "```\n");
    const char *c1 = memmem(text, len, "Wait,", 5), *c2 = memmem(text, len, "```c", 4);
    if (k == 0 || k > 64 || (c1 && !cue) || (c2 && !code) || (cue && code)) s->bad_chunk++;
    s->cues += cue, s->codes += code;
    sg_buf_append(&s->text, text, len);
    if (s->fork_at && tokens >= s->fork_at && s->fork && !s->fork->gen && !s->fork->done) {
        sg_sim_gen_cb cb = {NULL, on_content, on_done, s->fork};
        s->fork->gen = sg_sim_llm_fork(s->m, 0, 1, 0, tokens, &cb);
    }
}

static sg_sim_gen *reason(sg_sim_llm *m, seen *s, int stream) {
    sg_sim_gen_cb cb = {on_reasoning, on_content, on_done, s};
    return s->gen = sg_sim_llm_reason(m, 0, 1, stream, &cb);
}

static sg_sim_llm *new_model(const sg_sim_workload *w, uint64_t seed, sg_loop **loop) {
    sg_err err;
    *loop = sg_loop_new_virtual(0, &err);
    assert_non_null(*loop);
    return sg_sim_llm_new(*loop, w, seed);
}

static void free_model(sg_sim_llm *m, sg_loop *loop) {
    sg_sim_llm_free(m);
    sg_loop_free(loop);
}

/* The workload above, one reasoning stream started on it. */
static sg_sim_llm *one_stream(uint64_t seed, seen *s, sg_loop **loop) {
    sg_sim_workload w;
    workload(&w);
    sg_sim_llm *m = new_model(&w, seed, loop);
    *s = (seen){.loop = *loop, .m = m};
    reason(m, s, 0);
    return m;
}

static void run(sg_loop *loop) {
    sg_err err;
    assert_int_equal(sg_loop_run(loop, &err), 0);
}

static void test_one_stream(void **state) {
    (void)state;
    sg_loop *loop;
    seen s;
    sg_sim_llm *m = one_stream(1, &s, &loop);
    run(loop);
    assert_true(s.done);
    assert_true(s.reasoning >= 2999 && s.reasoning <= 3000);
    assert_int_equal(s.content, 700);
    assert_int_equal(s.prompt, 1000);
    double want = PREFILL_S + (double)(s.reasoning + s.content) / 100;
    assert_true(s.done_s > want - 1e-6 && s.done_s < want + 1e-6);
    assert_int_equal(s.bad_chunk, 0);
    assert_int_equal(s.last_tokens, s.reasoning);
    assert_true(s.cues > 0 && s.codes > 0);
    /* chunks of 64 plus one per cue and code block, give or take the ends */
    assert_true(s.chunks >= (int)(s.reasoning / 64) &&
                s.chunks <= (int)(s.reasoning / 64) + s.cues + s.codes + 2);
    assert_non_null(memmem(s.text.data, s.text.len, "#define SIM_Q ", 14));
    sg_buf_free(&s.text);
    free_model(m, loop);
}

/* Two streams share the instance at 50 tokens/s each; when the first ends, the other goes on
 * at 100 from that moment, not from its next chunk. */
static void test_rate_follows_the_batch(void **state) {
    (void)state;
    sg_sim_workload w;
    workload(&w);
    w.reasoning_cv = 0.5; /* two different lengths */
    sg_loop *loop;
    sg_sim_llm *m = new_model(&w, 3, &loop);
    seen a = {.loop = loop, .m = m}, b = {.loop = loop, .m = m};
    reason(m, &a, 0);
    reason(m, &b, 1);
    run(loop);
    assert_true(a.done && b.done);
    seen *first = a.done_s < b.done_s ? &a : &b, *second = first == &a ? &b : &a;
    uint64_t n1 = first->reasoning + first->content, n2 = second->reasoning + second->content;
    assert_true(n1 < n2);
    double t1 = PREFILL_S + (double)n1 / 50;
    double t2 = t1 + ((double)n2 - (t1 - PREFILL_S) * 50) / 100;
    assert_true(first->done_s > t1 - 1e-6 && first->done_s < t1 + 1e-6);
    assert_true(second->done_s > t2 - 1e-6 && second->done_s < t2 + 1e-6);
    sg_buf_free(&a.text);
    sg_buf_free(&b.text);
    free_model(m, loop);
}

typedef struct aborter {
    sg_sim_llm *m;
    seen *s;
    uint64_t reasoning, content;
} aborter;

static void abort_now(sg_loop *loop, void *arg) {
    (void)loop;
    aborter *a = arg;
    sg_sim_llm_abort(a->m, a->s->gen, &a->reasoning, &a->content);
    a->s->gen = NULL;
}

/* Aborted 10.555 s into decoding, mid-chunk: 1055 tokens, not the last chunk's end. */
static void test_abort_counts_the_chunk_so_far(void **state) {
    (void)state;
    sg_loop *loop;
    seen s;
    sg_sim_llm *m = one_stream(1, &s, &loop);
    aborter a = {m, &s, 0, 0};
    sg_loop_timer(loop, (int64_t)((PREFILL_S + 10.555) * SG_SEC), abort_now, &a);
    run(loop);
    assert_false(s.done);
    assert_int_equal(a.reasoning, 1055);
    assert_int_equal(a.content, 0);
    assert_true(s.last_tokens < 1055 && s.last_tokens >= 1055 - 64);
    uint64_t decoded, prefilled, cached;
    sg_sim_llm_counts(m, &decoded, &prefilled, &cached);
    assert_int_equal(decoded, 1055);
    sg_buf_free(&s.text);
    free_model(m, loop);
}

/* A fork from 500 tokens into the reasoning finds that prefix in its instance's cache,
 * unless the cache is smaller than the prefix (no kvstore here: test_sim_kvstore.c has it). */
static void fork_after(double cache_tokens, seen *fork) {
    sg_sim_workload w;
    workload(&w);
    w.cache_tokens = cache_tokens;
    w.kvstore_tokens = 0;
    sg_loop *loop;
    sg_sim_llm *m = new_model(&w, 1, &loop);
    seen s = {.loop = loop, .m = m, .fork_at = 500, .fork = fork};
    fork->loop = loop;
    fork->m = m;
    reason(m, &s, 0);
    run(loop);
    assert_true(s.done && fork->done);
    assert_int_equal(fork->reasoning, 0);
    assert_int_equal(fork->content, 450);
    assert_non_null(memmem(fork->text.data, fork->text.len, "```opencl\n#define SIM_Q", 23));
    sg_buf_free(&s.text);
    sg_buf_free(&fork->text);
    free_model(m, loop);
}

static void test_fork_prefix_cache(void **state) {
    (void)state;
    seen hit = {0}, miss = {0};
    fork_after(400000, &hit);
    assert_true(hit.prompt >= 1000 + 500 + 40 && hit.cached == hit.prompt - 40);
    fork_after(1200, &miss); /* holds the prompt, never 500 tokens past it */
    assert_int_equal(miss.cached, 0);
    assert_int_equal(miss.prompt, hit.prompt);
}

static uint64_t text_hash(uint64_t seed) {
    sg_loop *loop;
    seen s;
    sg_sim_llm *m = one_stream(seed, &s, &loop);
    run(loop);
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < s.text.len; i++)
        h = (h ^ (unsigned char)s.text.data[i]) * 1099511628211ULL;
    sg_buf_free(&s.text);
    free_model(m, loop);
    return h;
}

static void test_same_seed_same_text(void **state) {
    (void)state;
    assert_true(text_hash(5) == text_hash(5));
    assert_true(text_hash(5) != text_hash(6));
}

/* The kernel a fork wrote after `prefix` tokens of stream 0's (ended) reasoning. */
static void fork_kernel(sg_sim_llm *m, sg_loop *loop, uint64_t prefix, char *out, size_t n) {
    seen f = {.loop = loop, .m = m};
    sg_sim_gen_cb cb = {NULL, on_content, on_done, &f};
    f.gen = sg_sim_llm_fork(m, 0, 1, 0, prefix, &cb);
    run(loop);
    assert_true(f.done);
    const char *k = memmem(f.text.data, f.text.len, "```opencl", 9);
    assert_non_null(k);
    snprintf(out, n, "%.*s", (int)(f.text.len - (size_t)(k - f.text.data)), k);
    sg_buf_free(&f.text);
}

/* kernel_step 0.25 on a straight quality line (q = f, no noise to speak of): forks at 50%
 * and 53% of a 3000-token reasoning are in step 2 and write the same kernel, byte for byte;
 * one at 80% (step 3) a new one. With kernel_step 0 every fork writes a new kernel. */
static void test_same_kernel_step(void **state) {
    (void)state;
    for (int on = 0; on <= 1; on++) {
        sg_sim_workload w;
        workload(&w);
        w.q0 = 0, w.q1 = 1, w.q_gamma = 1, w.q_sd = 1e-6;
        w.kernel_step = on ? 0.25 : 0;
        sg_loop *loop;
        sg_sim_llm *m = new_model(&w, 1, &loop);
        seen s = {.loop = loop, .m = m};
        reason(m, &s, 0);
        run(loop);
        char a[512], b[512], c[512];
        fork_kernel(m, loop, 1500, a, sizeof a);
        fork_kernel(m, loop, 1600, b, sizeof b);
        fork_kernel(m, loop, 2400, c, sizeof c);
        assert_true(on ? !strcmp(a, b) : strcmp(a, b) != 0);
        assert_true(strcmp(b, c) != 0);
        assert_non_null(strstr(a, "#define SIM_Q 0.50"));
        assert_non_null(strstr(c, "#define SIM_Q 0.80"));
        sg_buf_free(&s.text);
        free_model(m, loop);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_stream),
        cmocka_unit_test(test_rate_follows_the_batch),
        cmocka_unit_test(test_abort_counts_the_chunk_so_far),
        cmocka_unit_test(test_fork_prefix_cache),
        cmocka_unit_test(test_same_seed_same_text),
        cmocka_unit_test(test_same_kernel_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
