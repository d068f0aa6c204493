/* kvstore RESP parser: whole and byte-by-byte requests, inline commands, big bulks
 * taken out of band, protocol errors; reply writers. */
#include "kvstore/kvstore.h"
#include "kvstore/resp.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static int arg_is(const sg_kv_parser *p, const char *buf, size_t i, const char *want) {
    return p->args[i].len == strlen(want) &&
           memcmp(buf + p->args[i].off, want, p->args[i].len) == 0;
}

static void whole_request(void **state) {
    const char *req = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n";
    sg_kv_parser p = {0};
    assert_int_equal(sg_kv_parse(&p, req, strlen(req), NULL), SG_KV_PARSE_DONE);
    assert_int_equal(p.nargs, 3);
    assert_int_equal(p.pos, strlen(req));
    assert_true(arg_is(&p, req, 0, "SET") && arg_is(&p, req, 1, "k") &&
                arg_is(&p, req, 2, "hello"));
    sg_kv_parse_free(&p);
}

static void byte_by_byte(void **state) {
    const char *req = "*2\r\n$3\r\nGET\r\n$10\r\n0123456789\r\n*1\r\n$4\r\nPING\r\n";
    size_t first = strlen("*2\r\n$3\r\nGET\r\n$10\r\n0123456789\r\n");
    sg_kv_parser p = {0};
    for (size_t n = 0; n < first; n++)
        assert_int_equal(sg_kv_parse(&p, req, n, NULL), SG_KV_PARSE_MORE);
    assert_int_equal(sg_kv_parse(&p, req, first, NULL), SG_KV_PARSE_DONE);
    assert_true(arg_is(&p, req, 1, "0123456789"));
    sg_kv_parse_reset(&p);
    const char *next = req + first;
    assert_int_equal(sg_kv_parse(&p, next, strlen(next), NULL), SG_KV_PARSE_DONE);
    assert_true(arg_is(&p, next, 0, "PING"));
    sg_kv_parse_free(&p);
}

static void inline_and_empty(void **state) {
    sg_kv_parser p = {0};
    const char *req = "  SET  a   b\r\n";
    assert_int_equal(sg_kv_parse(&p, req, strlen(req), NULL), SG_KV_PARSE_DONE);
    assert_int_equal(p.nargs, 3);
    assert_true(arg_is(&p, req, 2, "b"));
    sg_kv_parse_reset(&p);
    assert_int_equal(sg_kv_parse(&p, "\r\n", 2, NULL), SG_KV_PARSE_DONE);
    assert_int_equal(p.nargs, 0);
    sg_kv_parse_reset(&p);
    assert_int_equal(sg_kv_parse(&p, "*0\r\n", 4, NULL), SG_KV_PARSE_DONE);
    assert_int_equal(p.nargs, 0);
    assert_int_equal(p.pos, 4);
    sg_kv_parse_free(&p);
}

