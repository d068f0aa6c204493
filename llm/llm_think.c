#include "llm/llm_think.h"

#include <string.h>

enum { UNDECIDED, INSIDE, CONTENT };

static const char OPEN_TAG[] = "<think>", CLOSE_TAG[] = "</think>";

void sg_llm_think_init(sg_llm_think *t, sg_llm_think_mode mode) {
    memset(t, 0, sizeof *t);
    t->state = mode == SG_LLM_THINK_OPEN ? INSIDE : mode == SG_LLM_THINK_OFF ? CONTENT : UNDECIDED;
}

void sg_llm_think_free(sg_llm_think *t) { sg_buf_free(&t->held); }

/* Length of the longest suffix of s that is a proper prefix of tag. */
static size_t partial_tag(const char *s, size_t n, const char *tag) {
    size_t tl = strlen(tag);
    for (size_t k = n < tl - 1 ? n : tl - 1; k > 0; k--)
        if (!memcmp(s + n - k, tag, k)) return k;
    return 0;
}

/* Process s (which includes any held bytes); returns bytes to hold back. */
static size_t step(sg_llm_think *t, const char *s, size_t n, sg_llm_think_emit emit, void *arg) {
    while (n > 0) {
        if (t->state == CONTENT) {
            emit(arg, 0, s, n);
            return 0;
        }
        if (t->state == UNDECIDED) {
            size_t ws = 0;
            while (ws < n && strchr(" \t\r\n", s[ws])) ws++;
            size_t rest = n - ws, ol = sizeof OPEN_TAG - 1;
            size_t cmp = rest < ol ? rest : ol;
            if (memcmp(s + ws, OPEN_TAG, cmp) != 0) {
                t->state = CONTENT;
                continue;
            }
            if (rest < ol) { /* blank or a partial "<think": wait, but not forever */
                if (n <= 64) return n;
                t->state = CONTENT;
                continue;
            }
            t->state = INSIDE;
            t->saw_tag = 1;
            s += ws + ol, n -= ws + ol;
            continue;
        }
        const char *end = memmem(s, n, CLOSE_TAG, sizeof CLOSE_TAG - 1);
        if (!end) {
            size_t hold = partial_tag(s, n, CLOSE_TAG);
            if (n > hold) emit(arg, 1, s, n - hold);
            return hold;
        }
        if (end > s) emit(arg, 1, s, (size_t)(end - s));
        t->saw_tag = 1;
        t->state = CONTENT;
        n -= (size_t)(end - s) + sizeof CLOSE_TAG - 1;
        s = end + sizeof CLOSE_TAG - 1;
    }
    return 0;
}

void sg_llm_think_feed(sg_llm_think *t, const char *s, size_t n, sg_llm_think_emit emit,
                       void *arg) {
    if (t->held.len == 0) {
        size_t hold = step(t, s, n, emit, arg);
        if (hold) sg_buf_append(&t->held, s + n - hold, hold);
        return;
    }
    sg_buf_append(&t->held, s, n);
    sg_buf joined = t->held; /* take the bytes; held restarts empty */
    t->held = (sg_buf){0};
    size_t hold = step(t, joined.data, joined.len, emit, arg);
    if (hold) sg_buf_append(&t->held, joined.data + joined.len - hold, hold);
    sg_buf_free(&joined);
}

void sg_llm_think_flush(sg_llm_think *t, sg_llm_think_emit emit, void *arg) {
    if (t->held.len) emit(arg, t->state == INSIDE, t->held.data, t->held.len);
    sg_buf_clear(&t->held);
}
