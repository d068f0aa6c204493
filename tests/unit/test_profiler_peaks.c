/* profiler/peaks.c: which peak a task's roofline uses (datasheet entries, the task's
 * arithmetic, CPU and unknown GPUs), and the diagnosis text that names it. Pretend
 * devices only: no GPU needed. */
#include "profiler/feedback.h"
#include "profiler/peaks.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

/* A task with two inputs of type `in`, one output of type `out` (only types and roles
 * matter to the peaks). */
static sg_val_buffer bufs[3];
static sg_val_task task_of(sg_val_type in, sg_val_type out) {
    sg_val_task t;
    memset(&t, 0, sizeof t);
    memset(bufs, 0, sizeof bufs);
    bufs[0] = (sg_val_buffer){.name = "x", .type = in, .role = SG_VAL_IN};
    bufs[1] = (sg_val_buffer){.name = "w", .type = in, .role = SG_VAL_IN};
    bufs[2] = (sg_val_buffer){.name = "y", .type = out, .role = SG_VAL_OUT};
    t.buf = bufs;
    t.nbuf = 3;
    return t;
}

/* A 4096^3 GEMM with 16-bit operands and a 4096 x 32768 row-wise softmax (bf16). */
#define GEMM_FLOPS (2.0 * 4096 * 4096 * 4096)
#define GEMM_BYTES (3.0 * 4096 * 4096 * 2)
#define SOFTMAX_FLOPS (5.0 * 4096 * 32768)
#define SOFTMAX_BYTES (2.0 * 4096 * 32768 * 2)

static const sg_be_peaks H200 = {
    .gbs = 4022, .fp32_gflops = 66000, .device = "NVIDIA H200", .cc_major = 9, .cc_minor = 0};

static void test_lookup_by_name_and_capability(void **state) {
    (void)state;
    const sg_peak_entry *e = sg_peaks_lookup("NVIDIA H200", 9, 0);
    assert_non_null(e);
    assert_string_equal(e->name, "NVIDIA H200");
    assert_true(e->gbs == 4800 && e->tflops[SG_VAL_COMPUTE_TENSOR_BF16] == 989.5 &&
                e->tflops[SG_VAL_COMPUTE_FP32] == 67 &&
                e->tflops[SG_VAL_COMPUTE_TENSOR_FP8] == 1979);
    assert_string_equal(sg_peaks_lookup("NVIDIA H200 NVL", 9, 0)->name, "NVIDIA H200 NVL");
    assert_string_equal(sg_peaks_lookup("NVIDIA H100 80GB HBM3", 9, 0)->name, "NVIDIA H100 SXM");
    assert_string_equal(sg_peaks_lookup("NVIDIA H100 PCIe", 9, 0)->name, "NVIDIA H100 PCIe");
    assert_int_equal(sg_peaks_lookup("NVIDIA H100 PCIe", 9, 0)->gbs, 2000);
    assert_null(sg_peaks_lookup("NVIDIA GH200 480GB", 9, 0));                /* another board */
    assert_null(sg_peaks_lookup("NVIDIA H100 80GB HBM3 MIG 1g.10gb", 9, 0)); /* a slice */
    assert_null(sg_peaks_lookup("NVIDIA H200", 8, 0));                       /* not Hopper */
    assert_null(sg_peaks_lookup("NVIDIA A10", 8, 6));
    assert_null(sg_peaks_lookup("", 9, 0));
}

