/* Validator specs: size expressions, launch-plan lines, task.json errors. */
#include "common/buf.h"
#include "validator/validator.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static sg_val_sizes sizes(void) {
    sg_val_sizes s = {0};
    snprintf(s.name[0], sizeof s.name[0], "N");
    s.value[0] = 1000;
    snprintf(s.name[1], sizeof s.name[1], "B");
    s.value[1] = 3;
    s.n = 2;
    return s;
}

static int64_t eval_ok(const char *e) {
    sg_val_sizes s = sizes();
    int64_t v = -12345;
    sg_err err;
    int rc = sg_val_expr_eval(e, &s, &v, &err);
    if (rc != 0) fail_msg("%s: %s", e, err.msg);
    return v;
}

static void eval_fails(const char *e, const char *msg_part) {
    sg_val_sizes s = sizes();
    int64_t v;
    sg_err err = {{0}};
    assert_int_equal(sg_val_expr_eval(e, &s, &v, &err), -1);
    if (!strstr(err.msg, msg_part)) fail_msg("%s: message '%s' lacks '%s'", e, err.msg, msg_part);
}

static void test_expr(void **st) {
    (void)st;
    assert_int_equal(eval_ok("N"), 1000);
    assert_int_equal(eval_ok("B*N + 4"), 3004);
    assert_int_equal(eval_ok("ceil_div(N, 256)"), 4);
    assert_int_equal(eval_ok("ceil_div(N,7)*7 - N"), 1);
    assert_int_equal(eval_ok("min(B, N) + max(B,N)"), 1003);
    assert_int_equal(eval_ok("(N+1)/2 % 7"), 500 % 7);
    assert_int_equal(eval_ok("-B + 10"), 7);
    eval_fails("M", "unknown size name 'M'");
    eval_fails("N/0", "division by zero");
    eval_fails("N*N*N*N*N*N*N", "overflow");
    /* found by fuzz_val_source with UB fatal: INT64_MIN negated or divided by -1 */
    eval_fails("-(0-9223372036854775807-1)", "overflow");
    eval_fails("(0-9223372036854775807-1)/-1", "overflow");
    eval_fails("(0-9223372036854775807-1)%-1", "overflow");
    eval_fails("N +", "unexpected end");
    eval_fails("N N", "unexpected text");
    eval_fails("ceil_div(N)", "expected ','");
    eval_fails("ceil_div(N, 0)", "non-positive");
    eval_fails("((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((N))))))))))))))))"
               ")))))))))))))))))))))))))))))))))))))))))))))))))",
               "nested too deeply");
}

static char tmpdir[64];

