/* SSE parser + chunk decoder + <think> splitter over a fixture of every dialect, fed
 * whole, byte by byte, and in random pieces: the decoded stream must be identical. */
#include "common/buf.h"
#include "llm/llm_chunk.h"
#include "llm/llm_think.h"
#include "llm/sse.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

typedef struct decoded {
    sg_buf reasoning, content, log; /* log: every event and comment, in order */
    char finish[32];
    sg_llm_usage usage;
    int done, has_usage, errors;
    unsigned features;
    sg_llm_think think;
} decoded;

static void emit(void *arg, int is_reasoning, const char *t, size_t n) {
    decoded *d = arg;
    sg_buf_append(is_reasoning ? &d->reasoning : &d->content, t, n);
}

static int on_event(void *arg, const char *type, const char *data, size_t len) {
    decoded *d = arg;
    sg_buf_printf(&d->log, "[%s]%s\n", type, data);
    if (!strcmp(data, "[DONE]")) return d->done = 1, 0;
    json_t *root = json_loadb(data, len, 0, NULL);
    sg_llm_chunk c;
    if (!root || sg_llm_chunk_decode(root, &c, NULL, NULL) < 0) {
        d->errors++;
        json_decref(root);
        return 0;
    }
    d->features |= c.features;
    if (len > 8 && !memcmp(data, "{\"id\": \"", 8)) d->features |= SG_LLM_F_PYJSON;
    if (c.reasoning) emit(d, 1, c.reasoning, c.reasoning_len);
    if (c.content) sg_llm_think_feed(&d->think, c.content, c.content_len, emit, d);
    if (c.finish_reason) snprintf(d->finish, sizeof d->finish, "%s", c.finish_reason);
    if (c.has_usage) d->usage = c.usage, d->has_usage = 1;
    json_decref(root);
    return 0;
}

static int on_comment(void *arg, const char *t, size_t n) {
    decoded *d = arg;
    sg_buf_printf(&d->log, "comment:%.*s\n", (int)n, t);
    if (memmem(t, n, "keep-alive", 10)) d->features |= SG_LLM_F_KEEPALIVE;
    return 0;
}

static sg_buf read_fixture(const char *name) {
    const char *root = getenv("SPECGEN_ROOT");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fixtures/sse/%s", root ? root : ".", name);
    sg_buf b = {0};
    assert_int_equal(sg_buf_read_file(&b, path), 0);
    return b;
}

/* Feed in pieces of `step` bytes (0: random 1..64). */
static void decode(const sg_buf *in, size_t step, decoded *d, unsigned *seed) {
    memset(d, 0, sizeof *d);
    sg_llm_think_init(&d->think, SG_LLM_THINK_AUTO);
    sg_sse p;
    sg_sse_init(&p, on_event, on_comment, d);
    for (size_t i = 0; i < in->len;) {
        size_t n = step ? step : 1 + (size_t)(rand_r(seed) % 64);
        if (n > in->len - i) n = in->len - i;
        assert_int_equal(sg_sse_feed(&p, in->data + i, n), 0);
        i += n;
    }
    sg_llm_think_flush(&d->think, emit, d);
    if (p.crlf_lines > p.lf_lines) d->features |= SG_LLM_F_CRLF;
    sg_sse_free(&p);
    sg_llm_think_free(&d->think);
}

static void decoded_free(decoded *d) {
    sg_buf_free(&d->reasoning);
    sg_buf_free(&d->content);
    sg_buf_free(&d->log);
}

static const char *s(const sg_buf *b) { return b->data ? b->data : ""; }

typedef struct expect {
    const char *file, *reasoning, *content, *finish, *dialect;
    int64_t prompt, completion, reasoning_tokens;
    int has_usage;
    int64_t cached; /* prompt_tokens_details.cached_tokens; -1: not reported */
} expect;

