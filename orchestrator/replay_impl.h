/* replay_impl.h — replay-llm's chunk writer, shared by the server (replay_server.c)
 * and the dialect formats (replay_format.c). */
#ifndef SG_REPLAY_IMPL_H
#define SG_REPLAY_IMPL_H

#include "common/buf.h"
#include "orchestrator/replay.h"

enum { SG_RF_ROLE, SG_RF_REASONING, SG_RF_CONTENT, SG_RF_FINISH, SG_RF_USAGE };

typedef struct sg_replay_fmt {
    sg_replay_dialect d;
    int chat;
    int include_usage;
    char id[64];
    long long created;
    const char *model;
    int64_t prompt_tokens, completion_tokens, reasoning_tokens;
} sg_replay_fmt;

/* Append one complete SSE event ("data: {...}\n\n") of the given kind. REASONING is
 * written as the dialect's reasoning field in chat (not for raw), else as text. */
void sg_replay_fmt_chunk(sg_buf *out, const sg_replay_fmt *f, int kind, const char *text, size_t n,
                         const char *finish);

#endif