static void test_wanted_arithmetic_from_types_intensity_and_field(void **state) {
    (void)state;
    const char *why;
    double ridge = 67000.0 / 4800;
    sg_val_task t = task_of(SG_VAL_BF16, SG_VAL_BF16);
    assert_int_equal(sg_peaks_wanted(&t, GEMM_BYTES, GEMM_FLOPS, ridge, &why),
                     SG_VAL_COMPUTE_TENSOR_BF16);
    assert_non_null(strstr(why, "bf16 inputs"));
    /* A bf16 softmax does ~1 flop per byte: the FP32 units are its roof. */
    assert_int_equal(sg_peaks_wanted(&t, SOFTMAX_BYTES, SOFTMAX_FLOPS, ridge, &why),
                     SG_VAL_COMPUTE_FP32);
    t = task_of(SG_VAL_F16, SG_VAL_F16);
    assert_int_equal(sg_peaks_wanted(&t, GEMM_BYTES, GEMM_FLOPS, ridge, &why),
                     SG_VAL_COMPUTE_TENSOR_F16);
    t = task_of(SG_VAL_FP8_E4M3, SG_VAL_BF16);
    assert_int_equal(sg_peaks_wanted(&t, GEMM_BYTES, GEMM_FLOPS, ridge, &why),
                     SG_VAL_COMPUTE_TENSOR_FP8);
    /* f32 operands stay on FP32 (TF32 would need the task to allow its rounding). */
    t = task_of(SG_VAL_F32, SG_VAL_F32);
    assert_int_equal(sg_peaks_wanted(&t, GEMM_BYTES, GEMM_FLOPS, ridge, &why), SG_VAL_COMPUTE_FP32);
    t = task_of(SG_VAL_F64, SG_VAL_F64);
    assert_int_equal(sg_peaks_wanted(&t, GEMM_BYTES, GEMM_FLOPS, ridge, &why), SG_VAL_COMPUTE_FP64);
    /* The task's "compute" field wins over the inference. */
    t = task_of(SG_VAL_F32, SG_VAL_F32);
    t.compute = SG_VAL_COMPUTE_TENSOR_TF32;
    assert_int_equal(sg_peaks_wanted(&t, SOFTMAX_BYTES, SOFTMAX_FLOPS, ridge, &why),
                     SG_VAL_COMPUTE_TENSOR_TF32);
    assert_non_null(strstr(why, "\"compute\" field"));
}

static void diagnose(const sg_peak_choice *c, double bytes, double flops, double ns, sg_buf *out) {
    sg_fb_timing tm = {.candidate = "Candidate 1"};
    tm.cand = (sg_timing){.median_ns = ns, .runs = 20};
    tm.roof = (sg_fb_roofline){
        .have = 1, .bytes = bytes, .flops = flops, .peak_gbs = c->gbs, .peak_gflops = c->gflops};
    snprintf(tm.roof.peak, sizeof tm.roof.peak, "%s", c->label);
    snprintf(tm.roof.bw_source, sizeof tm.roof.bw_source, "%s", c->bw_source);
    sg_feedback_diagnose(&tm, out);
}

/* The case: a bf16 tensor-core GEMM at 687 TFLOP/s on an H200 is compute-bound at
 * 69% of the BF16 tensor peak; against the FP32 peak it would be "1026%" of it. */
static void test_bf16_gemm_on_h200_is_compute_bound_against_the_tensor_peak(void **state) {
    (void)state;
    sg_val_task t = task_of(SG_VAL_BF16, SG_VAL_BF16);
    sg_peak_choice c;
    sg_peaks_choose(&H200, &t, GEMM_BYTES, GEMM_FLOPS, &c);
    assert_int_equal(c.compute, SG_VAL_COMPUTE_TENSOR_BF16);
    assert_true(c.gflops == 989500 && c.gbs == 4800);
    sg_buf out = {0};
    diagnose(&c, GEMM_BYTES, GEMM_FLOPS, 200e3, &out);
    assert_string_equal(
        out.data,
        "compute-bound at 69% of peak arithmetic (687 TFLOP/s against the BF16 tensor-core peak "
        "of the NVIDIA H200, 989.5 TFLOP/s dense (NVIDIA H200 SXM datasheet), for the task's bf16 "
        "inputs (a matrix product)): use fewer or cheaper operations (vector types, tensor cores "
        "where they apply).");
    sg_buf_free(&out);
    /* A naive baseline at 30 TFLOP/s: far below both roofs. */
    diagnose(&c, GEMM_BYTES, GEMM_FLOPS, GEMM_FLOPS / 30e12 * 1e9, &out);
    assert_non_null(strstr(out.data, "latency-bound: only 0% of peak bandwidth and 3% of peak "
                                     "arithmetic (the BF16 tensor-core peak of the NVIDIA H200"));
    sg_buf_free(&out);
}

