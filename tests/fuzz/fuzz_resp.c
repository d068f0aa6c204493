/* libFuzzer target for kvstore's RESP parser, driven the way a connection drives it:
 * input arrives in pieces (the first byte sets the piece size, its top bit the limits
 * before AUTH), complete requests are consumed from the front, and big bulks are
 * alternately taken out of band (their body skipped in the stream, as conn.c receives it
 * into a value) or declined. Checks that every argument lies inside the request. */
#include "kvstore/resp.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    size_t step = data[0] % 64 + 1;
    sg_kv_parser p = {0};
    p.big_threshold = 16;
    p.unauth = data[0] >> 7; /* the limits before AUTH */
    data++;
    size--;
    sg_buf b = {0};
    size_t fed = 0;
    int bigs = 0;
    while (fed < size) {
        size_t n = size - fed < step ? size - fed : step;
        sg_buf_append(&b, data + fed, n);
        fed += n;
        for (;;) {
            sg_err err;
            int r = sg_kv_parse(&p, b.data, b.len, &err);
            if (r == SG_KV_PARSE_MORE) break;
            if (r == SG_KV_PARSE_ERR) goto out;
            if (r == SG_KV_PARSE_BIG) {
                if (bigs++ % 2) {
                    sg_kv_parse_decline(&p);
                    continue;
                }
                /* As conn.c: the buffer may hold the whole body and part of its CRLF;
                 * the body goes out of band, what follows it stays at p.pos. */
                size_t have = b.len - p.pos, len = (size_t)p.bulk_len;
                if (have > len + 1) abort(); /* BIG only while body + CRLF are incomplete */
                size_t take = have < len ? have : len;
                size_t skip = len - take;
                if (skip > size - fed) goto out; /* the stream ends inside the body */
                fed += skip;
                memmove(b.data + p.pos, b.data + p.pos + take, have - take);
                b.len -= take;
                sg_kv_parse_external(&p);
                continue;
            }
            for (size_t i = 0; i < p.nargs; i++)
                if (!p.args[i].external && p.args[i].off + p.args[i].len > p.pos) abort();
            if (p.pos > b.len) abort();
            sg_buf_consume(&b, p.pos);
            sg_kv_parse_reset(&p);
        }
    }
out:
    sg_kv_parse_free(&p);
    sg_buf_free(&b);
    return 0;
}
