/* common/redact.h: credentials out of URLs, control characters out of names (issue 24,
 * items 8 and 9). */
#include "common/redact.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void url_is(const char *in, const char *want) {
    char *got = sg_redact_url(in);
    assert_string_equal(got, want);
    free(got);
}

static void test_url_userinfo(void **state) {
    (void)state;
    url_is("http://user:s3cretpw@127.0.0.1:8000", "http://***@127.0.0.1:8000");
    url_is("https://tok@gpu:8000/v1/chat", "https://***@gpu:8000/v1/chat");
    url_is("http://u:p@a:1,http://b:2,https://x:y@c/v1",
           "http://***@a:1,http://b:2,https://***@c/v1");
    url_is("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1");
    url_is("no url here: a@b", "no url here: a@b");
    /* inside a message: the quote ends the URL; the @ of a path is not userinfo */
    url_is("LLM URL 'ftp://me:pw@h/x' must start with http://",
           "LLM URL 'ftp://***@h/x' must start with http://");
    url_is("http://h/a@b", "http://h/a@b");
    url_is("://u:p@h", "://u:p@h");
    url_is("", "");
    assert_null(sg_redact_url(NULL));
}

static void test_url_query(void **state) {
    (void)state;
    url_is("http://h/v1?api_key=abc&model=m&Token=t1;password=pw#frag",
           "http://h/v1?api_key=***&model=m&Token=***;password=***#frag");
    url_is("http://h/?x=1&access_token=zz some text", "http://h/?x=1&access_token=*** some text");
    url_is("http://u:p@h?secret=s", "http://***@h?secret=***");
    url_is("http://h/?flag&key=", "http://h/?flag&key=");
}

static void test_url_fit(void **state) {
    (void)state;
    char out[32];
    assert_string_equal(sg_redact_url_fit(out, sizeof out, "http://a:b@h"), "http://***@h");
    char big[200];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    memcpy(big, "http://u:s3cret@", 16);
    sg_redact_url_fit(out, sizeof out, big);
    assert_null(strstr(out, "s3cret"));
    assert_true(strlen(out) < sizeof out);
}

static void test_ctrl(void **state) {
    (void)state;
    char out[128];
    assert_string_equal(sg_redact_ctrl(out, sizeof out, "row_sum"), "row_sum");
    assert_string_equal(sg_redact_ctrl(out, sizeof out, "a\n[    1.0s] b: done"),
                        "a\\n[    1.0s] b: done");
    assert_string_equal(sg_redact_ctrl(out, sizeof out, "\r\t\x1b[2J\x7f"), "\\r\\t\\x1b[2J\\x7f");
    assert_string_equal(sg_redact_ctrl(out, sizeof out, "caf\xc3\xa9 \xc2\x85 \xc2\xa0"),
                        "caf\xc3\xa9 \\u0085 \xc2\xa0");
    assert_string_equal(sg_redact_ctrl(out, sizeof out, "back\\slash"), "back\\slash");
}

static void word_is(const char *in, const char *want) {
    sg_buf b = {0};
    sg_redact_append_shell_word(&b, in);
    assert_string_equal(b.data, want);
    sg_buf_free(&b);
}

static void test_shell_word(void **state) {
    (void)state;
    word_is("suites/demo", "suites/demo");
    word_is("--out=/tmp/x,y", "--out=/tmp/x,y");
    word_is("a b", "'a b'");
    word_is("it's", "'it'\\''s'");
    word_is("", "''");
    word_is("x\ny'z\\", "$'x\\ny\\'z\\\\'");
    word_is("\xc2\x85", "$'\\u0085'");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url_userinfo), cmocka_unit_test(test_url_query),
        cmocka_unit_test(test_url_fit),      cmocka_unit_test(test_ctrl),
        cmocka_unit_test(test_shell_word),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
