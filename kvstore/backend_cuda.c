/* The cuda backend: the region is device memory of one GPU, allocated in chunks with
 * the driver API (cuMemAlloc), which is loaded with dlopen so that specgen runs, and
 * says plainly that there is no GPU, on machines without an NVIDIA driver. Socket I/O
 * is staged through pinned host buffers (cuMemHostAlloc). Untested on the build
 * machine (it has no GPU): `make gpu-check` (kvstore/gpu-check.sh) exercises it. */
#include "kvstore/backend.h"

#include "common/buf.h"
#include "common/dl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The few driver API types used, declared here so no CUDA header is needed. */
typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef unsigned long long CUdeviceptr;

#define CHUNK ((uint64_t)256 << 20)
#define CU_MEMHOSTALLOC_PORTABLE 1

typedef struct cuda_api {
    CUresult (*cuInit)(unsigned);
    CUresult (*cuDeviceGetCount)(int *);
    CUresult (*cuDeviceGet)(CUdevice *, int);
    CUresult (*cuDeviceGetName)(char *, int, CUdevice);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
    CUresult (*cuCtxSetCurrent)(CUcontext);
    CUresult (*cuMemGetInfo)(size_t *, size_t *);
    CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
    CUresult (*cuMemFree)(CUdeviceptr);
    CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
    CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
    CUresult (*cuMemHostAlloc)(void **, size_t, unsigned);
    CUresult (*cuMemFreeHost)(void *);
    CUresult (*cuMemHostGetFlags)(unsigned *, void *);
    CUresult (*cuGetErrorString)(CUresult, const char **);
} cuda_api;

typedef struct cuda_impl {
    cuda_api api;
    void *lib;
    CUdevice dev;
    CUcontext ctx;
    uint32_t nchunks;
    CUdeviceptr *chunks; /* 0 while released */
} cuda_impl;

static int cu_fail(cuda_impl *c, CUresult r, const char *what, sg_err *err) {
    const char *s = NULL;
    if (c->api.cuGetErrorString) c->api.cuGetErrorString(r, &s);
    return sg_errf(err, "cuda backend: %s failed: %s (CUresult %d)", what, s ? s : "unknown error",
                   r);
}

#define CU(c, call, what, err)                                                                     \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_ != 0) return cu_fail(c, r_, what, err);                                             \
    } while (0)

static int cuda_write(sg_kv_backend *b, uint64_t off, const void *src, size_t n, sg_err *err) {
    cuda_impl *c = b->impl;
    CU(c, c->api.cuCtxSetCurrent(c->ctx), "cuCtxSetCurrent", err);
    CUdeviceptr d = c->chunks[off / b->chunk_bytes] + off % b->chunk_bytes;
    CU(c, c->api.cuMemcpyHtoD(d, src, n), "cuMemcpyHtoD", err);
    return 0;
}

static int cuda_read(sg_kv_backend *b, uint64_t off, void *dst, size_t n, sg_err *err) {
    cuda_impl *c = b->impl;
    CU(c, c->api.cuCtxSetCurrent(c->ctx), "cuCtxSetCurrent", err);
    CUdeviceptr d = c->chunks[off / b->chunk_bytes] + off % b->chunk_bytes;
    CU(c, c->api.cuMemcpyDtoH(dst, d, n), "cuMemcpyDtoH", err);
    return 0;
}

static int cuda_release(sg_kv_backend *b, uint32_t chunk, sg_err *err) {
    cuda_impl *c = b->impl;
    if (!c->chunks[chunk]) return 0;
    CU(c, c->api.cuCtxSetCurrent(c->ctx), "cuCtxSetCurrent", err);
    CU(c, c->api.cuMemFree(c->chunks[chunk]), "cuMemFree", err);
    c->chunks[chunk] = 0;
    return 0;
}

static int cuda_acquire(sg_kv_backend *b, uint32_t chunk, sg_err *err) {
    cuda_impl *c = b->impl;
    if (c->chunks[chunk]) return 0;
    CU(c, c->api.cuCtxSetCurrent(c->ctx), "cuCtxSetCurrent", err);
    CU(c, c->api.cuMemAlloc(&c->chunks[chunk], b->chunk_bytes),
       "cuMemAlloc of a 256 MiB chunk (is another process using the GPU memory?)", err);
    return 0;
}

static void *cuda_stage_alloc(sg_kv_backend *b, size_t n) {
    cuda_impl *c = b->impl;
    void *p = NULL;
    if (c->api.cuCtxSetCurrent(c->ctx) != 0 ||
        c->api.cuMemHostAlloc(&p, n, CU_MEMHOSTALLOC_PORTABLE) != 0)
        return sg_xmalloc(n); /* pageable memory still works, only slower */
    return p;
}

/* The stage may be pinned or, when pinning failed, malloc'ed: ask the driver which
 * (with the context current: the closing thread may never have used it), and never
 * free() a pinned buffer: without a context it is left to the process's end. */
static void cuda_stage_free(sg_kv_backend *b, void *p, size_t n) {
    cuda_impl *c = b->impl;
    unsigned flags;
    if (c->api.cuCtxSetCurrent(c->ctx) != 0) return;
    if (c->api.cuMemHostGetFlags(&flags, p) == 0)
        c->api.cuMemFreeHost(p);
    else
        free(p);
}

