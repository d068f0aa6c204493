/* backend.h — the device interface the checks and (later) the profiler run on.
 *
 * Contract: one sg_be per worker process holds the device context. Programs are compiled
 * from source (with the task folder on the include path) and own their kernels; memory
 * is device memory addressed by (handle, byte offset). launch() enqueues; finish() waits
 * and reports asynchronous faults. Every function returns 0 or -1 with err filled; a
 * return of SG_BE_STICKY means the context is unusable and the worker must exit.
 * Internal to the validator (and the profiler); not part of the public API. */
#ifndef SG_VAL_BACKEND_H
#define SG_VAL_BACKEND_H

#include "common/buf.h"
#include "common/err.h"
#include "validator/validator.h"

#include <stddef.h>
#include <stdint.h>

enum { SG_BE_STICKY = -2, SG_BE_NODEV = -3 };

typedef struct sg_be sg_be;
typedef struct sg_be_prog sg_be_prog;
typedef struct sg_be_mem sg_be_mem;

typedef struct sg_be_arg {
    sg_be_mem *mem; /* a buffer argument (payload starts at `offset`), or NULL */
    size_t offset, bytes;
    unsigned char scalar[8]; /* a scalar argument's bytes (size `bytes`) when mem == NULL */
} sg_be_arg;

typedef struct sg_be_limits {
    uint64_t max_block;   /* threads per block / work-group */
    uint64_t max_grid[3]; /* blocks per dimension */
    uint64_t max_smem;    /* shared / local memory bytes per block */
    size_t align;         /* sub-buffer offset alignment in bytes */
    char arch[16];        /* CUDA: "sm_90" (what NVRTC compiles for); OpenCL: "" */
} sg_be_limits;

/* ---- for the profiler: static facts of one kernel (0 where the backend cannot tell) ---- */
typedef struct sg_be_facts {
    uint64_t wg_limit;      /* most threads per block / work-group this kernel allows */
    uint64_t private_bytes; /* OpenCL: private memory per work-item */
    uint64_t local_bytes;   /* CUDA: local memory per thread (spills, local arrays) */
    uint64_t shared_bytes;  /* shared / __local memory per block, static + dynamic */
    int registers;          /* CUDA: registers per thread */
    double occupancy;       /* theoretical, 0..1 */
    const char *limiter;    /* a string literal: what limits the occupancy */
} sg_be_facts;

typedef struct sg_be_ops {
    const char *name;
    /* compile_only: no device needed (CUDA: NVRTC for arch). */
    int (*open)(sg_be **be, const sg_val_pool_opts *o, sg_err *err);
    void (*close)(sg_be *be);
    void (*limits)(sg_be *be, sg_be_limits *l);
    /* Returns 0, or -1 with a one-line reason in err and the compiler log in log. */
    int (*compile)(sg_be *be, const char *src, const char *include_dir, const char *const *kernels,
                   int nkernels, sg_be_prog **prog, sg_buf *log, sg_err *err);
    void (*free_prog)(sg_be *be, sg_be_prog *prog);
    int (*alloc)(sg_be *be, size_t bytes, sg_be_mem **mem, sg_err *err);
    void (*free_mem)(sg_be *be, sg_be_mem *mem);
    int (*write)(sg_be *be, sg_be_mem *mem, size_t off, const void *src, size_t n, sg_err *err);
    int (*read)(sg_be *be, sg_be_mem *mem, size_t off, void *dst, size_t n, sg_err *err);
    int (*launch)(sg_be *be, sg_be_prog *prog, int kernel, const sg_be_arg *args, int nargs,
                  const uint64_t grid[3], const uint64_t block[3], uint64_t smem, sg_err *err);
    int (*finish)(sg_be *be, sg_err *err);
    /* ---- for the profiler (NULL where a backend lacks them) ---- */
    /* A timed region: launches between begin and end are recorded; end waits for them and
     * gives device time in ns from the first kernel's start to the last kernel's end. */
    int (*time_begin)(sg_be *be, sg_err *err);
    int (*time_end)(sg_be *be, double *ns, sg_err *err);
    /* Write n bytes on the device (the cache flush between timed runs). */
    int (*fill)(sg_be *be, sg_be_mem *mem, size_t n, sg_err *err);
    uint64_t (*llc_bytes)(sg_be *be); /* last-level cache size; 0: unknown */
    int (*facts)(sg_be *be, sg_be_prog *prog, int kernel, const uint64_t block[3], uint64_t smem,
                 sg_be_facts *f, sg_err *err);
    /* Hardware metrics of the launches between begin and end, as one line; begin returns
     * -1 with "metrics unavailable: why" in err when the device cannot collect them. */
    int (*metrics_begin)(sg_be *be, sg_err *err);
    int (*metrics_end)(sg_be *be, char *out, size_t n, sg_err *err);
    /* Peak memory bandwidth (GB/s) and FP32 arithmetic (GFLOP/s) for the roofline. */
    int (*peaks)(sg_be *be, double *gbs, double *gflops, sg_err *err);
} sg_be_ops;

extern const sg_be_ops sg_be_opencl_ops;
extern const sg_be_ops sg_be_cuda_ops;
const sg_be_ops *sg_be_ops_for(sg_val_lang lang);

#endif
