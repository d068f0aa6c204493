/* replay.h — the replay LLM: scripted reasoning traces served over the OpenAI streaming
 * protocol, in the dialect of a chosen real server (`specgen replay-llm`).
 *
 * Contract
 * - A trace (docs/replay-trace.md) is JSON lines: a header, reasoning and answer text
 *   with timing, and fork answers keyed by reasoning offset. Texts are cut into tokens
 *   (leading blanks + at most 6 bytes, never inside a UTF-8 sequence), so offsets and
 *   counts are reproducible. Loading checks every line and names file:line on error.
 * - sg_replay_select picks the trace for a request: among those whose model name
 *   matches (all when none does), the first whose `match` text occurs in the prompt,
 *   else the first without `match`, else the first.
 * - A fork is a request whose prompt closes the reasoning (`</think>` after the last
 *   `<think>`); its reasoning prefix counts n tokens of the trace's reasoning (the common
 *   prefix, leading blanks ignored) and gets the fork answer at the largest offset ≤ n.
 * - The server (libmicrohttpd, one thread per connection) streams each token at the
 *   trace's time divided by speed, notices a client that closed its connection within a
 *   millisecond (poll for RDHUP while waiting) and stops; /metrics and /v1/replay/stats
 *   show what it did. sg_replay_start returns once it listens.
 * - With log_requests set, every completion request is appended to that file as one JSON
 *   line {"path": ..., "request": BODY} before it is answered (tests look at what a
 *   client sent); the file is opened by sg_replay_start, which fails when it cannot.
 * - With cached_prefix set, each streamed request's usage reports cached prompt tokens as
 *   the dialect's server does with its prefix cache on: the longest prefix its prompt text
 *   shares with any of the last 1024 prompts served, in prompt-token units (bytes / 4). */
#ifndef SG_REPLAY_H
#define SG_REPLAY_H

#include "common/dialect.h"
#include "common/err.h"

#include <stddef.h>
#include <stdint.h>

typedef struct sg_replay_token {
    const char *text;
    uint32_t len;
    uint32_t dt_us; /* delay before this token */
} sg_replay_token;

typedef struct sg_replay_seq {
    sg_replay_token *tok;
    size_t n, cap;
    char *text; /* all tokens, concatenated; tok[i].text points into it */
    size_t len;
} sg_replay_seq;

typedef struct sg_replay_fork {
    size_t at; /* reasoning tokens */
    sg_replay_seq answer;
} sg_replay_fork;

typedef struct sg_replay_trace {
    char *file, *model, *match;
    int64_t first_token_us, fork_first_token_us;
    sg_replay_seq reasoning, answer;
    sg_replay_fork *forks; /* sorted by `at` */
    size_t n_forks;
} sg_replay_trace;

typedef struct sg_replay_traces {
    sg_replay_trace *t;
    size_t n;
} sg_replay_traces;

/* Where the token that starts at s[i] ends (the cut above): blanks, then at most 6 other
 * bytes, then the rest of a UTF-8 character. */
size_t sg_replay_token_end(const char *s, size_t n, size_t i);

/* path: a .jsonl file, or a folder whose *.jsonl files are all loaded. */
int sg_replay_load(const char *path, sg_replay_traces *out, sg_err *err);
void sg_replay_traces_free(sg_replay_traces *ts);
const sg_replay_trace *sg_replay_select(const sg_replay_traces *ts, const char *model,
                                        const char *prompt);
/* Tokens of the trace's reasoning that the text (a fork's reasoning prefix) contains. */
size_t sg_replay_prefix_tokens(const sg_replay_trace *t, const char *text, size_t len);
/* The fork answer for a prefix of n tokens, or NULL when every fork lies beyond n. */
const sg_replay_fork *sg_replay_fork_for(const sg_replay_trace *t, size_t n);

/* The dialect imitated: one of common/dialect.h's list whose REPLAYED is 1. parse refuses
 * the others, naming the replayed ones. */
typedef sg_dialect sg_replay_dialect;
int sg_replay_dialect_parse(const char *name, sg_replay_dialect *out, sg_err *err);
const char *sg_replay_dialect_name(sg_replay_dialect d);

/* --fault's kinds, one list: X(ID, NAME) gives SG_FAULT_ID and its name (NONE has none). */
#define SG_REPLAY_FAULTS(X)                                                                        \
    X(NONE, NULL)                                                                                  \
    X(DROP, "drop")                                                                                \
    X(429, "429")                                                                                  \
    X(503, "503")                                                                                  \
    X(STALL, "stall")                                                                              \
    X(MALFORMED, "malformed")                                                                      \
    X(ABORT, "abort")                                                                              \
    X(IGNORE_MAX_TOKENS, "ignore_max_tokens")                                                      \
    X(NO_COMPLETIONS, "no_completions")                                                            \
    X(NO_STREAM, "no_stream")

typedef enum {
#define SG_REPLAY_FAULT_ENUM(id, name) SG_FAULT_##id,
    SG_REPLAY_FAULTS(SG_REPLAY_FAULT_ENUM)
#undef SG_REPLAY_FAULT_ENUM
        SG_FAULT_N
} sg_replay_fault_kind;
/* The kind's name ("drop"), NULL for SG_FAULT_NONE and values outside the list. */
const char *sg_replay_fault_name(sg_replay_fault_kind k);

typedef struct sg_replay_fault {
    sg_replay_fault_kind kind;
    int64_t after;       /* tokens before the fault (drop, stall, malformed, abort) */
    int64_t ms;          /* stall length */
    int64_t retry_after; /* seconds, for 429 */
    int64_t times;       /* requests affected, from the first; 0: all */
} sg_replay_fault;

/* "drop:after=N", "429:retry_after=S", "503", "stall:after=N:ms=M", "malformed:after=N",
 * "abort:after=N", "ignore_max_tokens" (stream everything, as a server that ignores the
 * request's max_tokens); each takes ":times=K". */
int sg_replay_fault_parse(const char *spec, sg_replay_fault *out, sg_err *err);

typedef struct sg_replay_config {
    const char *host;
    int port; /* 0: any free port */
    double speed;
    sg_replay_dialect dialect;
    sg_replay_fault fault;
    const char *log_requests; /* append each completion request here (JSON lines); NULL: no */
    int cached_prefix;        /* report usage cached_tokens: the prompt's leading tokens (bytes / 4)
                                 shared with an earlier prompt served (a prefix cache's hit) */
    int64_t kv_tokens;        /* > 0: a modelled KV cache of that many tokens (replay_kv.c) */
} sg_replay_config;

typedef struct sg_replay_server sg_replay_server;

sg_replay_server *sg_replay_start(const sg_replay_traces *ts, const sg_replay_config *cfg,
                                  sg_err *err);
int sg_replay_port(const sg_replay_server *s);
void sg_replay_stop(sg_replay_server *s);

/* `specgen replay-llm` (cmd_replay_llm.c): the scripted server as a daemon. */
int sg_cmd_replay_llm(int argc, char **argv);

#endif