static const expect EXPECT[] = {
    {"vllm_chat.sse", "Let me think about y=a*x.", "Use one work-item per élément.", "stop", "vllm",
     31, 11, 0, 1, -1},
    {"vllm_completions.sse", "", "```opencl\n__kernel void", "length", "vllm", 120, 3, 0, 1, -1},
    {"sglang_chat_abort.sse", "Okay, the kernel", "Answer:", "abort", "sglang", 50, 6, 4, 1, -1},
    {"deepseek_chat.sse", "We need speed", "Done.", "stop", "deepseek", 12, 5, 3, 1, 0},
    {"llamacpp_chat.sse", "Hmm ok", "Hi!", "stop", "llamacpp", 9, 4, 0, 1, -1},
    {"crlf_chat.sse", "", "Hello there\r\nok", "length", "openai-compatible", 0, 0, 0, 0, -1},
    /* Captured from llama-cpp-python 0.3.36's server (SmolLM2-135M): no usage chunk. */
    {"llamacpppy_chat.sse", "", "I'm glad you're here", "length", "llama-cpp-python", 0, 0, 0, 0,
     -1},
    {"llamacpppy_completions.sse", "", " Paris.\n- The United", "length", "llama-cpp-python", 0, 0,
     0, 0, -1},
    {"think_tags_chat.sse", "Plan: tile", "\n\n```opencl\nk```", "stop", "vllm", 0, 0, 0, 0, -1},
    {"spec_corners.sse", "", "multi-line", "stop", "openai-compatible", 0, 0, 0, 0, -1},
    /* Prefix-cache reports, written to the servers' code (not captured from a running
     * server: none runs here). vLLM with --enable-prompt-tokens-details puts
     * prompt_tokens_details.cached_tokens in the final usage chunk only, not in the running
     * usage (vllm/entrypoints/openai/completion/serving.py, completion_stream_generator;
     * chat_completion/serving.py, _make_prompt_tokens_details). SGLang with
     * --enable-cache-report sends {"cached_tokens": N} when N > 0, else null
     * (python/sglang/srt/entrypoints/openai/serving_base.py,
     * _calculate_streaming_usage_base). */
    {"vllm_completions_cached.sse", "", "```opencl\n__kernel void\n", "stop", "vllm", 1184, 4, 0, 1,
     1168},
    {"sglang_chat_cached.sse", "Tile it", "Done.", "stop", "sglang", 2048, 4, 2, 1, 1920},
};

static void test_fixtures(void **state) {
    unsigned seed = 12345;
    for (size_t i = 0; i < sizeof EXPECT / sizeof EXPECT[0]; i++) {
        const expect *e = &EXPECT[i];
        sg_buf in = read_fixture(e->file);
        decoded whole, bytes, pieces;
        decode(&in, in.len, &whole, &seed);
        print_message("# %s\n", e->file);
        assert_string_equal(s(&whole.reasoning), e->reasoning);
        assert_string_equal(s(&whole.content), e->content);
        assert_string_equal(whole.finish, e->finish);
        assert_string_equal(sg_llm_dialect_name(whole.features), e->dialect);
        assert_int_equal(whole.has_usage, e->has_usage);
        assert_int_equal(whole.usage.prompt_tokens, e->prompt);
        assert_int_equal(whole.usage.completion_tokens, e->completion);
        assert_int_equal(whole.usage.reasoning_tokens, e->reasoning_tokens);
        assert_int_equal(whole.usage.cached_reported, e->cached >= 0);
        assert_int_equal(whole.usage.cached_tokens, e->cached >= 0 ? e->cached : 0);
        assert_true(whole.done);
        assert_int_equal(whole.errors, 0);
        decode(&in, 1, &bytes, &seed);
        assert_string_equal(s(&bytes.log), s(&whole.log));
        assert_string_equal(s(&bytes.reasoning), e->reasoning);
        assert_string_equal(s(&bytes.content), e->content);
        for (int r = 0; r < 20; r++) {
            decode(&in, 0, &pieces, &seed);
            assert_string_equal(s(&pieces.log), s(&whole.log));
            assert_string_equal(s(&pieces.content), e->content);
            decoded_free(&pieces);
        }
        decoded_free(&whole);
        decoded_free(&bytes);
        sg_buf_free(&in);
    }
}

