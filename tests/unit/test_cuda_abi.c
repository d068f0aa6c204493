/* The CUDA ABI declared by hand (common/cuda.h: the driver, NVRTC and CUPTI tables that
 * the CUDA backend, the profiler and kvstore share) against the toolkit's own headers: nothing CUDA
 * runs on the machines that build specgen, so a prototype that differs from the library's (size_t
 * vs unsigned, a missing _v2), or a wrong enum value, would first show as garbage on a GPU.
 * Compiled with the toolkit types (SG_CU_TOOLKIT_TYPES): every table member must have exactly the
 * type of the function it is loaded from, or this file does not compile. At run time: every symbol
 * name is the version cuda.h maps the API name to, and every hard-coded value equals the
 * header's. Skips when the CUDA headers were absent at build time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#if defined(SG_HAVE_CUDA_H)
#define SG_CU_TOOLKIT_TYPES 1
#include "common/cuda.h"

#define SAME_TYPE(table, name, member)                                                             \
    _Static_assert(                                                                                \
        __builtin_types_compatible_p(__typeof__(((table *)0)->member), __typeof__(&name)),         \
        #table "." #member " differs from the prototype of " #name " in the headers");
#define DRIVER_TYPE(name, member, optional, ret, params) SAME_TYPE(sg_cuda_driver, name, member)
#define NVRTC_TYPE(name, member, optional, ret, params) SAME_TYPE(sg_cuda_nvrtc, name, member)
#define CUPTI_TYPE(name, member, optional, ret, params) SAME_TYPE(sg_cuda_cupti, name, member)
SG_CUDA_DRIVER_SYMS(DRIVER_TYPE)
SG_CUDA_NVRTC_SYMS(NVRTC_TYPE)
SG_CUDA_CUPTI_SYMS(CUPTI_TYPE)

/* The fallback types (no headers) must have the size of the toolkit's. */
_Static_assert(sizeof(CUresult) == sizeof(int) && sizeof(nvrtcResult) == sizeof(int) &&
                   sizeof(CUdevice) == sizeof(int) && sizeof(CUdevice_attribute) == sizeof(int) &&
                   sizeof(CUfunction_attribute) == sizeof(int) &&
                   sizeof(CUptiResult) == sizeof(int) && sizeof(CUpti_ActivityKind) == sizeof(int),
               "the enums and CUdevice are int-sized");
_Static_assert(__builtin_types_compatible_p(CUdeviceptr, unsigned long long),
               "CUdeviceptr is unsigned long long");
_Static_assert(sizeof(CUcontext) == sizeof(void *) && sizeof(CUmodule) == sizeof(void *) &&
                   sizeof(CUfunction) == sizeof(void *) && sizeof(CUstream) == sizeof(void *) &&
                   sizeof(nvrtcProgram) == sizeof(void *),
               "the handles are pointers");
/* The fallback callback types spell CUcontext as void *: the same pointer ABI. */
_Static_assert(__builtin_types_compatible_p(CUpti_BuffersCallbackRequestFunc,
                                            void (*)(uint8_t **, size_t *, size_t *)),
               "CUPTI's buffer request callback");
_Static_assert(__builtin_types_compatible_p(CUpti_BuffersCallbackCompleteFunc,
                                            void (*)(CUcontext, uint32_t, uint8_t *, size_t,
                                                     size_t)),
               "CUPTI's buffer complete callback");

#define STR2(x) #x
#define STR(x) STR2(x) /* after macro expansion: what cuda.h maps a name to */

/* A name the headers redirect (cuMemAlloc -> cuMemAlloc_v2) is the old ABI in the
 * library: the table must name the version the prototype belongs to. */
