/* llm_floor.h — bench-llm's floor: the least a reader of the same streams can do.
 *
 * Contract: llm_floor_run opens the same streams as bench-llm's client (the same chat
 * request bytes to replay-llm, with return_token_ids when cfg->ids, started at the same
 * offsets, each forking at the same token counts with the same prompt text, over
 * kept-alive connections as libcurl does)
 * and does nothing with them but epoll_wait, recv and finding event ends ("\n\n" in the
 * bytes; one clock read per recv stamps the events that recv brought). No HTTP parsing
 * beyond the chunked terminator, no JSON. It reports its own CPU time (getrusage of this
 * process: the server is another one), the SSE events it read, and each stream's token
 * receipt times (recv[i][k], n[i] tokens; the caller frees recv[i]). Returns 0, or -1
 * after printing why. */
#ifndef BENCH_LLM_FLOOR_H
#define BENCH_LLM_FLOOR_H

#include <stdint.h>

typedef struct llm_floor_cfg {
    int port; /* replay-llm on 127.0.0.1 */
    int streams, tokens, fork_every, fork_tokens;
    int64_t stagger_ns; /* stream i starts at i * stagger_ns */
    int ids;            /* the chat streams ask for return_token_ids (as the client's) */
} llm_floor_cfg;

typedef struct llm_floor_out {
    double cpu_s, wall_s;
    int64_t events, tokens, wakes;
    int forks, errors;
    int64_t **recv; /* [streams][tokens] receipt times (CLOCK_MONOTONIC ns) */
    int *n;         /* tokens received per stream */
} llm_floor_out;

int llm_floor_run(const llm_floor_cfg *cfg, llm_floor_out *out);

#endif
