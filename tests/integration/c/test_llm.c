/* The LLM client against in-process replay servers on loopback: least-loaded routing
 * under a per-endpoint cap, abort from inside a delta callback, a fork started from a
 * callback, <think> splitting of a raw stream, and a connect error's retries. */
#include "common/buf.h"
#include "llm/llm.h"
#include "llm/llm_impl.h"

#include <jansson.h>
#include "common/net.h"
#include "replay/replay.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static sg_replay_fault env_fault; /* for the next env_up (then cleared) */

typedef struct env {
    sg_replay_traces ts;
    sg_replay_server *srv[2];
    char url[2][64];
    sg_loop *loop;
    sg_curl_loop *cl;
    sg_llm *llm;
} env;

static void env_up(env *e, sg_replay_dialect d, int cap) {
    memset(e, 0, sizeof *e);
    const char *root = getenv("SPECGEN_ROOT");
    char path[1024];
    snprintf(path, sizeof path, "%s/prompts/traces/vector_scale.jsonl", root ? root : ".");
    sg_err err;
    assert_int_equal(sg_replay_load(path, &e->ts, &err), 0);
    for (int i = 0; i < 2; i++) {
        sg_replay_config cfg = {.host = "127.0.0.1", .speed = 40, .dialect = d, .fault = env_fault};
        e->srv[i] = sg_replay_start(&e->ts, &cfg, &err);
        assert_non_null(e->srv[i]);
        snprintf(e->url[i], sizeof e->url[i], "http://127.0.0.1:%d", sg_replay_port(e->srv[i]));
    }
    e->loop = sg_loop_new_real(&err);
    e->cl = sg_curl_loop_new(e->loop, &err);
    memset(&env_fault, 0, sizeof env_fault);
    const char *urls[2] = {e->url[0], e->url[1]};
    sg_llm_config cfg = {.urls = urls, .n_urls = 2, .max_per_endpoint = cap};
    e->llm = sg_llm_new(e->cl, &cfg, &err);
    assert_non_null(e->llm);
}

static void env_down(env *e) {
    sg_llm_free(e->llm);
    sg_curl_loop_free(e->cl);
    sg_loop_free(e->loop);
    for (int i = 0; i < 2; i++) sg_replay_stop(e->srv[i]);
    sg_replay_traces_free(&e->ts);
}

typedef struct run {
    env *e;
    sg_llm_stream *s;
    sg_buf reasoning, content, fork_text;
    int finished, errors, over_cap, cap, abort_at, n_reasoning, forked;
    int live_bad, live_est; /* live counts that disagreed with the expectation; estimated */
    int per_ep[2];
    sg_llm_result res;
    struct run *fork;
} run;

static int *pending;

static void done(run *r) {
    if (--*pending == 0) sg_loop_stop(r->e->loop);
}

static void on_r(void *arg, const char *t, size_t n) {
    run *r = arg;
    sg_buf_append(&r->reasoning, t, n);
    r->n_reasoning++;
    for (size_t i = 0; i < 2; i++)
        if (r->cap && sg_llm_endpoint_running(r->e->llm, i) > r->cap) r->over_cap = 1;
    if (r->abort_at && r->n_reasoning == r->abort_at) {
        sg_llm_abort(r->s, &r->res);
        r->s = NULL;
        done(r);
    }
}
static void on_c(void *arg, const char *t, size_t n) {
    sg_buf_append(&((run *)arg)->content, t, n);
}
static void on_fin(void *arg, const sg_llm_result *res) {
    run *r = arg;
    r->finished = 1;
    r->res = *res;
    done(r);
}
static void on_err(void *arg, const char *msg, const sg_llm_result *res) {
    run *r = arg;
    print_message("# error: %s\n", msg);
    r->errors++;
    r->res = *res;
    done(r);
}

/* Start n chat streams of max_tokens each; pending counts them down. */
static void start_many(env *e, run *runs, int n, int64_t max_tokens, int cap) {
    static int left;
    left = n;
    pending = &left;
    for (int i = 0; i < n; i++) {
        memset(&runs[i], 0, sizeof runs[i]);
        runs[i].e = e;
        runs[i].cap = cap;
        sg_llm_request req = {.api = SG_LLM_CHAT,
                              .model = "replay",
                              .user = "vector_scale please",
                              .max_tokens = max_tokens,
                              .temperature = -1};
        sg_llm_callbacks cb = {on_r, on_c, NULL, on_fin, on_err, &runs[i]};
        assert_non_null(sg_llm_start(e->llm, &req, &cb, NULL));
    }
}

