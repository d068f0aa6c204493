/* Validator source hygiene (include allow-list, size bound), the normalized hash, and
 * output comparison (tolerances, NaN/Inf). */
#include "validator/validator.h"
#include "common/srcnorm.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static char dir[64];

static void src_ok(const char *s, sg_dev_lang l) {
    sg_err err;
    if (sg_val_check_source(s, strlen(s), l, dir, &err) != 0)
        fail_msg("rejected '%s': %s", s, err.msg);
}

static void src_bad(const char *s, sg_dev_lang l, const char *part) {
    sg_err err = {{0}};
    assert_int_equal(sg_val_check_source(s, strlen(s), l, dir, &err), -1);
    if (!strstr(err.msg, part)) fail_msg("'%s': message '%s' lacks '%s'", s, err.msg, part);
}

static void test_includes(void **st) {
    (void)st;
    snprintf(dir, sizeof dir, "/tmp/sg_val_src_XXXXXX");
    assert_non_null(mkdtemp(dir));
    char p[128];
    snprintf(p, sizeof p, "%s/helper.h", dir);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("#define X 1\n", f);
    fclose(f);
    src_ok("#include \"helper.h\"\nint x;\n", SG_DEV_OPENCL);
    src_ok("#include <cuda_fp16.h>\n#include <cuda/std/cstdint>\nint x;\n", SG_DEV_CUDA);
    src_ok("// #include \"/etc/passwd\" in a comment is harmless\nint x;\n", SG_DEV_CUDA);
    src_ok("/* #include </etc/shadow> */ int x;\n", SG_DEV_CUDA);
    src_ok("const char *s = \"#include </etc/passwd>\";\n", SG_DEV_CUDA);
    src_bad("#include \"/etc/passwd\"\n", SG_DEV_OPENCL,
            "line 1: #include \"/etc/passwd\" is not allowed");
    src_bad("int a;\n#include \"../../etc/passwd\"\n", SG_DEV_CUDA, "line 2");
    /* the standard headers NVRTC lacks are served by specgen (device/nvrtc_std.c) */
    src_ok("#include <stdio.h>\n#include <float.h>\n#include <cmath>\n#include \"assert.h\"\n"
           "#include <cub/cub.cuh>\n#include <cooperative_groups/reduce.h>\nint x;\n",
           SG_DEV_CUDA);
    src_bad("#include <vector>\n", SG_DEV_CUDA, "#include <vector> is not allowed");
    src_bad("#include <float.h>\n", SG_DEV_OPENCL, "#include <float.h> is not allowed");
    src_bad("#include <cuda_fp16.h>\n", SG_DEV_OPENCL, "is not allowed");
    src_bad("#define F \"/etc/passwd\"\n#include F\n", SG_DEV_CUDA, "literally");
    src_bad("#inc\\\nlude \"/etc/passwd\"\n", SG_DEV_CUDA, "not allowed");
    src_bad("%:include \"/etc/passwd\"\n", SG_DEV_CUDA, "not allowed");
    src_bad("  #  include </etc/passwd>\n", SG_DEV_CUDA, "not allowed");
    src_bad("#include_next <x.h>\n", SG_DEV_CUDA, "not allowed");
    src_bad("#include \"nothere.h\"\n", SG_DEV_CUDA, "no such file");
    src_bad("", SG_DEV_CUDA, "empty");
    src_bad("  \n// only a comment\n", SG_DEV_CUDA, "empty");
    char *big = malloc(SG_VAL_MAX_SOURCE + 2);
    memset(big, ' ', SG_VAL_MAX_SOURCE + 1);
    big[SG_VAL_MAX_SOURCE + 1] = 0;
    src_bad(big, SG_DEV_CUDA, "over the limit");
    free(big);
    snprintf(p, sizeof p, "rm -rf %s", dir);
    assert_int_equal(system(p), 0);
}

static void hash(const char *s, const char *opts, char out[33]) {
    sg_srcnorm_key(s, strlen(s), opts, out);
}

static void test_hash(void **st) {
    (void)st;
    char a[33], b[33], c[33], d[33], e[33];
    hash("__kernel void k(int n) {\n  int i = 0;\n}\n", "opencl", a);
    hash("// a comment\n__kernel   void k(int n)   {\n\tint i = 0; /* note */\n}", "opencl", b);
    assert_string_equal(a, b); /* comments and whitespace folded */
    hash("__kernel void k(int n) {\n  int i = 1;\n}\n", "opencl", c);
    assert_string_not_equal(a, c);
    hash("__kernel void k(int n) {\n  int i = 0;\n}\n", "cuda sm_90", d);
    assert_string_not_equal(a, d); /* options are part of the key */
    hash("//@launch k grid=1 block=1\n__kernel void k(int n) {\n  int i = 0;\n}\n", "opencl", e);
    assert_string_not_equal(a, e); /* plan lines are not comments */
    hash("const char *s = \"a  b\";", "", a);
    hash("const char *s = \"a b\";", "", b);
    assert_int_equal(strlen(a), 32);
}

static void test_compare(void **st) {
    (void)st;
    sg_val_buffer b = {.type = SG_VAL_F32, .atol = 1e-3, .rtol = 1e-2};
    float ref[4] = {1, 100, -5, 0}, got[4] = {1.0005f, 100.9f, -5, 0};
    sg_val_cmp c;
    assert_int_equal(sg_val_compare(&b, got, ref, 4, &c), 0);
    assert_true(c.max_abs > 0.89 && c.max_abs < 0.91);
    got[2] = -5.1f;
    assert_int_equal(sg_val_compare(&b, got, ref, 4, &c), -1);
    assert_int_equal(c.first_bad, 2);
    got[2] = -5;
    got[3] = NAN;
    assert_int_equal(sg_val_compare(&b, got, ref, 4, &c), -1);
    assert_int_equal(c.first_bad, 3);
    assert_true(isinf(c.max_abs));
    got[3] = INFINITY;
    assert_int_equal(sg_val_compare(&b, got, ref, 4, &c), -1);
    sg_val_buffer bi = {.type = SG_VAL_I32};
    int32_t ri[3] = {1, 2, 3}, gi[3] = {1, 2, 4};
    assert_int_equal(sg_val_compare(&bi, gi, ri, 3, &c), -1);
    assert_int_equal(c.first_bad, 2);
    sg_val_buffer bl = {.type = SG_VAL_I64};
    int64_t rl[1] = {(1LL << 60) + 1}, gl[1] = {1LL << 60};
    assert_int_equal(sg_val_compare(&bl, gl, rl, 1, &c), -1); /* not lost in a double */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_includes),
        cmocka_unit_test(test_hash),
        cmocka_unit_test(test_compare),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
