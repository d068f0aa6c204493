/* Element types on the host (validator/elem.h): f16, bf16 and the OCP FP8 formats
 * encoded with round-to-nearest-even and decoded back; checked on hand-worked values, on
 * every bit pattern (decode then encode is the identity), and against independent
 * oracles: the compiler's _Float16 conversion and the usual float-to-bf16 bit rounding. */
#include "validator/validator.h"
#include "validator/elem.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static void test_f16_values(void **st) {
    (void)st;
    assert_int_equal(sg_val_f16_bits(1.0), 0x3c00);
    assert_int_equal(sg_val_f16_bits(-2.0), 0xc000);
    assert_int_equal(sg_val_f16_bits(-0.0), 0x8000);
    assert_int_equal(sg_val_f16_bits(65504), 0x7bff);       /* the max */
    assert_int_equal(sg_val_f16_bits(65519), 0x7bff);       /* below the halfway point */
    assert_int_equal(sg_val_f16_bits(65520), 0x7c00);       /* the tie rounds to even: inf */
    assert_int_equal(sg_val_f16_bits(1e9), 0x7c00);         /* overflow: inf */
    assert_int_equal(sg_val_f16_bits(0x1p-24), 0x0001);     /* smallest subnormal */
    assert_int_equal(sg_val_f16_bits(0x1p-25), 0x0000);     /* tie between 0 and it: even */
    assert_int_equal(sg_val_f16_bits(0x3p-25), 0x0002);     /* tie between 1 and 2 ulps: even */
    assert_int_equal(sg_val_f16_bits(1 + 0x1p-11), 0x3c00); /* tie: even */
    assert_int_equal(sg_val_f16_bits(1 + 0x3p-11), 0x3c02);
    assert_int_equal(sg_val_f16_bits(0x1p-14 - 0x1p-24), 0x03ff); /* largest subnormal */
    assert_int_equal(sg_val_f16_bits(NAN), 0x7e00);
    assert_true(isnan(sg_val_f16_value(0x7e01)));
    assert_true(sg_val_f16_value(0xfc00) == -INFINITY);
    assert_true(sg_val_f16_value(0x0001) == 0x1p-24);
}

static void test_bf16_values(void **st) {
    (void)st;
    assert_int_equal(sg_val_bf16_bits(1.0), 0x3f80);
    assert_int_equal(sg_val_bf16_bits(1 + 0x1p-8), 0x3f80); /* tie: even */
    assert_int_equal(sg_val_bf16_bits(1 + 0x3p-8), 0x3f82);
    assert_int_equal(sg_val_bf16_bits(3.0e38), 0x7f62);
    assert_int_equal(sg_val_bf16_bits(INFINITY), 0x7f80);
    assert_int_equal(sg_val_bf16_bits(0x1p-133), 0x0001); /* smallest subnormal */
    assert_true(sg_val_bf16_value(0x7f7f) == 0x1.fep127);
}

static void test_fp8_values(void **st) {
    (void)st;
    /* E4M3 (OCP FP8): max 448, no inf, saturating; only S.1111.111 is NaN. */
    assert_int_equal(sg_val_e4m3_bits(1.0), 0x38);
    assert_int_equal(sg_val_e4m3_bits(448), 0x7e);
    assert_int_equal(sg_val_e4m3_bits(464), 0x7e); /* tie between 448 and 480: even */
    assert_int_equal(sg_val_e4m3_bits(1000), 0x7e);
    assert_int_equal(sg_val_e4m3_bits(INFINITY), 0x7e);
    assert_int_equal(sg_val_e4m3_bits(-INFINITY), 0xfe);
    assert_int_equal(sg_val_e4m3_bits(NAN), 0x7f);
    assert_int_equal(sg_val_e4m3_bits(0x1p-9), 0x01);
    assert_true(isnan(sg_val_e4m3_value(0xff)));
    assert_true(sg_val_e4m3_value(0x7e) == 448);
    assert_true(sg_val_e4m3_value(0x78) == 256); /* the all-ones exponent holds normals */
    /* E5M2: IEEE-like, max 57344, inf. */
    assert_int_equal(sg_val_e5m2_bits(1.0), 0x3c);
    assert_int_equal(sg_val_e5m2_bits(57344), 0x7b);
    assert_int_equal(sg_val_e5m2_bits(61440), 0x7c); /* tie: even is 65536, so inf */
    assert_int_equal(sg_val_e5m2_bits(0x1p-16), 0x01);
    assert_true(sg_val_e5m2_value(0x7c) == INFINITY);
    assert_true(isnan(sg_val_e5m2_value(0x7d)));
}