static void test_routing_cap(void **state) {
    env e;
    env_up(&e, SG_DIALECT_VLLM, 2);
    run runs[8];
    start_many(&e, runs, 8, 60, 2);
    assert_int_equal(sg_llm_active(e.llm), 8);
    assert_int_equal(sg_loop_run(e.loop, NULL), 0);
    int on[2] = {0, 0};
    for (int i = 0; i < 8; i++) {
        assert_int_equal(runs[i].finished, 1);
        assert_int_equal(runs[i].over_cap, 0);
        assert_string_equal(runs[i].res.finish_reason, "length");
        assert_int_equal(runs[i].res.usage.completion_tokens, 60);
        assert_int_equal(runs[i].res.usage.estimated, 0);
        assert_string_equal(runs[i].res.dialect, "vllm");
        char want[80];
        snprintf(want, sizeof want, "%s/v1", e.url[1]);
        on[!strcmp(runs[i].res.endpoint, want) ? 1 : 0]++;
        sg_buf_free(&runs[i].reasoning);
        sg_buf_free(&runs[i].content);
    }
    assert_int_equal(on[0], 4); /* least-loaded: an even split */
    assert_int_equal(on[1], 4);
    assert_int_equal(sg_llm_active(e.llm), 0);
    env_down(&e);
}

static void on_fork_c(void *arg, const char *t, size_t n) {
    sg_buf_append(&((run *)arg)->fork_text, t, n);
}

/* Abort after 40 reasoning deltas; before that, at 30, fork with the reasoning so far. */
static void on_r_fork(void *arg, const char *t, size_t n) {
    run *r = arg;
    on_r(arg, t, n);
    if (r->n_reasoning == 30 && !r->forked) {
        r->forked = 1;
        sg_buf prompt = {0};
        sg_buf_printf(&prompt, "vector_scale\n<think>\n%s\n</think>\n\n", r->reasoning.data);
        sg_llm_callbacks cb = {NULL, on_fork_c, NULL, on_fin, on_err, r->fork};
        (*pending)++;
        assert_non_null(sg_llm_fork(r->e->llm, "replay", prompt.data, 200, &cb, NULL));
        sg_buf_free(&prompt);
    }
}

/* Start one stream and run the loop until it (and anything it started) ends. */
static void run_single(env *e, run *r, const sg_llm_request *req,
                       void (*reasoning)(void *, const char *, size_t)) {
    static int n;
    n = 1;
    pending = &n;
    sg_llm_callbacks cb = {reasoning, on_c, NULL, on_fin, on_err, r};
    r->s = sg_llm_start(e->llm, req, &cb, NULL);
    assert_non_null(r->s);
    assert_int_equal(sg_loop_run(e->loop, NULL), 0);
}

static void test_abort_and_fork_from_callback(void **state) {
    env e;
    env_up(&e, SG_DIALECT_SGLANG, 0);
    run r = {0}, f = {0};
    r.e = f.e = &e;
    r.abort_at = 40;
    r.fork = &f;
    sg_llm_request req = {
        .api = SG_LLM_CHAT, .model = "replay", .user = "vector_scale", .temperature = -1};
    run_single(&e, &r, &req, on_r_fork);
    assert_int_equal(r.n_reasoning, 40); /* nothing after the abort */
    assert_int_equal(r.finished + r.errors, 0);
    assert_string_equal(r.res.finish_reason, "client-abort");
    assert_int_equal(r.res.usage.estimated, 1); /* from the text: see sg_llm_estimate_tokens */
    assert_int_equal(r.res.usage.reasoning_tokens,
                     sg_llm_estimate_tokens((int64_t)r.reasoning.len, 40));
    assert_int_equal(f.finished, 1);
    /* 30 tokens end inside the first paragraph: the offset-0 answer. */
    assert_non_null(strstr(f.fork_text.data, "not decided"));
    assert_int_equal(sg_llm_active(e.llm), 0);
    sg_buf_free(&r.reasoning);
    sg_buf_free(&f.fork_text);
    env_down(&e);
}