static void test_bf16_softmax_on_h200_is_memory_bound_against_the_datasheet(void **state) {
    (void)state;
    sg_val_task t = task_of(SG_VAL_BF16, SG_VAL_BF16);
    sg_peak_choice c;
    sg_peaks_choose(&H200, &t, SOFTMAX_BYTES, SOFTMAX_FLOPS, &c);
    assert_int_equal(c.compute, SG_VAL_COMPUTE_FP32);
    assert_string_equal(c.label, "the FP32 peak of the NVIDIA H200, 67 TFLOP/s (NVIDIA H200 SXM "
                                 "datasheet)");
    sg_buf out = {0};
    diagnose(&c, SOFTMAX_BYTES, SOFTMAX_FLOPS, SOFTMAX_BYTES / 3840e9 * 1e9, &out);
    assert_string_equal(out.data,
                        "memory-bound at 80% of peak bandwidth (3840 of 4800 GB/s, NVIDIA H200 "
                        "SXM datasheet): move fewer bytes (fuse, reuse in shared/local memory, "
                        "narrower types).");
    sg_buf_free(&out);
}

/* A CPU (PoCL) and a GPU without a datasheet entry: their own FP32 figure, and the label
 * says why the tensor peak the task would use is not. */
static void test_cpu_and_unknown_gpu_use_fp32_and_say_so(void **state) {
    (void)state;
    sg_val_task t = task_of(SG_VAL_BF16, SG_VAL_BF16);
    sg_be_peaks cpu = {.gbs = 20, .fp32_gflops = 410, .device = "cpu-haswell-AMD EPYC", .cpu = 1};
    sg_peak_choice c;
    sg_peaks_choose(&cpu, &t, GEMM_BYTES, GEMM_FLOPS, &c);
    assert_int_equal(c.compute, SG_VAL_COMPUTE_FP32);
    assert_true(c.gflops == 410 && c.gbs == 20);
    assert_string_equal(
        c.label, "the FP32 peak of the CPU device cpu-haswell-AMD EPYC, 410 GFLOP/s (compute "
                 "units x clock x vector width x 2); a CPU has no tensor cores, so not the "
                 "BF16 tensor-core peak for the task's bf16 inputs (a matrix product)");
    assert_string_equal(c.bw_source, "measured by device fills");
    sg_be_peaks a10 = {
        .gbs = 600, .fp32_gflops = 31200, .device = "NVIDIA A10", .cc_major = 8, .cc_minor = 6};
    sg_peaks_choose(&a10, &t, GEMM_BYTES, GEMM_FLOPS, &c);
    assert_true(c.gflops == 31200 && c.gbs == 600);
    assert_non_null(strstr(c.label, "the FP32 peak of the NVIDIA A10 (sm_86), 31.2 TFLOP/s (SMs x "
                                    "clock x FP32 lanes x 2); no datasheet entry for this GPU, so "
                                    "not the BF16 tensor-core peak"));
    assert_string_equal(c.bw_source, "device attributes");
    /* An f32 task on the CPU: no "not the ..." clause. */
    t = task_of(SG_VAL_F32, SG_VAL_F32);
    sg_peaks_choose(&cpu, &t, GEMM_BYTES, GEMM_FLOPS, &c);
    assert_null(strstr(c.label, "so not"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup_by_name_and_capability),
        cmocka_unit_test(test_wanted_arithmetic_from_types_intensity_and_field),
        cmocka_unit_test(test_bf16_gemm_on_h200_is_compute_bound_against_the_tensor_peak),
        cmocka_unit_test(test_bf16_softmax_on_h200_is_memory_bound_against_the_datasheet),
        cmocka_unit_test(test_cpu_and_unknown_gpu_use_fp32_and_say_so),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
