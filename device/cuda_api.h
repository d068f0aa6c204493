/* cuda_api.h — the CUDA driver and NVRTC functions the CUDA backend dlopens (internal).
 *
 * Contract: the function-pointer tables and the enum values be_cuda.c uses, declared
 * with the ABI libcuda.so.1 and libnvrtc export, so the backend builds without the CUDA
 * headers. tests/unit/test_cuda_abi.c defines SG_CU_TOOLKIT_TYPES before including this
 * file: the tables then take the toolkit's own types (cuda.h, nvrtc.h) and the test
 * asserts that every member has exactly the type of the function it is loaded from and
 * that every constant equals the header's. Nothing else may define that macro. */
#ifndef SG_VAL_CUDA_API_H
#define SG_VAL_CUDA_API_H

#include <stddef.h>

#if defined(SG_CU_TOOLKIT_TYPES)
#include <cuda.h>
#include <nvrtc.h>
#else
typedef int CUresult; /* enums: int-sized */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream;
typedef int CUdevice_attribute, CUfunction_attribute;
typedef int nvrtcResult;
typedef void *nvrtcProgram;
#endif

typedef struct nvrtc_api {
    nvrtcResult (*create)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                          const char *const *);
    nvrtcResult (*compile)(nvrtcProgram, int, const char *const *);
    nvrtcResult (*log_size)(nvrtcProgram, size_t *);
    nvrtcResult (*log)(nvrtcProgram, char *);
    nvrtcResult (*cubin_size)(nvrtcProgram, size_t *);
    nvrtcResult (*cubin)(nvrtcProgram, char *);
    nvrtcResult (*add_name)(nvrtcProgram, const char *);
    nvrtcResult (*lowered)(nvrtcProgram, const char *, const char **);
    nvrtcResult (*destroy)(nvrtcProgram *);
    const char *(*errstr)(nvrtcResult);
} nvrtc_api;

typedef struct cu_api {
    CUresult (*init)(unsigned);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*attr)(int *, CUdevice_attribute, CUdevice);
    CUresult (*primary_retain)(CUcontext *, CUdevice);
    CUresult (*set_current)(CUcontext);
    CUresult (*load)(CUmodule *, const void *);
    CUresult (*unload)(CUmodule);
    CUresult (*get_function)(CUfunction *, CUmodule, const char *);
    CUresult (*func_attr)(int *, CUfunction_attribute, CUfunction);
    CUresult (*func_set_attr)(CUfunction, CUfunction_attribute, int);
    CUresult (*alloc)(CUdeviceptr *, size_t);
    CUresult (*free)(CUdeviceptr);
    CUresult (*htod)(CUdeviceptr, const void *, size_t);
    CUresult (*dtoh)(void *, CUdeviceptr, size_t);
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       unsigned, CUstream, void **, void **);
    CUresult (*sync)(void);
    CUresult (*errstr)(CUresult, const char **);
    CUresult (*param_info)(CUfunction, size_t, size_t *, size_t *); /* CUDA 12.4+, optional */
    /* the profiler's, looked up on first use (prof_syms) */
    CUresult (*memset8)(CUdeviceptr, unsigned char, size_t);
    CUresult (*occupancy)(int *, CUfunction, int, size_t);
} cu_api;

/* What be_cuda.c dlsyms, as X(library symbol, table member, optional): the symbol names
 * are the exact versions cuda.h maps the API names to (cuMemAlloc -> cuMemAlloc_v2). */
#define SG_NVRTC_SYMS(X)                                                                           \
    X(nvrtcCreateProgram, create, 0)                                                               \
    X(nvrtcCompileProgram, compile, 0)                                                             \
    X(nvrtcGetProgramLogSize, log_size, 0)                                                         \
    X(nvrtcGetProgramLog, log, 0)                                                                  \
    X(nvrtcGetCUBINSize, cubin_size, 0)                                                            \
    X(nvrtcGetCUBIN, cubin, 0)                                                                     \
    X(nvrtcAddNameExpression, add_name, 0)                                                         \
    X(nvrtcGetLoweredName, lowered, 0)                                                             \
    X(nvrtcDestroyProgram, destroy, 0)                                                             \
    X(nvrtcGetErrorString, errstr, 0)
#define SG_CU_SYMS(X)                                                                              \
    X(cuInit, init, 0)                                                                             \
    X(cuDeviceGet, device_get, 0)                                                                  \
    X(cuDeviceGetAttribute, attr, 0)                                                               \
    X(cuDevicePrimaryCtxRetain, primary_retain, 0)                                                 \
    X(cuCtxSetCurrent, set_current, 0)                                                             \
    X(cuModuleLoadData, load, 0)                                                                   \
    X(cuModuleUnload, unload, 0)                                                                   \
    X(cuModuleGetFunction, get_function, 0)                                                        \
    X(cuFuncGetAttribute, func_attr, 0)                                                            \
    X(cuFuncSetAttribute, func_set_attr, 0)                                                        \
    X(cuMemAlloc_v2, alloc, 0)                                                                     \
    X(cuMemFree_v2, free, 0)                                                                       \
    X(cuMemcpyHtoD_v2, htod, 0)                                                                    \
    X(cuMemcpyDtoH_v2, dtoh, 0)                                                                    \
    X(cuLaunchKernel, launch, 0)                                                                   \
    X(cuCtxSynchronize, sync, 0)                                                                   \
    X(cuGetErrorString, errstr, 0)                                                                 \
    X(cuFuncGetParamInfo, param_info, 1) /* check_params counts the kernel's parameters */
/* the profiler's, looked up on its first use */
#define SG_CU_PROF_SYMS(X)                                                                         \
    X(cuMemsetD8_v2, memset8, 1)                                                                   \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor, occupancy, 1)

/* The values of the cuda.h enums used (CUdevice_attribute, CUfunction_attribute, CUresult). */
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
};

#endif
