/* The cuda backend: the region is device memory of one GPU, allocated in chunks with
 * the driver API (cuMemAlloc, common/cuda.h), which is loaded with dlopen so that specgen runs, and
 * says plainly that there is no GPU, on machines without an NVIDIA driver. Socket I/O
 * is staged through pinned host buffers (cuMemHostAlloc). Untested on the build
 * machine (it has no GPU): `make gpu-check` (kvstore/gpu-check.sh) exercises it. */
#include "kvstore/backend.h"

#include "common/buf.h"
#include "common/cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK ((uint64_t)256 << 20)

typedef struct cuda_impl {
    const sg_cuda_driver *cu;
    sg_cu_device dev;
    sg_cu_context ctx;
    uint32_t nchunks;
    sg_cu_ptr *chunks; /* 0 while released */
} cuda_impl;

static int cu_fail(cuda_impl *c, sg_cu_result r, const char *what, sg_err *err) {
    const char *s = NULL;
    if (c->cu->errstr) c->cu->errstr(r, &s);
    return sg_errf(err, "cuda backend: %s failed: %s (CUresult %d)", what, s ? s : "unknown error",
                   r);
}

#define CU(c, call, what, err)                                                                     \
    do {                                                                                           \
        sg_cu_result r_ = (call);                                                                  \
        if (r_ != 0) return cu_fail(c, r_, what, err);                                             \
    } while (0)

static int cuda_write(sg_kv_backend *b, uint64_t off, const void *src, size_t n, sg_err *err) {
    cuda_impl *c = b->impl;
    CU(c, c->cu->set_current(c->ctx), "cuCtxSetCurrent", err);
    sg_cu_ptr d = c->chunks[off / b->chunk_bytes] + off % b->chunk_bytes;
    CU(c, c->cu->htod(d, src, n), "cuMemcpyHtoD", err);
    return 0;
}

static int cuda_read(sg_kv_backend *b, uint64_t off, void *dst, size_t n, sg_err *err) {
    cuda_impl *c = b->impl;
    CU(c, c->cu->set_current(c->ctx), "cuCtxSetCurrent", err);
    sg_cu_ptr d = c->chunks[off / b->chunk_bytes] + off % b->chunk_bytes;
    CU(c, c->cu->dtoh(dst, d, n), "cuMemcpyDtoH", err);
    return 0;
}

static int cuda_release(sg_kv_backend *b, uint32_t chunk, sg_err *err) {
    cuda_impl *c = b->impl;
    if (!c->chunks[chunk]) return 0;
    CU(c, c->cu->set_current(c->ctx), "cuCtxSetCurrent", err);
    CU(c, c->cu->free(c->chunks[chunk]), "cuMemFree", err);
    c->chunks[chunk] = 0;
    return 0;
}

static int cuda_acquire(sg_kv_backend *b, uint32_t chunk, sg_err *err) {
    cuda_impl *c = b->impl;
    if (c->chunks[chunk]) return 0;
    CU(c, c->cu->set_current(c->ctx), "cuCtxSetCurrent", err);
    CU(c, c->cu->alloc(&c->chunks[chunk], b->chunk_bytes),
       "cuMemAlloc of a 256 MiB chunk (is another process using the GPU memory?)", err);
    return 0;
}

static void *cuda_stage_alloc(sg_kv_backend *b, size_t n) {
    cuda_impl *c = b->impl;
    void *p = NULL;
    if (c->cu->set_current(c->ctx) != 0 ||
        c->cu->host_alloc(&p, n, SG_CU_MEMHOSTALLOC_PORTABLE) != 0)
        return sg_xmalloc(n); /* pageable memory still works, only slower */
    return p;
}

/* The stage may be pinned or, when pinning failed, malloc'ed: ask the driver which
 * (with the context current: the closing thread may never have used it), and never
 * free() a pinned buffer: without a context it is left to the process's end. */
static void cuda_stage_free(sg_kv_backend *b, void *p, size_t n) {
    cuda_impl *c = b->impl;
    unsigned flags;
    if (c->cu->set_current(c->ctx) != 0) return;
    if (c->cu->host_flags(&flags, p) == 0)
        c->cu->host_free(p);
    else
        free(p);
}

static void cuda_destroy(sg_kv_backend *b) {
    cuda_impl *c = b->impl;
    if (c->ctx) {
        c->cu->set_current(c->ctx);
        for (uint32_t i = 0; i < c->nchunks; i++)
            if (c->chunks[i]) c->cu->free(c->chunks[i]);
        c->cu->primary_release(c->dev);
    }
    free(c->chunks);
    free(c);
    free(b);
}

static const sg_kv_backend_ops cuda_ops = {
    cuda_write,       cuda_read,       cuda_release, cuda_acquire,
    cuda_stage_alloc, cuda_stage_free, cuda_destroy,
};

int sg_kv_backend_cuda_open(int device, uint64_t bytes, sg_kv_backend **out, sg_err *err) {
    cuda_impl *c = sg_xcalloc(1, sizeof *c);
    sg_kv_backend *b = sg_xcalloc(1, sizeof *b);
    b->impl = c;
    b->ops = &cuda_ops;
    if (!(c->cu = sg_cuda_driver_load(err))) {
        sg_err_prefix(err, "cuda backend: no NVIDIA driver on this machine");
        goto fail;
    }
    int n = 0;
    sg_cu_result r = c->cu->init(0);
    if (r != 0) {
        cu_fail(c, r, "cuInit (no usable NVIDIA GPU?)", err);
        goto fail;
    }
    if ((r = c->cu->device_count(&n)) != 0 || device < 0 || device >= n) {
        sg_errf(err, "cuda backend: there is no GPU cuda:%d (this machine has %d)", device, n);
        goto fail;
    }
    char gpu[96] = "";
    size_t free_b = 0, total_b = 0;
    if ((r = c->cu->device_get(&c->dev, device)) != 0 ||
        (r = c->cu->device_name(gpu, sizeof gpu, c->dev)) != 0 ||
        (r = c->cu->primary_retain(&c->ctx, c->dev)) != 0 ||
        (r = c->cu->set_current(c->ctx)) != 0 || (r = c->cu->mem_info(&free_b, &total_b)) != 0) {
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
    b->free_at_start = free_b;
    b->chunk_bytes = CHUNK;
    c->nchunks = (uint32_t)(bytes / CHUNK);
    c->chunks = sg_xcalloc(c->nchunks, sizeof *c->chunks);
    for (uint32_t i = 0; i < c->nchunks; i++) {
        if ((r = c->cu->alloc(&c->chunks[i], CHUNK)) != 0) {
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
