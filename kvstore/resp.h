/* resp.h — the RESP request parser and reply writers (internal to kvstore/). Replies
 * are RESP2, or RESP3 where the two differ (null, map) after HELLO 3.
 *
 * Contract: the parser is incremental. The caller keeps the bytes of the current
 * request in one buffer starting at the request's first byte and calls sg_kv_parse
 * with the whole buffer each time more arrives; the parser resumes where it stopped
 * (p->pos) and never reads past len. Results:
 *   SG_KV_PARSE_MORE  need more bytes (sg_kv_parse_want says how many in all)
 *   SG_KV_PARSE_DONE  a request of p->nargs args (spans into the buffer) ends at p->pos;
 *                     nargs == 0 for empty requests, which are to be skipped
 *   SG_KV_PARSE_BIG   a bulk of p->bulk_len >= p->big_threshold bytes starts at p->pos
 *                     and is not all in the buffer yet; the buffer holds only a prefix of
 *                     it after p->pos. The caller either takes the body out of band
 *                     (keeps buffer[0, p->pos), receives the body elsewhere, then calls
 *                     sg_kv_parse_external) or calls sg_kv_parse_decline and keeps
 *                     buffering
 *   SG_KV_PARSE_ERR   protocol error: err holds Redis's message ("Protocol error: ...");
 *                     the connection is to be closed after replying.
 * Both RESP arrays of bulk strings and inline commands (space separated) are accepted.
 * Bulks are at most SG_KV_MAX_BULK (512 MiB) and requests have at most SG_KV_MAX_ARGS
 * (with `unauth` set, as for a client that has not authenticated: 16 KiB and 10). */
#ifndef SG_KV_RESP_H
#define SG_KV_RESP_H

#include "common/buf.h"
#include "common/err.h"

#include <stddef.h>
#include <stdint.h>

#define SG_KV_MAX_BULK ((long long)512 << 20)
#define SG_KV_MAX_ARGS (1024 * 1024)
#define SG_KV_MAX_INLINE (64 * 1024)

enum { SG_KV_PARSE_ERR = -1, SG_KV_PARSE_MORE = 0, SG_KV_PARSE_DONE = 1, SG_KV_PARSE_BIG = 2 };

typedef struct sg_kv_span {
    size_t off, len;
    int external; /* the body was taken out of band (len is its length) */
} sg_kv_span;

typedef struct sg_kv_parser {
    int state;
    int declined;
    long long argc;
    size_t nargs;
    size_t pos;
    long long bulk_len;
    size_t big_threshold; /* 0: never report BIG */
    int unauth;           /* before AUTH: Redis's limits, at most 10 args and 16 KiB bulks */
    sg_kv_span *args;
    size_t cap;
} sg_kv_parser;

int sg_kv_parse(sg_kv_parser *p, const char *buf, size_t len, sg_err *err);
/* The buffer length the parser needs to make progress (for sizing reads). */
size_t sg_kv_parse_want(const sg_kv_parser *p);
void sg_kv_parse_external(sg_kv_parser *p);
void sg_kv_parse_decline(sg_kv_parser *p);
/* Ready for the next request (keeps the args array). */
void sg_kv_parse_reset(sg_kv_parser *p);
void sg_kv_parse_free(sg_kv_parser *p);

/* Reply writers. Error text must not contain CR or LF (they are replaced). */
void sg_kv_reply_simple(sg_buf *b, const char *s);
void sg_kv_reply_error(sg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sg_kv_reply_int(sg_buf *b, long long v);
void sg_kv_reply_bulk(sg_buf *b, const void *p, size_t n);
void sg_kv_reply_bulk_str(sg_buf *b, const char *s);
void sg_kv_reply_nil(sg_buf *b); /* RESP2 null bulk $-1 */
/* Null and map in the connection's protocol: RESP3 `_` and `%n`, RESP2 `$-1` and an
 * array of 2n (what HELLO 3 clients such as redis-py 8 expect). */
void sg_kv_reply_null(sg_buf *b, int resp3);
void sg_kv_reply_map(sg_buf *b, long long pairs, int resp3);
void sg_kv_reply_array(sg_buf *b, long long n);
void sg_kv_reply_bulk_header(sg_buf *b, uint64_t n);

#endif
