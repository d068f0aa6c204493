/* cuda.h — the CUDA driver, NVRTC and CUPTI entry points, loaded at run time (dlopen).
 *
 * Contract: one table per library, loaded on its first request and kept for the rest of
 * the process (never unloaded), so specgen builds without the CUDA libraries and runs,
 * saying what is missing, on machines without them. Each library loads on its own: a
 * machine with NVRTC but no driver still compiles. Loading is thread-safe (pthread_once)
 * and happens once: a library that failed to load fails the same way on every later call.
 * sg_cuda_driver_load, _nvrtc_load and _cupti_load return the table (shared, read-only,
 * owned by this module) or NULL after filling err with which library could not be found
 * (the names tried and dlerror's reasons) or which symbol it lacks. Optional symbols
 * (1 in the lists below) are NULL when the library is too old to have them. Symbol
 * loading only: nothing here calls cuInit or touches a device.
 *
 * Types: declared here with the ABI the libraries export, so no CUDA header is needed.
 * tests/unit/test_cuda_abi.c defines SG_CU_TOOLKIT_TYPES before including this file: the
 * types then are the toolkit's own (cuda.h, nvrtc.h, cupti_activity.h) and the test
 * asserts that every member has exactly the type of the function it is loaded from and
 * that every constant equals the header's. Nothing else may define that macro. */
#ifndef SG_CUDA_H
#define SG_CUDA_H

#include "common/dl.h"
#include "common/err.h"

#include <stddef.h>
#include <stdint.h>

#if defined(SG_CU_TOOLKIT_TYPES)
#include <cuda.h>
#include <cupti_activity.h>
#include <nvrtc.h>
typedef CUresult sg_cu_result;
typedef CUdevice sg_cu_device;
typedef CUdeviceptr sg_cu_ptr;
typedef CUcontext sg_cu_context;
typedef CUmodule sg_cu_module;
typedef CUfunction sg_cu_function;
typedef CUstream sg_cu_stream;
typedef CUdevice_attribute sg_cu_device_attr;
typedef CUfunction_attribute sg_cu_func_attr;
typedef nvrtcResult sg_nvrtc_result;
typedef nvrtcProgram sg_nvrtc_program;
typedef CUptiResult sg_cupti_result;
typedef CUpti_ActivityKind sg_cupti_activity_kind;
typedef CUpti_Activity sg_cupti_activity;
typedef CUpti_BuffersCallbackRequestFunc sg_cupti_buf_request;
typedef CUpti_BuffersCallbackCompleteFunc sg_cupti_buf_complete;
#else
typedef int sg_cu_result; /* enums: int-sized */
typedef int sg_cu_device;
typedef unsigned long long sg_cu_ptr;
typedef void *sg_cu_context, *sg_cu_module, *sg_cu_function, *sg_cu_stream;
typedef int sg_cu_device_attr, sg_cu_func_attr;
typedef int sg_nvrtc_result;
typedef void *sg_nvrtc_program;
typedef int sg_cupti_result, sg_cupti_activity_kind;
typedef struct sg_cupti_activity sg_cupti_activity; /* starts with its kind; cast it */
typedef void (*sg_cupti_buf_request)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*sg_cupti_buf_complete)(sg_cu_context ctx, uint32_t stream, uint8_t *buffer,
                                      size_t size, size_t valid);
#endif

/* The lists: X(library symbol, table member, optional, return type, parameters). Symbol
 * names are the exact versions cuda.h maps the API names to (cuMemAlloc -> cuMemAlloc_v2). */