/* Every finite bit pattern survives decode then encode; NaN patterns decode to NaN. */
static void test_roundtrip(void **st) {
    (void)st;
    for (unsigned b = 0; b < 65536; b++) {
        double h = sg_val_f16_value((uint16_t)b), g = sg_val_bf16_value((uint16_t)b);
        if (!isnan(h)) assert_int_equal(sg_val_f16_bits(h), b);
        if (!isnan(g)) assert_int_equal(sg_val_bf16_bits(g), b);
    }
    for (unsigned b = 0; b < 256; b++) {
        double x = sg_val_e4m3_value((uint8_t)b), y = sg_val_e5m2_value((uint8_t)b);
        if (!isnan(x)) assert_int_equal(sg_val_e4m3_bits(x), b);
        if (!isnan(y)) assert_int_equal(sg_val_e5m2_bits(y), b);
    }
}

static uint64_t next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Random floats of every magnitude against independent conversions. */
static void test_oracles(void **st) {
    (void)st;
    uint64_t s = 7;
    for (int i = 0; i < 2000000; i++) {
        uint32_t u = (uint32_t)next(&s);
        float f;
        memcpy(&f, &u, 4);
        if (isnan(f)) continue;
        /* bf16 from a float: add 0x7fff plus the kept lowest bit, drop 16 bits (RNE). */
        uint32_t want = (u + 0x7fff + ((u >> 16) & 1)) >> 16;
        if (isinf(f)) want = u >> 16;
        if (sg_val_bf16_bits(f) != want)
            fail_msg("bf16(%a): got %#x want %#x", f, sg_val_bf16_bits(f), want);
#ifdef __FLT16_MAX__
        _Float16 h = (_Float16)f;
        uint16_t hb;
        memcpy(&hb, &h, 2);
        if (sg_val_f16_bits(f) != hb)
            fail_msg("f16(%a): got %#x want %#x", f, sg_val_f16_bits(f), hb);
#endif
    }
}

static void test_elem(void **st) {
    (void)st;
    unsigned char buf[16];
    sg_val_elem_set(SG_VAL_BF16, buf, 1, -3.0);
    assert_true(sg_val_elem_get(SG_VAL_BF16, buf, 1) == -3.0);
    sg_val_elem_set(SG_VAL_FP8_E4M3, buf, 3, 0.3);
    assert_true(sg_val_elem_get(SG_VAL_FP8_E4M3, buf, 3) == 0.3125); /* nearest: 1.25 * 2^-2 */
    sg_val_range r;
    sg_val_type_range(SG_VAL_F16, &r);
    assert_true(r.max == 65504 && r.min_normal == 0x1p-14 && r.min_sub == 0x1p-24);
    assert_int_equal(r.mbits, 10);
    assert_true(sg_val_type_is_float(SG_VAL_FP8_E5M2) && !sg_val_type_is_float(SG_VAL_U32));
    assert_int_equal(sg_val_type_size(SG_VAL_BF16), 2);
    assert_int_equal(sg_val_type_size(SG_VAL_FP8_E4M3), 1);
}

/* NaN never matches NaN, unless the buffer allows non-finite values; then NaN must sit
 * where the reference has NaN and inf must be the same inf. Narrow types compare in double. */
