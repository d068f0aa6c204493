/* sse.h — incremental Server-Sent Events parser (the framing of OpenAI-style streams).
 *
 * Contract: feed bytes exactly as they arrive from the network, split anywhere (inside a
 * line, between CR and LF, inside a UTF-8 sequence). Lines end with LF, CRLF or a lone
 * CR. `data:` lines accumulate (joined with '\n'), `event:` sets the type, lines starting
 * with ':' are comments (DeepSeek's keep-alives, sse_starlette's pings), other fields are
 * ignored; an empty line dispatches the event if it carried data. on_event gets the
 * data (NUL-terminated, valid only during the call) and the event type ("" if none).
 * A callback that returns nonzero stops sg_sse_feed, which returns that value; the rest
 * of that buffer is dropped (the caller is abandoning the stream). An event larger than
 * max_event (default 16 MiB) makes sg_sse_feed return SG_SSE_TOO_LARGE. "[DONE]" is an
 * ordinary event here: meaning belongs to the caller. */
#ifndef SG_SSE_H
#define SG_SSE_H

#include "common/buf.h"

#include <stddef.h>
#include <stdint.h>

enum { SG_SSE_TOO_LARGE = -2 };

typedef int (*sg_sse_event_fn)(void *arg, const char *type, const char *data, size_t len);
typedef int (*sg_sse_comment_fn)(void *arg, const char *text, size_t len);

typedef struct sg_sse {
    sg_sse_event_fn on_event;
    sg_sse_comment_fn on_comment; /* may be NULL */
    void *arg;
    size_t max_event;
    sg_buf line;   /* an unfinished line carried to the next feed */
    sg_buf data;   /* data lines of the event being built */
    char type[64]; /* event type, truncated */
    int has_data;  /* a data: line was seen (data may still be empty) */
    int skip_lf;   /* the previous byte was a CR: a following LF ends nothing */
    uint64_t events, comments;
    unsigned crlf_lines, lf_lines; /* line-ending census, for dialect detection */
} sg_sse;

void sg_sse_init(sg_sse *p, sg_sse_event_fn on_event, sg_sse_comment_fn on_comment, void *arg);
int sg_sse_feed(sg_sse *p, const char *bytes, size_t n);
/* Forget any partial line or event (a new stream on the same parser). */
void sg_sse_reset(sg_sse *p);
void sg_sse_free(sg_sse *p);

#endif
