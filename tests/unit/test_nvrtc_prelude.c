/* device/nvrtc_std.c: which CUDA sources get the libcu++ prelude pre-included (it costs
 * about as much as a small kernel's whole compile): those that include a header specgen
 * serves from it, name std::, or use a name it defines; not the others, and not a source
 * that only uses libcu++'s own cuda::std::. */
#include "device/device.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static void test_plain_kernels_go_without(void **state) {
    (void)state;
    assert_false(sg_nvrtc_needs_prelude(
        "__global__ void scale(float* y, const float* x, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = 2.0f * x[i];\n}\n"));
    /* identifiers that only look like the prelude's */
    assert_false(sg_nvrtc_needs_prelude("int NUM_ROWS = 3; int MAXIMUM = 1; int maxv, mint;"));
    assert_false(sg_nvrtc_needs_prelude("#include <cub/cub.cuh>\n__global__ void k() {}\n"));
    assert_false(sg_nvrtc_needs_prelude("#include <cuda/std/limits>\n__device__ float m = "
                                        "cuda::std::numeric_limits<float>::max();"));
}

static void test_sources_that_need_it(void **state) {
    (void)state;
    assert_true(sg_nvrtc_needs_prelude("#include <math.h>\n__global__ void k() {}\n"));
    assert_true(sg_nvrtc_needs_prelude("  #  include <cstdint>\n"));
    assert_true(sg_nvrtc_needs_prelude("#include <type_traits>\n"));
    assert_true(sg_nvrtc_needs_prelude("__device__ float v = INFINITY;"));
    assert_true(sg_nvrtc_needs_prelude("__device__ float v = -FLT_MAX;"));
    assert_true(sg_nvrtc_needs_prelude("__device__ float v = M_PI;"));
    assert_true(sg_nvrtc_needs_prelude("__device__ int v = INT_MAX;"));
    assert_true(sg_nvrtc_needs_prelude("__global__ void k(uint8_t* p) {}"));
    assert_true(sg_nvrtc_needs_prelude("__global__ void k(int64_t n) { assert(n > 0); }"));
    assert_true(
        sg_nvrtc_needs_prelude("__device__ float f(float a, float b) { return std::max(a, b); }"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_kernels_go_without),
        cmocka_unit_test(test_sources_that_need_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