static void test_raw_think_split(void **state) {
    env e;
    env_up(&e, SG_DIALECT_RAW, 0);
    run r = {0};
    r.e = &e;
    sg_llm_request req = {
        .api = SG_LLM_COMPLETIONS, .model = "replay", .prompt = "vector_scale", .temperature = -1};
    run_single(&e, &r, &req, on_r);
    assert_int_equal(r.finished, 1);
    assert_non_null(strstr(r.reasoning.data, "Okay, the task is"));
    assert_null(strstr(r.reasoning.data, "think>"));
    assert_non_null(strstr(r.content.data, "vector_scale16"));
    assert_null(strstr(r.content.data, "think>"));
    sg_buf_free(&r.reasoning);
    sg_buf_free(&r.content);
    env_down(&e);
}

static void test_connect_retries(void **state) {
    sg_err err;
    sg_loop *loop = sg_loop_new_real(&err);
    sg_curl_loop *cl = sg_curl_loop_new(loop, &err);
    int port = sg_net_pick_port(&err);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/", port);
    const char *urls[1] = {url};
    sg_llm_config cfg = {.urls = urls, .n_urls = 1, .max_retries = 3, .backoff_ns = 20 * SG_MS};
    sg_llm *llm = sg_llm_new(cl, &cfg, &err);
    env e = {.loop = loop, .llm = llm};
    run r = {0};
    r.e = &e;
    int n = 1;
    pending = &n;
    sg_llm_request req = {.api = SG_LLM_CHAT, .model = "m", .user = "hi", .temperature = -1};
    sg_llm_callbacks cb = {on_r, on_c, NULL, on_fin, on_err, &r};
    int64_t t0 = sg_loop_now(loop);
    r.s = sg_llm_start(llm, &req, &cb, NULL);
    assert_int_equal(sg_loop_run(loop, NULL), 0);
    int64_t took = sg_loop_now(loop) - t0;
    assert_int_equal(r.errors, 1);
    assert_int_equal(r.res.attempts, 4);
    /* Backoff 20, 40, 80 ms, each jittered into its upper half: at least 70 ms. */
    assert_true(took >= 70 * SG_MS);
    sg_llm_free(llm);
    sg_curl_loop_free(cl);
    sg_loop_free(loop);
}

/* One endpoint down: its connect error sidelines it and the retry goes to the other. */
static void test_failover(void **state) {
    env e;
    env_up(&e, SG_DIALECT_LLAMACPP, 0);
    sg_replay_stop(e.srv[0]);
    e.srv[0] = NULL;
    run runs[4];
    start_many(&e, runs, 4, 20, 0);
    assert_int_equal(sg_loop_run(e.loop, NULL), 0);
    char want[80];
    snprintf(want, sizeof want, "%s/v1", e.url[1]);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(runs[i].finished, 1);
        assert_string_equal(runs[i].res.endpoint, want);
        assert_string_equal(runs[i].res.dialect, "llamacpp");
        assert_int_equal(runs[i].res.usage.completion_tokens, 20);
        sg_buf_free(&runs[i].reasoning);
        sg_buf_free(&runs[i].content);
    }
    env_down(&e);
}

/* Live reasoning counts: with the server's running usage (vLLM, continuous_usage_stats:
 * replay-llm streams one token a chunk), exact; without it (SGLang here), the estimate
 * from the text, marked as one. */
static void on_r_live(void *arg, const char *t, size_t n) {
    run *r = arg;
    on_r(arg, t, n);
    int est = -1;
    int64_t live = sg_llm_live_tokens(r->s, 1, &est);
    r->live_est = est;
    int64_t want =
        est ? sg_llm_estimate_tokens((int64_t)r->reasoning.len, r->n_reasoning) : r->n_reasoning;
    if (live != want) r->live_bad++;
}

/* One chat stream of the demo trace, capped at max_tokens, on a fresh env. */
static void one_chat(env *e, run *r, sg_replay_dialect d, int64_t max_tokens,
                     void (*reasoning)(void *, const char *, size_t)) {
    env_up(e, d, 0);
    memset(r, 0, sizeof *r);
    r->e = e;
    sg_llm_request req = {.api = SG_LLM_CHAT,
                          .model = "replay",
                          .user = "vector_scale",
                          .max_tokens = max_tokens,
                          .temperature = -1};
    run_single(e, r, &req, reasoning);
}

static void live_counts(sg_replay_dialect d, int want_estimated) {
    env e;
    run r;
    one_chat(&e, &r, d, 80, on_r_live);
    assert_int_equal(r.finished, 1);
    assert_int_equal(r.n_reasoning, 80);
    assert_int_equal(r.live_bad, 0);
    assert_int_equal(r.live_est, want_estimated);
    assert_int_equal(r.res.usage.reasoning_tokens, 80); /* the final usage, both servers */
    sg_buf_free(&r.reasoning);
    env_down(&e);
}