static void write_file(const char *name, const char *text) {
    char p[256];
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static const char *good_task =
    "{\"name\": \"t\", \"baseline\": \"b.cl\", \"reference\": \"r.cl\",\n"
    " \"sizes\": {\"N\": 1000, \"B\": 3}, \"check_sizes\": [{\"N\": 7}],\n"
    " \"buffers\": [{\"name\": \"x\", \"type\": \"f32\", \"count\": \"B*N\", \"role\": \"in\", "
    "\"init\": \"normal(0, 2)\"},\n"
    "              {\"name\": \"y\", \"type\": \"i32\", \"count\": \"B\", \"role\": \"out\"}],\n"
    " \"scalars\": [{\"name\": \"N\", \"type\": \"i32\", \"value\": \"N\"}, {\"name\": \"alpha\", "
    "\"type\": \"f32\", \"value\": 0.5}],\n"
    " \"args\": [\"x\", \"y\", \"N\"]}\n";

static int load_with(const char *json, sg_val_task *t, sg_err *err) {
    write_file("task.json", json);
    return sg_val_task_load(tmpdir, t, err);
}

static void task_fails(const char *from, const char *to, const char *msg_part) {
    sg_buf b = {0};
    const char *at = strstr(good_task, from);
    assert_non_null(at);
    sg_buf_append(&b, good_task, (size_t)(at - good_task));
    sg_buf_append_str(&b, to);
    sg_buf_append_str(&b, at + strlen(from));
    sg_val_task t;
    sg_err err = {{0}};
    assert_int_equal(load_with(b.data, &t, &err), -1);
    if (!strstr(err.msg, msg_part)) fail_msg("message '%s' lacks '%s'", err.msg, msg_part);
    if (!strstr(err.msg, "task.json")) fail_msg("message '%s' does not name the file", err.msg);
    sg_buf_free(&b);
}

/* The newer fields (distributions, tolerances, cpu_sizes, compute, bytes, flops), loaded. */
static void new_fields_load(void) {
    sg_val_task t;
    sg_err err;
    int64_t v;
    const char *more =
        "{\"name\": \"t\", \"baseline\": \"in.cl\", \"reference\": \"r.cl\",\n"
        " \"sizes\": {\"N\": 1000, \"B\": 3}, \"cpu_sizes\": {\"N\": 10},\n"
        " \"buffers\": [{\"name\": \"x\", \"type\": \"bf16\", \"count\": \"B*N\", \"role\": "
        "\"in\", "
        "\"init\": [\"special\", \"outliers(-1, 1, 0.5, 8)\"]},\n"
        "              {\"name\": \"h\", \"type\": \"f16\", \"count\": \"N\", \"role\": \"in\"},\n"
        "              {\"name\": \"y\", \"type\": \"f16\", \"count\": \"B\", \"role\": \"inout\", "
        "\"allow_nonfinite\": true}],\n"
        " \"args\": [\"x\", \"y\"], \"bytes\": \"auto\", \"flops\": \"2*B*N\", \"compute\": "
        "\"tensor_bf16\"}\n";
    if (load_with(more, &t, &err) != 0) fail_msg("%s", err.msg);
    assert_int_equal(t.buf[0].type, SG_VAL_BF16);
    assert_int_equal(t.compute, SG_VAL_COMPUTE_TENSOR_BF16);
    assert_string_equal(sg_val_compute_name(t.compute), "tensor_bf16");
    assert_int_equal(t.buf[0].ndist, 2);
    assert_int_equal(t.buf[0].dist[0].kind, SG_VAL_INIT_SPECIAL);
    assert_int_equal(t.buf[0].dist[1].kind, SG_VAL_INIT_OUTLIERS);
    assert_true(t.buf[0].dist[1].frac == 0.5 && t.buf[0].dist[1].scale == 8);
    assert_true(t.buf[0].rtol == 1.6e-2 && t.buf[0].atol == 1e-5); /* bf16 defaults */
    assert_int_equal(t.buf[1].ndist, 3);                           /* the float default */
    assert_true(t.buf[2].rtol == 1e-3 && t.buf[2].allow_nonfinite);
    assert_int_equal(t.buf[2].role, SG_VAL_INOUT);
    assert_int_equal(sg_val_task_ndist(&t), 3);
    assert_int_equal(sg_val_sizes_get(sg_val_main_sizes(&t, 1), "N", &v), 0);
    assert_int_equal(v, 10);
    assert_int_equal(sg_val_sizes_get(sg_val_main_sizes(&t, 0), "N", &v), 0);
    assert_int_equal(v, 1000);
    double bytes, flops;
    assert_int_equal(sg_val_task_roofline(&t, &t.sizes, &bytes, &flops, &err), 0);
    assert_true(bytes == 3000 * 2 + 1000 * 2 + 2 * 3 * 2); /* inout: read and written */
    assert_true(flops == 6000);
    sg_val_task_free(&t);
}

static void test_task(void **st) {
    (void)st;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/sg_val_spec_XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    write_file("b.cl", "//@launch k grid=1 block=1\n__kernel void k() {}\n");
    write_file("r.cl", "//@launch k grid=1 block=1\n__kernel void k() {}\n");
    sg_val_task t;
    sg_err err;
    if (load_with(good_task, &t, &err) != 0) fail_msg("%s", err.msg);
    assert_int_equal(t.nbuf, 2);
    assert_int_equal(t.ncheck, 1);
    int64_t v;
    assert_int_equal(sg_val_sizes_get(&t.check[0], "N", &v), 0);
    assert_int_equal(v, 7);
    assert_int_equal(sg_val_sizes_get(&t.check[0], "B", &v), 0); /* inherited */
    assert_int_equal(v, 3);
    assert_int_equal(t.buf[0].ndist, 1);
    assert_int_equal(t.buf[0].dist[0].kind, SG_VAL_INIT_NORMAL);
    assert_true(t.buf[0].dist[0].b == 2.0);
    assert_int_equal(sg_val_task_ndist(&t), 1);
    assert_int_equal(t.has_cpu_sizes, 0);
    assert_int_equal(t.compute, SG_VAL_COMPUTE_AUTO);
    assert_ptr_equal(sg_val_main_sizes(&t, 1), &t.sizes);
    assert_non_null(t.source[SG_DEV_OPENCL]);
    assert_null(t.source[SG_DEV_CUDA]);
    sg_val_task_free(&t);

    task_fails("\"f32\"", "\"f8\"", "unknown type \"f8\"");
    task_fails("\"B*N\"", "\"B*M\"", "unknown size name 'M'");
    task_fails("\"role\": \"in\"", "\"role\": \"inplace\"", "\"inplace\"");
    task_fails("normal(0, 2)", "gauss(1)", "gauss(1)");
    task_fails("\"x\", \"y\", \"N\"]", "\"x\", \"z\"]", "\"z\" is not a buffer or scalar");
    task_fails("\"N\": 1000", "\"N\": \"big\"", "size \"N\"");
    task_fails("{\"N\": 7}", "{\"Q\": 7}", "\"Q\" is not one of the task's sizes");
    task_fails("\"b.cl\"", "\"missing.cl\"", "does not exist");
    task_fails("\"b.cl\"", "\"../b.cl\"", "must be a file in the task folder");
    task_fails("\"role\": \"out\"", "\"role\": \"in\"", "no buffer has role \"out\"");
    task_fails("\"name\": \"t\",", "", "missing required field \"name\"");
    task_fails("]}\n", "]", ":"); /* syntax error: line and column */

    /* Unknown fields are refused, with the nearest known name when it looks like a typo. */
    task_fails("\"check_sizes\"", "\"check_size\"",
               "unknown field \"check_size\" (did you mean \"check_sizes\"?)");
    task_fails("\"role\": \"out\"", "\"role\": \"out\", \"rtoll\": 1",
               "unknown field \"rtoll\" (did you mean \"rtol\"?)");
    task_fails("\"value\": 0.5", "\"value\": 0.5, \"colour\": 1",
               "unknown field \"colour\" (known: name type value)");
    /* Distributions, roles and the other new fields. */
    task_fails("normal(0, 2)", "outliers(0,1,2,10)", "outliers(lo,hi,frac,scale)");
    task_fails("\"init\": \"normal(0, 2)\"", "\"init\": []", "an array of 1 to 8");
    task_fails("\"init\": \"normal(0, 2)\"", "\"init\": [\"special\", 3]",
               "\"init[1]\": expected a string");
    task_fails("\"role\": \"out\"", "\"role\": \"out\", \"init\": \"const(0)\"", "role \"inout\"");
    task_fails("\"role\": \"in\",", "\"role\": \"in\", \"allow_nonfinite\": true,",
               "applies to floating out and inout");
    task_fails("\"f32\"", "\"fp8_e4m3\"", "OpenCL has no type for");
    task_fails("\"args\"", "\"bytes\": \"4*M\", \"args\"",
               "field \"bytes\": size expression \"4*M\"");
    task_fails("\"args\"", "\"flops\": \"auto\", \"args\"", "field \"flops\"");
    task_fails("\"args\"", "\"cpu_sizes\": {\"Q\": 1}, \"args\"",
               "cpu_sizes\": size \"Q\" is not one");
    task_fails("\"role\": \"out\"", "\"role\": \"in\"", "no buffer has role \"out\" or \"inout\"");
    task_fails("\"args\"", "\"compute\": \"bf16\", \"args\"",
               "field \"compute\": unknown kind of arithmetic \"bf16\" (fp32 fp64 tensor_tf32 "
               "tensor_f16 tensor_bf16 tensor_fp8 tensor_int8)");

    /* A source that is a symbolic link out of the task folder is refused. */
    char link[128];
    snprintf(link, sizeof link, "%s/esc.cl", tmpdir);
    assert_int_equal(symlink("/etc/hostname", link), 0);
    task_fails("\"b.cl\"", "\"esc.cl\"", "symbolic link that leads out of the task folder");
    snprintf(link, sizeof link, "%s/in.cl", tmpdir);
    assert_int_equal(symlink("b.cl", link), 0); /* a link inside the folder is fine */

    new_fields_load(); /* needs in.cl, the link made above */
}

static int plan(const char *src, sg_val_plan *p, sg_err *err) {
    sg_val_task t;
    sg_err e;
    if (load_with(good_task, &t, &e) != 0) fail_msg("%s", e.msg);
    int rc = sg_val_plan_parse(src, &t, "cand.cl", p, err);
    sg_val_task_free(&t);
    return rc;
}

static void plan_fails(const char *src, const char *msg_part) {
    sg_val_plan p;
    sg_err err = {{0}};
    assert_int_equal(plan(src, &p, &err), -1);
    if (!strstr(err.msg, msg_part)) fail_msg("message '%s' lacks '%s'", err.msg, msg_part);
}

static void test_plan(void **st) {
    (void)st;
    sg_val_plan p;
    sg_err err;
    const char *src = "// a kernel\n"
                      "  //@scratch part f32 B*64\n"
                      "//@launch first grid=(ceil_div(N, 16), B) block=(16,4) smem=256*4\n"
                      "//@launch second grid=ceil_div(B,4) block=128 args=part,y,N\n"
                      "__kernel void first() {}\n";
    if (plan(src, &p, &err) != 0) fail_msg("%s", err.msg);
    assert_int_equal(p.nlaunch, 2);
    assert_int_equal(p.nscratch, 1);
    assert_string_equal(p.launch[0].grid[0], "ceil_div(N, 16)");
    assert_string_equal(p.launch[0].grid[1], "B");
    assert_null(p.launch[0].grid[2]);
    assert_string_equal(p.launch[0].block[1], "4");
    assert_string_equal(p.launch[0].smem, "256*4");
    assert_int_equal(p.launch[0].line, 3);
    assert_int_equal(p.launch[1].narg, 3);
    assert_string_equal(p.launch[1].args[0], "part");
    assert_string_equal(p.scratch[0].count, "B*64");
    sg_val_plan_free(&p);
    assert_int_equal(plan("__kernel void k() {}\n", &p, &err), 0);
    assert_int_equal(p.nlaunch, 0);
    sg_val_plan_free(&p);

    plan_fails("//@launch k block=1\n", "grid= and block= are required");
    plan_fails("//@launch k grid=M block=1\n", "cand.cl:1: grid=");
    plan_fails("//@launch k grid=1 block=1 args=x,nope\n", "\"nope\" is not a buffer");
    plan_fails("//@launch k grid=1 block=1 color=red\n", "unknown key \"color\"");
    plan_fails("//@launch 9k grid=1 block=1\n", "not a kernel name");
    plan_fails("//@launch k grid=1,2,3,4 block=1\n", "one to three");
    plan_fails("//@scratch x f32 N\n", "already a buffer");
    plan_fails("//@scratch s f8 N\n", "unknown type \"f8\"");
    plan_fails("//@scratch s f32\n", "NAME TYPE COUNT");
    plan_fails("//@launch k grid= block=1\n", "empty");
    plan_fails("//@launch k grid=1 block=1 block=2\n", "block= is given twice");
}

static void dims_fail(const char *src, const char *part) {
    sg_val_plan p;
    sg_err err = {{0}};
    if (plan(src, &p, &err) != 0) fail_msg("%s", err.msg);
    sg_val_task t;
    if (load_with(good_task, &t, &err) != 0) fail_msg("%s", err.msg);
    sg_be_limits lim = {1024, {2147483647u, 65535, 65535}, 48 * 1024, 256, "", 0};
    sg_val_dims d;
    memset(err.msg, 0, sizeof err.msg);
    assert_int_equal(sg_val_launch_dims(&p.launch[0], &t.sizes, &lim, "cand.cl", &d, &err), -1);
    if (!strstr(err.msg, part)) fail_msg("'%s': message '%s' lacks '%s'", src, err.msg, part);
    if (!strstr(err.msg, "N=1000")) fail_msg("'%s': message '%s' lacks the shape", src, err.msg);
    sg_val_plan_free(&p);
    sg_val_task_free(&t);
}

static void test_launch_limits(void **st) {
    (void)st;
    sg_val_plan p;
    sg_err err;
    if (plan("//@launch k grid=(ceil_div(N,16),B) block=(16,4) smem=1024\n", &p, &err) != 0)
        fail_msg("%s", err.msg);
    sg_val_task t;
    if (load_with(good_task, &t, &err) != 0) fail_msg("%s", err.msg);
    sg_be_limits lim = {1024, {2147483647u, 65535, 65535}, 48 * 1024, 256, "", 0};
    sg_val_dims d;
    if (sg_val_launch_dims(&p.launch[0], &t.sizes, &lim, "c", &d, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(d.grid[0], 63);
    assert_int_equal(d.grid[1], 3);
    assert_int_equal(d.grid[2], 1);
    assert_int_equal(d.block[1], 4);
    assert_int_equal(d.smem, 1024);
    sg_val_plan_free(&p);
    sg_val_task_free(&t);
    dims_fail("//@launch k grid=N*N*N*4 block=1\n", "over the device limit");
    dims_fail("//@launch k grid=N,N*100 block=1\n", "grid dimension 1");
    dims_fail("//@launch k grid=N*N*8 block=1024\n", "absurd");
    dims_fail("//@launch k grid=1 block=2048\n", "a block of 2048 threads");
    dims_fail("//@launch k grid=N-1000 block=1\n", "at least 1");
    dims_fail("//@launch k grid=1 block=1 smem=N*N\n", "smem=1000000");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expr),
        cmocka_unit_test(test_task),
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_launch_limits),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (tmpdir[0]) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
        if (system(cmd) != 0) rc = 1;
    }
    return rc;
}