static void cuda_destroy(sg_kv_backend *b) {
    cuda_impl *c = b->impl;
    if (c->ctx) {
        c->api.cuCtxSetCurrent(c->ctx);
        for (uint32_t i = 0; i < c->nchunks; i++)
            if (c->chunks[i]) c->api.cuMemFree(c->chunks[i]);
        c->api.cuDevicePrimaryCtxRelease(c->dev);
    }
    sg_dl_close(c->lib);
    free(c->chunks);
    free(c);
    free(b);
}

static const sg_kv_backend_ops cuda_ops = {
    cuda_write,       cuda_read,       cuda_release, cuda_acquire,
    cuda_stage_alloc, cuda_stage_free, cuda_destroy,
};

static int load_api(cuda_impl *c, sg_err *err) {
    cuda_api *a = &c->api;
    const sg_dl_sym syms[] = {
        {"cuInit", (void **)&a->cuInit, 0},
        {"cuDeviceGetCount", (void **)&a->cuDeviceGetCount, 0},
        {"cuDeviceGet", (void **)&a->cuDeviceGet, 0},
        {"cuDeviceGetName", (void **)&a->cuDeviceGetName, 0},
        {"cuDevicePrimaryCtxRetain", (void **)&a->cuDevicePrimaryCtxRetain, 0},
        {"cuDevicePrimaryCtxRelease_v2", (void **)&a->cuDevicePrimaryCtxRelease, 0},
        {"cuCtxSetCurrent", (void **)&a->cuCtxSetCurrent, 0},
        {"cuMemGetInfo_v2", (void **)&a->cuMemGetInfo, 0},
        {"cuMemAlloc_v2", (void **)&a->cuMemAlloc, 0},
        {"cuMemFree_v2", (void **)&a->cuMemFree, 0},
        {"cuMemcpyHtoD_v2", (void **)&a->cuMemcpyHtoD, 0},
        {"cuMemcpyDtoH_v2", (void **)&a->cuMemcpyDtoH, 0},
        {"cuMemHostAlloc", (void **)&a->cuMemHostAlloc, 0},
        {"cuMemFreeHost", (void **)&a->cuMemFreeHost, 0},
        {"cuMemHostGetFlags", (void **)&a->cuMemHostGetFlags, 0},
        {"cuGetErrorString", (void **)&a->cuGetErrorString, 1},
        {NULL, NULL, 0},
    };
    static const char *const names[] = {"libcuda.so.1", "libcuda.so", NULL};
    if (sg_dl_load(names, syms, &c->lib, err) != 0)
        return sg_err_prefix(err, "cuda backend: no NVIDIA driver on this machine");
    return 0;
}

int sg_kv_backend_cuda_open(int device, uint64_t bytes, sg_kv_backend **out, sg_err *err) {
    cuda_impl *c = sg_xcalloc(1, sizeof *c);
    sg_kv_backend *b = sg_xcalloc(1, sizeof *b);
    b->impl = c;
    b->ops = &cuda_ops;
    if (load_api(c, err) != 0) goto fail;
    int n = 0;
    CUresult r = c->api.cuInit(0);
    if (r != 0) {
        cu_fail(c, r, "cuInit (no usable NVIDIA GPU?)", err);
        goto fail;
    }
    if ((r = c->api.cuDeviceGetCount(&n)) != 0 || device < 0 || device >= n) {
        sg_errf(err, "cuda backend: there is no GPU cuda:%d (this machine has %d)", device, n);
        goto fail;
    }
    char gpu[96] = "";
    size_t free_b = 0, total_b = 0;
    if ((r = c->api.cuDeviceGet(&c->dev, device)) != 0 ||
        (r = c->api.cuDeviceGetName(gpu, sizeof gpu, c->dev)) != 0 ||
        (r = c->api.cuDevicePrimaryCtxRetain(&c->ctx, c->dev)) != 0 ||
        (r = c->api.cuCtxSetCurrent(c->ctx)) != 0 ||
        (r = c->api.cuMemGetInfo(&free_b, &total_b)) != 0) {
        cu_fail(c, r, "opening the device", err);
        goto fail;
    }
    if (bytes == 0) { /* auto: the spare memory, keeping a margin for the other jobs */
        uint64_t keep = total_b / 10 > ((uint64_t)1 << 30) ? total_b / 10 : (uint64_t)1 << 30;
        bytes = free_b > keep ? free_b - keep : 0;
    }
    bytes -= bytes % CHUNK;
    if (bytes == 0 || bytes > free_b) {
        sg_errf(err,
                "cuda backend: cuda:%d has %zu MiB free of %zu MiB; cannot take %llu MiB "
                "(the region is whole 256 MiB chunks)",
                device, free_b >> 20, total_b >> 20, (unsigned long long)(bytes >> 20));
        goto fail;
    }
    b->capacity = bytes;
    b->chunk_bytes = CHUNK;
    c->nchunks = (uint32_t)(bytes / CHUNK);
    c->chunks = sg_xcalloc(c->nchunks, sizeof *c->chunks);
    for (uint32_t i = 0; i < c->nchunks; i++) {
        if ((r = c->api.cuMemAlloc(&c->chunks[i], CHUNK)) != 0) {
            cu_fail(c, r, "cuMemAlloc", err);
            sg_err_prefix(err, "allocating chunk %u of %u on cuda:%d", i, c->nchunks, device);
            goto fail;
        }
    }
    snprintf(b->name, sizeof b->name, "cuda:%d", device);
    snprintf(b->detail, sizeof b->detail, "%s, %zu MiB free of %zu MiB at start", gpu, free_b >> 20,
             total_b >> 20);
    *out = b;
    return 0;
fail:
    cuda_destroy(b);
    return -1;
}
