/* backend.h — where kvstore's value bytes live (internal to kvstore/).
 *
 * Contract: a backend owns one region of `capacity` bytes addressed by offset, cut into
 * chunks of chunk_bytes (a multiple of the slab page) that it can give back and take
 * again (the elastic budget). When host_base is not NULL the region is ordinary host
 * memory and the server reads and writes sockets straight into it (zero copy);
 * otherwise every byte goes through write/read, which copy from/to host memory
 * (stage_alloc gives buffers the backend copies from fastest, e.g. pinned memory).
 * write/read never cross a chunk and may be called from any thread at once.
 * Functions return 0 or -1 with a message in err. */
#ifndef SG_KV_BACKEND_H
#define SG_KV_BACKEND_H

#include "common/err.h"

#include <stddef.h>
#include <stdint.h>

typedef struct sg_kv_backend sg_kv_backend;

typedef struct sg_kv_backend_ops {
    int (*write)(sg_kv_backend *b, uint64_t off, const void *src, size_t n, sg_err *err);
    int (*read)(sg_kv_backend *b, uint64_t off, void *dst, size_t n, sg_err *err);
    int (*release)(sg_kv_backend *b, uint32_t chunk, sg_err *err);
    int (*acquire)(sg_kv_backend *b, uint32_t chunk, sg_err *err);
    void *(*stage_alloc)(sg_kv_backend *b, size_t n);
    void (*stage_free)(sg_kv_backend *b, void *p, size_t n);
    void (*destroy)(sg_kv_backend *b);
} sg_kv_backend_ops;

struct sg_kv_backend {
    char name[64];          /* "host", "host-staged", "cuda:0 (NVIDIA H100 ...)" */
    char detail[160];       /* one line for logs and INFO: huge pages, device memory, ... */
    uint64_t capacity;      /* bytes */
    uint64_t free_at_start; /* memory free before the region was taken: the GPU's free
                               memory (cuda), MemAvailable (host) */
    uint64_t chunk_bytes;
    char *host_base; /* NULL unless the region is host-addressable */
    const sg_kv_backend_ops *ops;
    void *impl;
};

/* spec: "host", "host-staged" (host memory used through write/read only: the code path
 * of device backends, testable without a GPU) or "cuda:N". bytes == 0 means auto:
 * host: half of MemAvailable; cuda: the device's free memory less 10% (at least 1 GiB
 * kept free). The capacity is rounded down to whole chunks. */
int sg_kv_backend_open(const char *spec, uint64_t bytes, sg_kv_backend **out, sg_err *err);

int sg_kv_backend_host_open(uint64_t bytes, int staged, sg_kv_backend **out, sg_err *err);
int sg_kv_backend_cuda_open(int device, uint64_t bytes, sg_kv_backend **out, sg_err *err);

/* Store `bytes` of a pseudo-random pattern through write, read it back through read,
 * compare bit for bit and measure both directions (GB/s, 1e9 bytes per second).
 * Used by `specgen kvstore --self-test` and the gpu-check. */
int sg_kv_backend_self_test(sg_kv_backend *b, uint64_t bytes, double *h2d_gbs, double *d2h_gbs,
                            sg_err *err);

#endif
