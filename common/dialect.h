/* dialect.h — the OpenAI-compatible LLM servers specgen tells apart, in one list: the LLM
 * client (llm/) names the one it detects from a stream's marks, the scripted server
 * (replay/) imitates the replayed ones, and both read and write their Prometheus metrics
 * by the names given here.
 *
 * Contract: SG_DIALECTS(X) holds each dialect once, as
 *   X(ID, NAME, REPLAYED, LABELLED, RUNNING, GENERATED)
 *  - ID: the enum value SG_DIALECT_ID; NAME: what messages, options and llm-check print;
 *    names are unique and parse back (sg_dialect_parse(sg_dialect_name(d)) == d);
 *  - REPLAYED: 1 when `replay-llm --dialect NAME` imitates it;
 *  - RUNNING, GENERATED: its /metrics gauge of running requests and counter of generated
 *    tokens (NULL: it serves no /metrics); LABELLED: 1 when it labels them with the model
 *    ({model_name="..."}, as vLLM does).
 * Adding a dialect is one entry here plus its behaviour: how the client detects it
 * (llm/llm_chunk.c's rules) and, when replayed, how replay/replay_format.c writes its
 * chunks. tests/unit/test_tables.c walks the list. */
#ifndef SG_DIALECT_H
#define SG_DIALECT_H

#include <stddef.h>

#define SG_DIALECT_VLLM_RUNNING "vllm:num_requests_running"
#define SG_DIALECT_VLLM_GENERATED "vllm:generation_tokens_total"

/* clang-format off */
#define SG_DIALECTS(X)                                                                        \
    X(VLLM, "vllm", 1, 1, SG_DIALECT_VLLM_RUNNING, SG_DIALECT_VLLM_GENERATED)                 \
    X(SGLANG, "sglang", 1, 0, "sglang:num_running_reqs", "sglang:generation_tokens_total")    \
    X(DEEPSEEK, "deepseek", 1, 0, NULL, NULL)                                                 \
    X(LLAMACPP, "llamacpp", 1, 0, "llamacpp:requests_processing",                             \
      "llamacpp:tokens_predicted_total")                                                      \
    /* vLLM without a reasoning parser: <think> tags inside content */                        \
    X(RAW, "raw", 1, 1, SG_DIALECT_VLLM_RUNNING, SG_DIALECT_VLLM_GENERATED)                   \
    /* vLLM before 0.11: delta.reasoning_content */                                           \
    X(VLLM_LEGACY, "vllm-legacy", 0, 1, SG_DIALECT_VLLM_RUNNING, SG_DIALECT_VLLM_GENERATED)   \
    X(LLAMA_CPP_PYTHON, "llama-cpp-python", 0, 0, NULL, NULL)                                 \
    /* none of the marks: any other server */                                                 \
    X(OPENAI, "openai-compatible", 0, 0, NULL, NULL)
/* clang-format on */

typedef enum {
#define SG_DIALECT_ENUM(id, name, replayed, labelled, running, generated) SG_DIALECT_##id,
    SG_DIALECTS(SG_DIALECT_ENUM)
#undef SG_DIALECT_ENUM
        SG_DIALECT_N
} sg_dialect;

typedef struct sg_dialect_info {
    const char *name;
    int replayed, labelled;
    const char *running, *generated; /* NULL: no /metrics */
} sg_dialect_info;

extern const sg_dialect_info sg_dialects[SG_DIALECT_N];

/* NAME, or "?" for a value outside the list. */
const char *sg_dialect_name(sg_dialect d);
/* 0 with *out, or -1 when name is none of the list's. */
int sg_dialect_parse(const char *name, sg_dialect *out);
/* The names joined by sep ("vllm, sglang, ..."), the replayed ones only when replayed_only;
 * truncated to fit n. */
void sg_dialect_names(int replayed_only, const char *sep, char *out, size_t n);

#endif