static void test_compare(void **st) {
    (void)st;
    sg_val_buffer b = {.type = SG_VAL_F32, .atol = 1e-5, .rtol = 1e-5};
    float ref[3] = {1, NAN, INFINITY}, got[3] = {1, NAN, INFINITY};
    sg_val_cmp c;
    assert_int_equal(sg_val_compare(&b, got, ref, 3, &c), -1);
    assert_int_equal(c.nbad, 2);
    assert_int_equal(c.first_bad, 1);
    b.allow_nonfinite = 1;
    assert_int_equal(sg_val_compare(&b, got, ref, 3, &c), 0);
    got[2] = -INFINITY;
    assert_int_equal(sg_val_compare(&b, got, ref, 3, &c), -1);
    got[2] = INFINITY;
    got[0] = NAN; /* NaN where the reference is finite */
    assert_int_equal(sg_val_compare(&b, got, ref, 3, &c), -1);
    assert_int_equal(sg_val_first_nonfinite(SG_VAL_F32, ref, 3), 1);
    assert_int_equal(sg_val_first_nonfinite(SG_VAL_F32, ref, 1), -1);
    /* bf16: 1.0 against 1.0078125 (one ulp) is within bf16's default rtol; 3 ulps are not. */
    sg_val_buffer h = {.type = SG_VAL_BF16, .atol = 1e-5, .rtol = 1.6e-2};
    uint16_t r16[1] = {sg_val_bf16_bits(1.0)}, g16[1] = {sg_val_bf16_bits(1.0078125)};
    assert_int_equal(sg_val_compare(&h, g16, r16, 1, &c), 0);
    g16[0] = sg_val_bf16_bits(1.0234375);
    assert_int_equal(sg_val_compare(&h, g16, r16, 1, &c), -1);
    assert_true(c.got == 1.0234375 && c.ref == 1.0);
}

/* 8-bit integers: one byte each, values toward zero and saturated to the type's range;
 * compared exactly; "special" gives the type's extremes. */
static void test_int8(void **state) {
    (void)state;
    assert_int_equal(sg_val_type_size(SG_VAL_U8), 1);
    assert_int_equal(sg_val_type_size(SG_VAL_I8), 1);
    sg_val_type t;
    assert_int_equal(sg_val_type_parse("u8", &t), 0);
    assert_int_equal(t, SG_VAL_U8);
    assert_int_equal(sg_val_type_parse("i8", &t), 0);
    assert_string_equal(sg_val_type_name(t), "i8");
    assert_false(sg_val_type_is_float(SG_VAL_U8));
    uint8_t u[4];
    int8_t s[4];
    double in[4] = {-3, 7.9, 255, 1000};
    for (int i = 0; i < 4; i++) sg_val_elem_set(SG_VAL_U8, u, (size_t)i, in[i]);
    assert_true(u[0] == 0 && u[1] == 7 && u[2] == 255 && u[3] == 255);
    double ins[4] = {-129, -128, -7.9, 200};
    for (int i = 0; i < 4; i++) sg_val_elem_set(SG_VAL_I8, s, (size_t)i, ins[i]);
    assert_true(s[0] == -128 && s[1] == -128 && s[2] == -7 && s[3] == 127);
    assert_true(sg_val_elem_get(SG_VAL_U8, u, 2) == 255.0);
    assert_true(sg_val_elem_get(SG_VAL_I8, s, 0) == -128.0);
    uint8_t poison = 0xff; /* an unwritten output reads as 255 / -1 */
    assert_true(sg_val_elem_get(SG_VAL_U8, &poison, 0) == 255.0);
    assert_true(sg_val_elem_get(SG_VAL_I8, &poison, 0) == -1.0);
    sg_val_buffer b = {.type = SG_VAL_U8};
    sg_val_cmp c;
    uint8_t ref[2] = {3, 200}, got[2] = {3, 201};
    assert_int_equal(sg_val_compare(&b, got, ref, 2, &c), -1);
    assert_int_equal(c.first_bad, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f16_values), cmocka_unit_test(test_bf16_values),
        cmocka_unit_test(test_fp8_values), cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_oracles),    cmocka_unit_test(test_elem),
        cmocka_unit_test(test_compare),    cmocka_unit_test(test_int8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
