/* The compile-log scrub (device/logscrub.c): diagnostics located in another file than the
 * candidate keep their place but lose their text and snippet lines (issue 17, item 1). */
#include "device/device.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static char *scrub(const char *in, size_t from) {
    static sg_buf b;
    sg_buf_free(&b);
    sg_buf_append_str(&b, in);
    sg_dev_log_scrub(&b, from);
    return b.data;
}

static void test_nvrtc_other_file_hidden(void **state) {
    (void)state;
    const char *log = "/etc/hostname(1): error: this declaration has no storage class\n"
                      "  SECRET\n"
                      "  ^\n"
                      "\n"
                      "candidate.cu(4): error: expected a \";\"\n"
                      "  int x = 1\n"
                      "  ^\n";
    char *out = scrub(log, 0);
    assert_null(strstr(out, "SECRET"));
    assert_non_null(strstr(out, "/etc/hostname(1): (a diagnostic in another file"));
    assert_non_null(strstr(out, "candidate.cu(4): error: expected a \";\"\n  int x = 1\n  ^\n"));
}

static void test_pocl_other_file_hidden(void **state) {
    (void)state;
    const char *log = "error: /etc/hostname:1:1: unknown type name 'SECRET'\n"
                      "error: /root/.cache/pocl/kcache/tempfile_qbeXkR.cl:4:15: kernel must have "
                      "void return type\n"
                      "Device pthread failed to build the program\n";
    char *out = scrub(log, 0);
    assert_null(strstr(out, "SECRET"));
    assert_non_null(strstr(out, "error: /etc/hostname:1:1: (a diagnostic"));
    assert_non_null(strstr(out, "tempfile_qbeXkR.cl:4:15: kernel must have void return type\n"));
    assert_non_null(strstr(out, "Device pthread failed"));
}

static void test_prefix_untouched_and_plain_lines_kept(void **state) {
    (void)state;
    char *out = scrub("x.h:1:1: SECRET kept before from\nlinker: no such symbol\n", 33);
    assert_string_equal(out, "x.h:1:1: SECRET kept before from\nlinker: no such symbol\n");
    out = scrub("", 0);
    assert_string_equal(out, "");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nvrtc_other_file_hidden),
        cmocka_unit_test(test_pocl_other_file_hidden),
        cmocka_unit_test(test_prefix_untouched_and_plain_lines_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