/* Every split point of a CRLF stream: the CR and LF may land in different reads. */
static void test_crlf_every_split(void **state) {
    const char *text = "data: a\r\n\r\n: c\r\ndata: b\r\ndata: c\r\n\r\n";
    size_t n = strlen(text);
    for (size_t k = 0; k <= n; k++) {
        decoded d = {0};
        sg_sse p;
        sg_sse_init(&p, on_event, on_comment, &d);
        assert_int_equal(sg_sse_feed(&p, text, k), 0);
        assert_int_equal(sg_sse_feed(&p, text + k, n - k), 0);
        assert_string_equal(s(&d.log), "[]a\ncomment: c\n[]b\nc\n");
        assert_int_equal(p.crlf_lines, 6);
        assert_int_equal(p.lf_lines, 0);
        sg_sse_free(&p);
        decoded_free(&d);
    }
}

static int stop_cb(void *arg, const char *type, const char *data, size_t len) { return 7; }

static void test_stop_and_limits(void **state) {
    sg_sse p;
    sg_sse_init(&p, stop_cb, NULL, NULL);
    assert_int_equal(sg_sse_feed(&p, "data: x\n\ndata: y\n\n", 18), 7);
    sg_sse_free(&p);
    sg_sse_init(&p, stop_cb, NULL, NULL);
    p.max_event = 16;
    assert_int_equal(sg_sse_feed(&p, "data: 0123456789", 16), 0);
    assert_int_equal(sg_sse_feed(&p, "0123456789\n", 11), SG_SSE_TOO_LARGE);
    sg_sse_free(&p);
    /* An event with no data line dispatches nothing; "data:" alone is an empty event. */
    decoded d = {0};
    sg_sse_init(&p, on_event, NULL, &d);
    assert_int_equal(sg_sse_feed(&p, "event: x\n\ndata:\n\n", 17), 0);
    assert_string_equal(s(&d.log), "[]\n");
    sg_sse_free(&p);
    decoded_free(&d);
}

static void think_case(sg_llm_think_mode mode, const char *const *parts, const char *want_r,
                       const char *want_c) {
    decoded d = {0};
    sg_llm_think_init(&d.think, mode);
    for (; *parts; parts++) sg_llm_think_feed(&d.think, *parts, strlen(*parts), emit, &d);
    sg_llm_think_flush(&d.think, emit, &d);
    assert_string_equal(s(&d.reasoning), want_r);
    assert_string_equal(s(&d.content), want_c);
    sg_llm_think_free(&d.think);
    decoded_free(&d);
}

static void test_think(void **state) {
    think_case(
        SG_LLM_THINK_AUTO,
        (const char *[]){"<", "t", "h", "i", "n", "k", ">", "a<", "/", "b", "</think", ">c", NULL},
        "a</b", "c");
    think_case(SG_LLM_THINK_AUTO, (const char *[]){"plain <think>x</think>", NULL}, "",
               "plain <think>x</think>");
    think_case(SG_LLM_THINK_OPEN, (const char *[]){"r1 ", "r2</", "think>ans", NULL}, "r1 r2",
               "ans");
    think_case(SG_LLM_THINK_OFF, (const char *[]){"<think>x</think>", NULL}, "",
               "<think>x</think>");
    think_case(SG_LLM_THINK_AUTO, (const char *[]){"  ", "<thi", NULL}, "", "  <thi");
    think_case(SG_LLM_THINK_OPEN, (const char *[]){"unfinished </thi", NULL}, "unfinished </thi",
               "");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_crlf_every_split),
        cmocka_unit_test(test_stop_and_limits),
        cmocka_unit_test(test_think),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
