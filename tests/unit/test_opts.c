/* common/opts.h and common/cli.h: the shared option table and the parser's use of it
 * (ranges, aliases, deprecated names, --devices). */
#include "common/cli.h"
#include "common/opts.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

/* Every entry is whole, named once, and its default is within its range. */
static void test_table_complete(void **state) {
    (void)state;
    for (int i = 0; i < SG_OD_COUNT_; i++) {
        const sg_opt *o = sg_opt_entry(i);
        assert_non_null(o);
        assert_non_null(o->name);
        assert_non_null(o->help);
        assert_true(o->kind == SG_OPT_FLAG || o->metavar != NULL);
        for (int j = 0; j < i; j++) assert_string_not_equal(o->name, sg_opt_entry(j)->name);
    }
    assert_null(sg_opt_entry(SG_OD_COUNT_));
    const sg_opt *s = sg_opt_entry(SG_OD_SLOTS_PER_DEVICE);
    assert_true(s->min == 1 && s->max == SG_SLOTS_PER_DEVICE_MAX);
}

static int parse(sg_opt *opts, int argc, char **argv) {
    const sg_cmd_spec spec = {.name = "t", .args = "", .summary = "", .opts = opts};
    return sg_cli_parse(&spec, argc, argv, NULL, NULL);
}

/* The range and the other names are the parser's: one bound, one place. */
static void test_range_and_names(void **state) {
    (void)state;
    int64_t slots = 1;
    sg_opt opts[] = {sg_opt_shared(SG_OD_SLOTS_PER_DEVICE, &slots), {0}};
    char *ok[] = {"t", "--slots-per-device", "64", NULL};
    assert_int_equal(parse(opts, 3, ok), SG_CLI_OK);
    assert_int_equal(slots, 64);
    char *over[] = {"t", "--slots-per-device=65", NULL};
    assert_int_equal(parse(opts, 2, over), SG_CLI_USAGE);
    char *alias[] = {"t", "--slots", "3", NULL};
    assert_int_equal(parse(opts, 3, alias), SG_CLI_OK);
    assert_int_equal(slots, 3);
    char *old[] = {"t", "--slots-per-gpu=5", NULL};
    assert_int_equal(parse(opts, 2, old), SG_CLI_OK); /* with a warning on stderr */
    assert_int_equal(slots, 5);
    char *unknown[] = {"t", "--slots-per", "5", NULL};
    assert_int_equal(parse(opts, 3, unknown), SG_CLI_USAGE);
    char range[80];
    assert_string_equal(sg_cli_range(&opts[0], range, sizeof range), "1..64");
    int64_t t = 0;
    sg_opt to = sg_opt_shared(SG_OD_POOL_TIMEOUT, &t);
    assert_string_equal(sg_cli_range(&to, range, sizeof range), "1s..10m");
}

static void test_devsel(void **state) {
    (void)state;
    sg_devsel d;
    sg_err err;
    char buf[64];
    assert_int_equal(sg_devsel_parse("all", &d, &err), 0);
    assert_true(d.count == 0 && d.n == 0);
    assert_int_equal(sg_devsel_parse("4", &d, &err), 0);
    assert_int_equal(d.count, 4);
    assert_int_equal(sg_devsel_parse("cuda:0,3", &d, &err), 0);
    assert_string_equal(d.lang, "cuda");
    assert_true(d.n == 2 && d.idx[0] == 0 && d.idx[1] == 3);
    assert_string_equal(sg_devsel_str(&d, buf, sizeof buf), "cuda:0,3");
    assert_int_equal(sg_devsel_parse("opencl:0", &d, &err), 0);
    assert_string_equal(sg_devsel_str(&d, buf, sizeof buf), "opencl:0");
    const char *bad[] = {"65", "-1", "cuda:", "cuda:1,1", "gpu:0", "cuda:0,,1", "cuda:256", "x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_not_equal(sg_devsel_parse(bad[i], &d, &err), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_complete),
        cmocka_unit_test(test_range_and_names),
        cmocka_unit_test(test_devsel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