static void test_live_tokens_from_running_usage(void **state) { live_counts(SG_DIALECT_VLLM, 0); }
static void test_live_tokens_estimated_without_it(void **state) {
    live_counts(SG_DIALECT_SGLANG, 1);
    assert_int_equal(sg_llm_estimate_tokens(10, 1), 3); /* ceil(10 / 4) */
    assert_int_equal(sg_llm_estimate_tokens(10, 5), 5); /* never below the chunks */
}

/* A server that ignores max_tokens (fault ignore_max_tokens): the client cuts the stream
 * and ends it as "length" — at exactly 30 tokens with the server's running count, within
 * the estimate's margin without it — instead of reading the whole trace. */
static void cut_at_max_tokens(sg_replay_dialect d, int most) {
    env_fault = (sg_replay_fault){.kind = SG_FAULT_IGNORE_MAX_TOKENS};
    env e;
    run r;
    one_chat(&e, &r, d, 30, on_r);
    print_message("# %s: %d reasoning deltas before the cut\n", sg_replay_dialect_name(d),
                  r.n_reasoning);
    assert_int_equal(r.finished, 1);
    assert_string_equal(r.res.finish_reason, "length");
    assert_true(r.n_reasoning >= 30 && r.n_reasoning <= most);
    assert_int_equal(sg_llm_active(e.llm), 0);
    sg_buf_free(&r.reasoning);
    sg_buf_free(&r.content);
    env_down(&e);
}

static void test_max_tokens_enforced_by_the_client(void **state) {
    cut_at_max_tokens(SG_DIALECT_VLLM, 30);
    cut_at_max_tokens(SG_DIALECT_SGLANG, 30 + 30 / 4 + 16);
}

/* A fork that continues the final assistant message (vLLM / SGLang chat API). */
static void test_continue_final_message_body(void **state) {
    sg_err err;
    sg_llm_request req = {.api = SG_LLM_CHAT,
                          .model = "m",
                          .system = "S",
                          .user = "U",
                          .assistant = "<think>\nplan\n</think>\n\nHere",
                          .temperature = -1};
    char *body = sg_llm_body(&req, 1, &err);
    assert_non_null(body);
    json_error_t je;
    json_t *j = json_loads(body, 0, &je);
    assert_non_null(j);
    json_t *msgs = json_object_get(j, "messages");
    assert_int_equal(json_array_size(msgs), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(msgs, 2), "role")),
                        "assistant");
    assert_string_equal(json_string_value(json_object_get(json_array_get(msgs, 2), "content")),
                        "<think>\nplan\n</think>\n\nHere");
    assert_true(json_is_true(json_object_get(j, "continue_final_message")));
    assert_true(json_is_false(json_object_get(j, "add_generation_prompt")));
    json_decref(j);
    free(body);
    req.assistant = NULL; /* an ordinary chat request carries neither flag */
    body = sg_llm_body(&req, 1, &err);
    assert_null(strstr(body, "continue_final_message"));
    free(body);
}

/* A message that is not UTF-8 is refused with a reason (jansson would have dropped the
 * message and sent the request without it: issue 17, item 3). */
static void test_body_refuses_non_utf8(void **state) {
    (void)state;
    sg_err err;
    sg_llm_request req = {
        .api = SG_LLM_CHAT, .model = "m", .system = "S", .user = "k\xff", .temperature = -1};
    assert_null(sg_llm_body(&req, 1, &err));
    assert_non_null(strstr(err.msg, "user message is not valid UTF-8 (byte 0xff at offset 1)"));
    req.user = "caf\xc3\xa9 \xe2\x82\xac";
    char *body = sg_llm_body(&req, 1, &err);
    assert_non_null(body);
    free(body);
    req.user = "\xc0\xaf"; /* an overlong '/' */
    assert_null(sg_llm_body(&req, 1, &err));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_body_refuses_non_utf8),
        cmocka_unit_test(test_routing_cap),
        cmocka_unit_test(test_abort_and_fork_from_callback),
        cmocka_unit_test(test_raw_think_split),
        cmocka_unit_test(test_connect_retries),
        cmocka_unit_test(test_failover),
        cmocka_unit_test(test_continue_final_message_body),
        cmocka_unit_test(test_live_tokens_from_running_usage),
        cmocka_unit_test(test_live_tokens_estimated_without_it),
        cmocka_unit_test(test_max_tokens_enforced_by_the_client),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