static void big_bulk_out_of_band(void **state) {
    char req[128];
    int n = snprintf(req, sizeof req, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\nabc", 100000);
    sg_kv_parser p = {0};
    p.big_threshold = 65536;
    assert_int_equal(sg_kv_parse(&p, req, (size_t)n, NULL), SG_KV_PARSE_BIG);
    assert_int_equal(p.bulk_len, 100000);
    assert_int_equal(p.nargs, 2);
    /* the caller keeps req[0, pos) and receives the body elsewhere */
    size_t keep = p.pos;
    sg_kv_parse_external(&p);
    memcpy(req + keep, "\r\n", 2);
    assert_int_equal(sg_kv_parse(&p, req, keep + 1, NULL), SG_KV_PARSE_MORE);
    assert_int_equal(sg_kv_parse(&p, req, keep + 2, NULL), SG_KV_PARSE_DONE);
    assert_int_equal(p.nargs, 3);
    assert_true(p.args[2].external);
    assert_int_equal(p.args[2].len, 100000);
    /* declined: the parser just waits for the whole body */
    sg_kv_parse_reset(&p);
    assert_int_equal(sg_kv_parse(&p, req, (size_t)n, NULL), SG_KV_PARSE_BIG);
    sg_kv_parse_decline(&p);
    assert_int_equal(sg_kv_parse(&p, req, (size_t)n, NULL), SG_KV_PARSE_MORE);
    assert_int_equal(sg_kv_parse_want(&p), p.pos + 100000 + 2);
    sg_kv_parse_free(&p);
}

static void protocol_errors(void **state) {
    static const struct {
        const char *req, *msg;
    } cases[] = {
        {"*x\r\n", "Protocol error: invalid multibulk length"},
        {"*99999999\r\n", "Protocol error: invalid multibulk length"},
        {"*1\r\n+OK\r\n", "Protocol error: expected '$', got '+'"},
        {"*1\r\n$-5\r\n", "Protocol error: invalid bulk length"},
        {"*1\r\n$536870913\r\n", "Protocol error: invalid bulk length"},
        {"*1\r\n$2\r\nabcd", "Protocol error: bulk string not terminated by CRLF"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sg_kv_parser p = {0};
        sg_err err;
        assert_int_equal(sg_kv_parse(&p, cases[i].req, strlen(cases[i].req), &err),
                         SG_KV_PARSE_ERR);
        assert_string_equal(err.msg, cases[i].msg);
        sg_kv_parse_free(&p);
    }
}

/* Before AUTH: Redis's limits of 10 arguments and 16 KiB bulks. */
static void unauthenticated_limits(void **state) {
    sg_kv_parser p = {.unauth = 1};
    sg_err err;
    const char *ok = "*2\r\n$4\r\nAUTH\r\n$16384\r\n";
    assert_int_equal(sg_kv_parse(&p, ok, strlen(ok), &err), SG_KV_PARSE_MORE);
    sg_kv_parse_reset(&p);
    assert_int_equal(sg_kv_parse(&p, "*11\r\n", 5, &err), SG_KV_PARSE_ERR);
    assert_string_equal(err.msg, "Protocol error: unauthenticated multibulk length");
    sg_kv_parse_reset(&p);
    const char *big = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$16385\r\n";
    assert_int_equal(sg_kv_parse(&p, big, strlen(big), &err), SG_KV_PARSE_ERR);
    assert_string_equal(err.msg, "Protocol error: unauthenticated bulk length");
    sg_kv_parse_reset(&p);
    p.unauth = 0;
    assert_int_equal(sg_kv_parse(&p, big, strlen(big), &err), SG_KV_PARSE_MORE);
    sg_kv_parse_free(&p);
}

static void replies(void **state) {
    sg_buf b = {0};
    sg_kv_reply_simple(&b, "OK");
    sg_kv_reply_int(&b, -3);
    sg_kv_reply_bulk(&b, "hi", 2);
    sg_kv_reply_nil(&b);
    sg_kv_reply_null(&b, 1);
    sg_kv_reply_map(&b, 2, 0);
    sg_kv_reply_map(&b, 2, 1);
    sg_kv_reply_error(&b, "ERR bad\r\nthing");
    assert_string_equal(b.data,
                        "+OK\r\n:-3\r\n$2\r\nhi\r\n$-1\r\n_\r\n*4\r\n%2\r\n-ERR bad  thing\r\n");
    sg_buf_free(&b);
}

static void password_compare(void **state) {
    assert_true(sg_kv_password_equal("secret", 6, "secret", 6));
    assert_false(sg_kv_password_equal("secret", 6, "secreT", 6));
    assert_false(sg_kv_password_equal("secret", 6, "secre", 5));
    assert_false(sg_kv_password_equal("secret", 6, "secretsecret", 12)); /* cycled match */
    assert_false(sg_kv_password_equal("secret", 6, "", 0));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(whole_request),    cmocka_unit_test(byte_by_byte),
        cmocka_unit_test(inline_and_empty), cmocka_unit_test(big_bulk_out_of_band),
        cmocka_unit_test(protocol_errors),  cmocka_unit_test(replies),
        cmocka_unit_test(password_compare), cmocka_unit_test(unauthenticated_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