#define SG_CUDA_DRIVER_SYMS(X)                                                                     \
    X(cuInit, init, 0, sg_cu_result, (unsigned))                                                   \
    X(cuDeviceGetCount, device_count, 0, sg_cu_result, (int *))                                    \
    X(cuDeviceGet, device_get, 0, sg_cu_result, (sg_cu_device *, int))                             \
    X(cuDeviceGetName, device_name, 0, sg_cu_result, (char *, int, sg_cu_device))                  \
    X(cuDeviceGetAttribute, attr, 0, sg_cu_result, (int *, sg_cu_device_attr, sg_cu_device))       \
    X(cuDevicePrimaryCtxRetain, primary_retain, 0, sg_cu_result, (sg_cu_context *, sg_cu_device))  \
    X(cuDevicePrimaryCtxRelease_v2, primary_release, 0, sg_cu_result, (sg_cu_device))              \
    X(cuCtxSetCurrent, set_current, 0, sg_cu_result, (sg_cu_context))                              \
    X(cuCtxSynchronize, sync, 0, sg_cu_result, (void))                                             \
    X(cuMemGetInfo_v2, mem_info, 0, sg_cu_result, (size_t *, size_t *))                            \
    X(cuMemAlloc_v2, alloc, 0, sg_cu_result, (sg_cu_ptr *, size_t))                                \
    X(cuMemFree_v2, free, 0, sg_cu_result, (sg_cu_ptr))                                            \
    X(cuMemcpyHtoD_v2, htod, 0, sg_cu_result, (sg_cu_ptr, const void *, size_t))                   \
    X(cuMemcpyDtoH_v2, dtoh, 0, sg_cu_result, (void *, sg_cu_ptr, size_t))                         \
    X(cuMemHostAlloc, host_alloc, 0, sg_cu_result, (void **, size_t, unsigned))                    \
    X(cuMemFreeHost, host_free, 0, sg_cu_result, (void *))                                         \
    X(cuMemHostGetFlags, host_flags, 0, sg_cu_result, (unsigned *, void *))                        \
    X(cuModuleLoadData, load, 0, sg_cu_result, (sg_cu_module *, const void *))                     \
    X(cuModuleUnload, unload, 0, sg_cu_result, (sg_cu_module))                                     \
    X(cuModuleGetFunction, get_function, 0, sg_cu_result,                                          \
      (sg_cu_function *, sg_cu_module, const char *))                                              \
    X(cuFuncGetAttribute, func_attr, 0, sg_cu_result, (int *, sg_cu_func_attr, sg_cu_function))    \
    X(cuFuncSetAttribute, func_set_attr, 0, sg_cu_result, (sg_cu_function, sg_cu_func_attr, int))  \
    X(cuLaunchKernel, launch, 0, sg_cu_result,                                                     \
      (sg_cu_function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,       \
       sg_cu_stream, void **, void **))                                                            \
    X(cuGetErrorString, errstr, 1, sg_cu_result, (sg_cu_result, const char **))                    \
    /* CUDA 12.4+: the backend counts a kernel's parameters with it when it is there */            \
    X(cuFuncGetParamInfo, param_info, 1, sg_cu_result,                                             \
      (sg_cu_function, size_t, size_t *, size_t *))                                                \
    /* the profiler's L2 flush and occupancy: the backend copes when they are absent */            \
    X(cuMemsetD8_v2, memset8, 1, sg_cu_result, (sg_cu_ptr, unsigned char, size_t))                 \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor, occupancy, 1, sg_cu_result,                     \
      (int *, sg_cu_function, int, size_t))
#define SG_CUDA_NVRTC_SYMS(X)                                                                      \
    X(nvrtcCreateProgram, create, 0, sg_nvrtc_result,                                              \
      (sg_nvrtc_program *, const char *, const char *, int, const char *const *,                   \
       const char *const *))                                                                       \
    X(nvrtcCompileProgram, compile, 0, sg_nvrtc_result,                                            \
      (sg_nvrtc_program, int, const char *const *))                                                \
    X(nvrtcGetProgramLogSize, log_size, 0, sg_nvrtc_result, (sg_nvrtc_program, size_t *))          \
    X(nvrtcGetProgramLog, log, 0, sg_nvrtc_result, (sg_nvrtc_program, char *))                     \
    X(nvrtcGetCUBINSize, cubin_size, 0, sg_nvrtc_result, (sg_nvrtc_program, size_t *))             \
    X(nvrtcGetCUBIN, cubin, 0, sg_nvrtc_result, (sg_nvrtc_program, char *))                        \
    X(nvrtcAddNameExpression, add_name, 0, sg_nvrtc_result, (sg_nvrtc_program, const char *))      \
    X(nvrtcGetLoweredName, lowered, 0, sg_nvrtc_result,                                            \
      (sg_nvrtc_program, const char *, const char **))                                             \
    X(nvrtcDestroyProgram, destroy, 0, sg_nvrtc_result, (sg_nvrtc_program *))                      \
    X(nvrtcGetErrorString, errstr, 0, const char *, (sg_nvrtc_result))
/* The activity API (device time of kernels). The Range Profiler's symbols stay with its
 * code (device/cupti_range.c): its parameter types are C++-only in part; it resolves them
 * with sg_cuda_cupti_resolve. */