static void symbol_versions(void **state) {
    (void)state;
    int n = 0;
#define NAME_IS_FINAL(name, member, optional, ret, params)                                         \
    assert_string_equal(STR(name), #name);                                                         \
    n++;
    SG_CUDA_DRIVER_SYMS(NAME_IS_FINAL)
    SG_CUDA_NVRTC_SYMS(NAME_IS_FINAL)
    SG_CUDA_CUPTI_SYMS(NAME_IS_FINAL)
    assert_int_equal(n, 27 + 10 + 6);
    assert_string_equal(STR(cuMemAlloc), "cuMemAlloc_v2"); /* the check itself can fail */
}

static void enum_values(void **state) {
    (void)state;
    assert_int_equal(SG_CU_DEV_MAX_THREADS_PER_BLOCK, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    assert_int_equal(SG_CU_DEV_MAX_GRID_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
    assert_int_equal(SG_CU_DEV_MAX_GRID_DIM_X + 1, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
    assert_int_equal(SG_CU_DEV_MAX_GRID_DIM_X + 2, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
    assert_int_equal(SG_CU_DEV_CLOCK_RATE, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    assert_int_equal(SG_CU_DEV_MULTIPROCESSOR_COUNT, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    assert_int_equal(SG_CU_DEV_MEMORY_CLOCK_RATE, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    assert_int_equal(SG_CU_DEV_GLOBAL_MEMORY_BUS_WIDTH,
                     CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    assert_int_equal(SG_CU_DEV_L2_CACHE_SIZE, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    assert_int_equal(SG_CU_DEV_MAX_THREADS_PER_MULTIPROCESSOR,
                     CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    assert_int_equal(SG_CU_DEV_COMPUTE_CAPABILITY_MAJOR,
                     CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    assert_int_equal(SG_CU_DEV_COMPUTE_CAPABILITY_MINOR,
                     CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    assert_int_equal(SG_CU_DEV_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
                     CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    assert_int_equal(SG_CU_DEV_MAX_REGISTERS_PER_MULTIPROCESSOR,
                     CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    assert_int_equal(SG_CU_DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                     CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    assert_int_equal(SG_CU_DEV_MAX_BLOCKS_PER_MULTIPROCESSOR,
                     CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
    assert_int_equal(SG_CU_FUNC_MAX_THREADS_PER_BLOCK, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    assert_int_equal(SG_CU_FUNC_SHARED_SIZE_BYTES, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    assert_int_equal(SG_CU_FUNC_LOCAL_SIZE_BYTES, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
    assert_int_equal(SG_CU_FUNC_NUM_REGS, CU_FUNC_ATTRIBUTE_NUM_REGS);
    assert_int_equal(SG_CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                     CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    assert_int_equal(SG_CU_ERR_INVALID_VALUE, CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(SG_CU_ERR_ILLEGAL_ADDRESS, CUDA_ERROR_ILLEGAL_ADDRESS);
    assert_int_equal(SG_CU_ERR_LAUNCH_TIMEOUT, CUDA_ERROR_LAUNCH_TIMEOUT);
    assert_int_equal(SG_CU_ERR_ASSERT, CUDA_ERROR_ASSERT);
    assert_int_equal(SG_CU_ERR_HARDWARE_STACK_ERROR, CUDA_ERROR_HARDWARE_STACK_ERROR);
    assert_int_equal(SG_CU_ERR_LAUNCH_FAILED, CUDA_ERROR_LAUNCH_FAILED);
    assert_int_equal(SG_CU_ERR_TENSOR_MEMORY_LEAK, CUDA_ERROR_TENSOR_MEMORY_LEAK);
    assert_int_equal(SG_CU_MEMHOSTALLOC_PORTABLE, CU_MEMHOSTALLOC_PORTABLE);
    /* the faults between HARDWARE_STACK_ERROR and LAUNCH_FAILED, all sticky */
    assert_int_equal(CUDA_ERROR_ILLEGAL_INSTRUCTION, 715);
    assert_int_equal(CUDA_ERROR_MISALIGNED_ADDRESS, 716);
    assert_int_equal(CUDA_ERROR_INVALID_ADDRESS_SPACE, 717);
    assert_int_equal(CUDA_ERROR_INVALID_PC, 718);
}

/* device/cupti.c reads start and end through the newest kernel record of the headers
 * it is built with, from records of whichever version libcupti writes: every version
 * must keep them where the oldest (CUpti_ActivityKernel4, in the deprecated header) has
 * them. The record buffer alignment CUPTI requires is 8 (ACTIVITY_RECORD_ALIGNMENT). */
static void kernel_record(void **state) {
    (void)state;
    assert_int_equal(offsetof(CUpti_ActivityKernel10, kind), 0);
    assert_int_equal(offsetof(CUpti_ActivityKernel10, start),
                     offsetof(CUpti_ActivityKernel4, start));
    assert_int_equal(offsetof(CUpti_ActivityKernel10, end), offsetof(CUpti_ActivityKernel4, end));
    assert_int_equal(ACTIVITY_RECORD_ALIGNMENT, 8);
    assert_int_equal(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, 10);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(symbol_versions),
        cmocka_unit_test(enum_values),
        cmocka_unit_test(kernel_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else

static void no_headers(void **state) {
    (void)state;
    skip(); /* built without the CUDA headers: nothing to compare against */
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(no_headers)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
