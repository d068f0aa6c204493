/* libFuzzer: the SSE parser, chunk decoder and <think> splitter on arbitrary bytes.
 * The first byte picks the split size, so splits land everywhere; the decoded log must
 * not depend on how the input was split. Every event also goes through the one-pass
 * scanner (sg_llm_chunk_scan): where it answers, jansson's decode must say the same. */
#include "common/buf.h"
#include "llm/llm_chunk.h"
#include "llm/llm_think.h"
#include "llm/sse.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct out {
    sg_buf log;
    sg_llm_think think;
} out;

static void emit(void *arg, int r, const char *t, size_t n) {
    out *o = arg;
    sg_buf_append(&o->log, r ? "R" : "C", 1);
    sg_buf_append(&o->log, t, n);
}

static void scan_agrees(const char *data, size_t len, json_t *root) {
    sg_buf scratch = {0}, jscratch = {0};
    sg_llm_chunk a, b;
    if (sg_llm_chunk_scan(data, len, &a, &scratch) &&
        (!root || sg_llm_chunk_decode(root, &b, &jscratch, NULL) < 0 ||
         sg_llm_chunk_differs(&a, &b)))
        abort(); /* the scanner answered where jansson refused, or answered otherwise */
    sg_buf_free(&scratch);
    sg_buf_free(&jscratch);
}

static int on_event(void *arg, const char *type, const char *data, size_t len) {
    out *o = arg;
    sg_buf_append(&o->log, data, len);
    json_t *root = json_loadb(data, len, 0, NULL);
    scan_agrees(data, len, root);
    sg_llm_chunk c;
    if (root && sg_llm_chunk_decode(root, &c, NULL, NULL) == 0) {
        if (c.reasoning) emit(o, 1, c.reasoning, c.reasoning_len);
        if (c.content) sg_llm_think_feed(&o->think, c.content, c.content_len, emit, o);
        (void)sg_llm_dialect_name(c.features);
    }
    json_decref(root);
    return 0;
}

static void run(const uint8_t *d, size_t n, size_t step, sg_buf *log) {
    out o = {0};
    sg_llm_think_init(&o.think, SG_LLM_THINK_AUTO);
    sg_sse p;
    sg_sse_init(&p, on_event, NULL, &o);
    p.max_event = 1 << 16;
    for (size_t i = 0; i < n; i += step)
        if (sg_sse_feed(&p, (const char *)d + i, n - i < step ? n - i : step) == SG_SSE_TOO_LARGE)
            break;
    sg_llm_think_flush(&o.think, emit, &o);
    sg_sse_free(&p);
    sg_llm_think_free(&o.think);
    *log = o.log;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    size_t step = 1 + data[0] % 17;
    sg_buf a, b;
    run(data + 1, size - 1, size, &a);
    run(data + 1, size - 1, step, &b);
    if (a.len < (1u << 15) && (a.len != b.len || (a.len && memcmp(a.data, b.data, a.len)))) abort();
    sg_buf_free(&a);
    sg_buf_free(&b);
    return 0;
}
