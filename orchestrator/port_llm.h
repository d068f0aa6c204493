/* port_llm.h — the real LLM port: ports.h's interface over llm/llm.h.
 *
 * Contract: reasoning streams are chat requests (the server's reasoning parser, or
 * <think> tags split from content); forks are raw /v1/completions requests on the fork
 * prompt, with thinking off, or (SG_FORK_CONTINUE) chat requests whose final assistant
 * message holds the reasoning so far and the answer prefix, which the server continues. The
 * reasoning token count passed to the task is the server's running count where it streams
 * one (vLLM's continuous usage), else the client's estimate from the text (llm.h,
 * sg_llm_estimate_tokens), and says which; summaries carry the server's usage when it sent
 * one and mark estimates. Reasoning streams are cut by the client too past their
 * max_tokens (a server that ignores it). The port borrows the sg_llm, which must
 * outlive it. */
#ifndef SG_PORT_LLM_H
#define SG_PORT_LLM_H

#include "llm/llm.h"
#include "orchestrator/ports.h"

typedef enum {
    SG_FORK_COMPLETIONS = 0, /* raw /v1/completions on specgen's rendering of the template */
    SG_FORK_CONTINUE = 1,    /* chat API, continue_final_message (vLLM, SGLang) */
} sg_fork_mode;

typedef struct sg_port_llm_suffix {
    char *text; /* think_close + answer_prefix */
    int32_t *ids;
    size_t n;
    void *owner; /* whoever fills it */
} sg_port_llm_suffix;

typedef struct sg_port_llm {
    sg_llm *llm;
    sg_fork_mode fork_mode;
    const char *model;
    int64_t reasoning_max_tokens; /* 0: server default */
    double reasoning_temperature; /* < 0: server default */
    double reasoning_top_p;       /* <= 0: server default */
    /* Forks as token ids (docs/speculation.md): the ids of the texts a fork appends to the
     * reasoning (think_close + answer_prefix, one per task language, from the server's
     * /tokenize). With any, the reasoning streams ask for their token ids and a fork whose
     * reasoning stream has them is sent as ids; else forks are text and ids_off says why. */
    const sg_port_llm_suffix *suffixes;
    size_t n_suffixes;
    const char *ids_off;
    int ask_ids; /* the reasoning streams ask for their ids (suffixes there or on the way) */
} sg_port_llm;

/* Fill port with the functions and `impl` = pl (which must outlive the port). */
void sg_port_llm_init(sg_port_llm *pl, sg_llm_port *port);

#endif