#define SG_CUDA_CUPTI_SYMS(X)                                                                      \
    X(cuptiActivityEnable, enable, 0, sg_cupti_result, (sg_cupti_activity_kind))                   \
    X(cuptiActivityDisable, disable, 0, sg_cupti_result, (sg_cupti_activity_kind))                 \
    X(cuptiActivityRegisterCallbacks, register_callbacks, 0, sg_cupti_result,                      \
      (sg_cupti_buf_request, sg_cupti_buf_complete))                                               \
    X(cuptiActivityFlushAll, flush, 0, sg_cupti_result, (uint32_t))                                \
    X(cuptiActivityGetNextRecord, next_record, 0, sg_cupti_result,                                 \
      (uint8_t *, size_t, sg_cupti_activity **))                                                   \
    X(cuptiGetResultString, errstr, 1, sg_cupti_result, (sg_cupti_result, const char **))

#define SG_CUDA_MEMBER(name, member, optional, ret, params) ret(*member) params;
typedef struct sg_cuda_driver {
    SG_CUDA_DRIVER_SYMS(SG_CUDA_MEMBER)
} sg_cuda_driver;
typedef struct sg_cuda_nvrtc {
    SG_CUDA_NVRTC_SYMS(SG_CUDA_MEMBER)
} sg_cuda_nvrtc;
typedef struct sg_cuda_cupti {
    SG_CUDA_CUPTI_SYMS(SG_CUDA_MEMBER)
} sg_cuda_cupti;
#undef SG_CUDA_MEMBER

/* libcuda.so.1 (then libcuda.so). */
const sg_cuda_driver *sg_cuda_driver_load(sg_err *err);
/* libnvrtc.so (.13, .12, .11.2) on the loader path, then CUDA_HOME (default
 * /usr/local/cuda) lib64 and targets/x86_64-linux/lib; err is the loader path's reason. */
const sg_cuda_nvrtc *sg_cuda_nvrtc_load(sg_err *err);
/* libcupti.so (.13, .12) on the loader path, then CUDA_HOME lib64, extras/CUPTI/lib64 and
 * targets/x86_64-linux/lib, where the toolkit's packages put it. */
const sg_cuda_cupti *sg_cuda_cupti_load(sg_err *err);
/* More CUPTI symbols into the caller's slots (table ending with {NULL}), from the library
 * sg_cuda_cupti_load loads (and loads it first if needed). -1 with err as above. */
int sg_cuda_cupti_resolve(const sg_dl_sym *syms, sg_err *err);

/* The values of the cuda.h enums used (CUdevice_attribute, CUfunction_attribute, CUresult,
 * cuMemHostAlloc's flags). */
enum {
    SG_CU_DEV_MAX_THREADS_PER_BLOCK = 1,
    SG_CU_DEV_MAX_GRID_DIM_X = 5, /* Y = 6, Z = 7 */
    SG_CU_DEV_CLOCK_RATE = 13,
    SG_CU_DEV_MULTIPROCESSOR_COUNT = 16,
    SG_CU_DEV_MEMORY_CLOCK_RATE = 36,
    SG_CU_DEV_GLOBAL_MEMORY_BUS_WIDTH = 37,
    SG_CU_DEV_L2_CACHE_SIZE = 38,
    SG_CU_DEV_MAX_THREADS_PER_MULTIPROCESSOR = 39,
    SG_CU_DEV_COMPUTE_CAPABILITY_MAJOR = 75,
    SG_CU_DEV_COMPUTE_CAPABILITY_MINOR = 76,
    SG_CU_DEV_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
    SG_CU_DEV_MAX_REGISTERS_PER_MULTIPROCESSOR = 82,
    SG_CU_DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
    SG_CU_DEV_MAX_BLOCKS_PER_MULTIPROCESSOR = 106,
    SG_CU_FUNC_MAX_THREADS_PER_BLOCK = 0,
    SG_CU_FUNC_SHARED_SIZE_BYTES = 1,
    SG_CU_FUNC_LOCAL_SIZE_BYTES = 3,
    SG_CU_FUNC_NUM_REGS = 4,
    SG_CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    SG_CU_ERR_INVALID_VALUE = 1,
    SG_CU_ERR_ILLEGAL_ADDRESS = 700,
    SG_CU_ERR_LAUNCH_TIMEOUT = 702,
    SG_CU_ERR_ASSERT = 710,
    SG_CU_ERR_HARDWARE_STACK_ERROR = 714, /* 714..719: the kernel faulted */
    SG_CU_ERR_LAUNCH_FAILED = 719,
    SG_CU_ERR_TENSOR_MEMORY_LEAK = 721,
    SG_CU_MEMHOSTALLOC_PORTABLE = 1,
};

#endif
