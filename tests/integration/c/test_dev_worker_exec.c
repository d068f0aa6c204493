/* An exec'd worker's options (device/worker_exec.c): every field of sg_dev_opts survives
 * the JSON on its command line, kinds are found again by name, and a worker given options
 * it cannot read says so and exits 2 (run through the real specgen binary, $SPECGEN). */
#include "common/proc.h"
#include "device/worker.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

static int run_a(sg_dev *d, const json_t *req, json_t **reply) {
    (void)d, (void)req, (void)reply;
    return 0;
}

static const sg_dev_kind kind_a = {.name = "validate", .run = run_a},
                         kind_b = {.name = "profile", .run = run_a};

static void test_round_trip(void **state) {
    (void)state;
    const sg_dev_kind *kinds[] = {&kind_b, &kind_a};
    const char *dirs[] = {"/srv/tasks/a", "/srv/tasks/b c", NULL};
    sg_dev_opts o;
    sg_dev_opts_default(&o);
    o.device = SG_DEV_CUDA;
    o.slots = 3;
    o.arch = "sm_90a";
    o.compile_only = 1;
    o.compile_timeout_ms = 1234;
    o.run_timeout_ms = 5678;
    o.mem_limit = 9ULL << 30;
    o.opencl_platform = 1;
    o.opencl_device = 2;
    o.cuda_device = 4;
    o.kinds = kinds;
    o.nkinds = 2;
    o.read_dirs = dirs;
    char *json = sg_dev_opts_to_json(&o);
    assert_non_null(json);
    const sg_dev_kind *all[] = {&kind_a, &kind_b};
    sg_dev_opts b;
    sg_err err;
    assert_int_equal(sg_dev_opts_from_json(json, all, 2, &b, &err), 0);
    assert_int_equal(b.device, SG_DEV_CUDA);
    assert_int_equal(b.slots, 3);
    assert_string_equal(b.arch, "sm_90a");
    assert_int_equal(b.compile_only, 1);
    assert_int_equal(b.compile_timeout_ms, 1234);
    assert_int_equal(b.run_timeout_ms, 5678);
    assert_true(b.mem_limit == 9ULL << 30);
    assert_int_equal(b.opencl_platform, 1);
    assert_int_equal(b.opencl_device, 2);
    assert_int_equal(b.cuda_device, 4);
    assert_int_equal(b.nkinds, 2);
    assert_ptr_equal(b.kinds[0], &kind_b); /* in the pool's order, from the program's table */
    assert_ptr_equal(b.kinds[1], &kind_a);
    assert_string_equal(b.read_dirs[0], "/srv/tasks/a");
    assert_string_equal(b.read_dirs[1], "/srv/tasks/b c");
    assert_null(b.read_dirs[2]);
    sg_dev_opts_from_json_free(&b);
    free(json);

    o.arch = NULL; /* the device's own */
    o.read_dirs = NULL;
    o.nkinds = 1;
    json = sg_dev_opts_to_json(&o);
    const sg_dev_kind *only_a[] = {&kind_a}; /* a kind the program lacks is left out */
    assert_int_equal(sg_dev_opts_from_json(json, only_a, 1, &b, &err), 0);
    assert_null(b.arch);
    assert_int_equal(b.nkinds, 0);
    assert_null(b.read_dirs[0]);
    sg_dev_opts_from_json_free(&b);
    free(json);
    assert_int_equal(sg_dev_opts_from_json("{\"device\": 1}", all, 2, &b, &err), -1);
    assert_non_null(strstr(err.msg, "worker options"));
}

static void test_bad_options_exit_2(void **state) {
    (void)state;
    const char *bin = getenv("SPECGEN");
    if (!bin) skip();
    char *argv[] = {(char *)bin, "__dev-worker", "{not json", NULL};
    sg_buf out = {0};
    int st = 0;
    sg_err err;
    assert_int_equal(sg_proc_run(argv, 10000, &out, &st, &err), 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    assert_non_null(strstr(out.data ? out.data : "", "specgen __dev-worker: worker options"));
    sg_buf_free(&out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_bad_options_exit_2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
