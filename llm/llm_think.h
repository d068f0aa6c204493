/* llm_think.h — splits <think>…</think> out of streamed content, for servers that run
 * without a reasoning parser (internal to the LLM client).
 *
 * Contract: feed content deltas in order; emit(arg, is_reasoning, text, len) receives
 * the text with the tags removed, tags may be split across deltas anywhere. AUTO mode
 * waits for the first non-blank text: <think> opens reasoning, anything else makes the
 * whole stream content. OPEN starts inside reasoning. OFF passes everything as content.
 * A partial tag (or, in AUTO, up to 64 leading blank bytes) is held back until it is
 * decided; sg_llm_think_flush releases it at the end of the stream. */
#ifndef SG_LLM_THINK_H
#define SG_LLM_THINK_H

#include "common/buf.h"
#include "llm/llm.h"

typedef void (*sg_llm_think_emit)(void *arg, int is_reasoning, const char *text, size_t len);

typedef struct sg_llm_think {
    int state; /* see llm_think.c */
    int saw_tag;
    sg_buf held; /* text that may be the start of a tag */
} sg_llm_think;

void sg_llm_think_init(sg_llm_think *t, sg_llm_think_mode mode);
void sg_llm_think_feed(sg_llm_think *t, const char *s, size_t n, sg_llm_think_emit emit, void *arg);
void sg_llm_think_flush(sg_llm_think *t, sg_llm_think_emit emit, void *arg);
void sg_llm_think_free(sg_llm_think *t);

#endif
