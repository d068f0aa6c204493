/* llm_chunk.h — decodes one streamed JSON chunk of any OpenAI-compatible dialect, and
 * names the dialect from the marks the chunks carry (internal to the LLM client).
 *
 * Contract: sg_llm_chunk_decode reads choices[0].delta.{reasoning, reasoning_content,
 * content} (chat) or choices[0].text (completions), choices[0].finish_reason, `usage`
 * (with completion_tokens_details.reasoning_tokens or top-level reasoning_tokens, and
 * prompt_tokens_details.cached_tokens), a mid-stream `error`, and vLLM's token ids
 * (return_token_ids): choices[0].token_ids, and the prompt's prompt_token_ids (top level for
 * chat, else in choices[0] for completions); of an ids array only its integers count, as
 * int32. Strings borrow from root (the scanner's: from its scratch); ids live in the
 * scratch buffer. Unknown fields are ignored. */
#ifndef SG_LLM_CHUNK_H
#define SG_LLM_CHUNK_H

#include "common/buf.h"
#include "common/dialect.h"
#include "common/err.h"
#include "llm/llm.h"

#include <jansson.h>

/* Marks that tell servers apart. */
enum {
    SG_LLM_F_REASONING = 1u << 0,         /* delta.reasoning: vLLM >= 0.11 */
    SG_LLM_F_REASONING_CONTENT = 1u << 1, /* delta.reasoning_content */
    SG_LLM_F_STOP_REASON = 1u << 2,       /* choice.stop_reason: vLLM */
    SG_LLM_F_MATCHED_STOP = 1u << 3,      /* choice.matched_stop: SGLang */
    SG_LLM_F_USAGE_NULL = 1u << 4,        /* "usage": null in every chunk: SGLang */
    SG_LLM_F_TIMINGS = 1u << 5,           /* "timings": llama.cpp server */
    SG_LLM_F_FP_BUILD = 1u << 6,          /* system_fingerprint "b1234-...": llama.cpp */
    SG_LLM_F_FP_DEEPSEEK = 1u << 7,       /* system_fingerprint "fp_...": DeepSeek API */
    SG_LLM_F_KEEPALIVE = 1u << 8,         /* ": keep-alive" comments: DeepSeek */
    SG_LLM_F_CRLF = 1u << 9,              /* CRLF framing (allowed by the SSE spec) */
    SG_LLM_F_THINK_TAGS = 1u << 10,       /* <think> inside content: no reasoning parser */
    SG_LLM_F_USAGE = 1u << 11,            /* a usage object arrived */
    SG_LLM_F_PYJSON = 1u << 12,           /* {"id": "...  Python's json.dumps: llama-cpp-python */
};

typedef struct sg_llm_chunk {
    const char *reasoning, *content;
    size_t reasoning_len, content_len;
    const char *finish_reason; /* NULL: none in this chunk */
    const char *error;         /* a mid-stream error message, or NULL */
    int has_usage;
    sg_llm_usage usage;
    unsigned features;
    const int32_t *prompt_ids, *gen_ids; /* token ids (n_*: 0 when none came) */
    size_t n_prompt_ids, n_gen_ids;
} sg_llm_chunk;

/* scratch: where the ids go (cleared when the chunk has ids), as the scanner's; NULL: ids
 * are not read. */
int sg_llm_chunk_decode(json_t *root, sg_llm_chunk *c, sg_buf *scratch, sg_err *err);
/* The same from the chunk's bytes in one pass, without jansson (llm_scan.c): 1 with c
 * filled exactly as jansson + sg_llm_chunk_decode would fill it, or 0 when it declines
 * (an error chunk, anything malformed or unusual: see llm_scan.c), and the caller
 * decodes with jansson. c's strings live in scratch (unescaped, NUL-terminated) until the
 * next call; scratch grows to the largest chunk once, then nothing is allocated. */
int sg_llm_chunk_scan(const char *data, size_t len, sg_llm_chunk *c, sg_buf *scratch);
/* NULL when a and b carry the same deltas, finish, error, usage, marks and ids; else the
 * name of the first field that differs (the scanner against jansson, in tests). */
const char *sg_llm_chunk_differs(const sg_llm_chunk *a, const sg_llm_chunk *b);
/* The integers of a JSON array of token ids appended to b as int32 (anything else in it
 * skipped); how many. */
size_t sg_llm_json_ids(json_t *a, sg_buf *b);
/* The dialect the marks name (common/dialect.h), and its name. */
sg_dialect sg_llm_dialect(unsigned features);
const char *sg_llm_dialect_name(unsigned features);

#endif
