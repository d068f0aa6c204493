/* Backend selection and the self-test shared by all backends. */
#include "kvstore/backend.h"

#include "common/buf.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

int sg_kv_backend_open(const char *spec, uint64_t bytes, sg_kv_backend **out, sg_err *err) {
    if (strcmp(spec, "host") == 0) return sg_kv_backend_host_open(bytes, 0, out, err);
    if (strcmp(spec, "host-staged") == 0) return sg_kv_backend_host_open(bytes, 1, out, err);
    if (strncmp(spec, "cuda:", 5) == 0) {
        char *end;
        long dev = strtol(spec + 5, &end, 10);
        if (spec[5] && !*end && dev >= 0 && dev < 1024)
            return sg_kv_backend_cuda_open((int)dev, bytes, out, err);
    }
    return sg_errf(err, "--backend: '%s' is not host, host-staged or cuda:N (N a GPU index)", spec);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A pattern that depends on the absolute offset, so any misplaced byte shows. */
static void pattern(uint64_t off, uint64_t *dst, size_t words) {
    for (size_t i = 0; i < words; i++) {
        uint64_t x = (off / 8 + i) * 0x9E3779B97F4A7C15ull;
        x ^= x >> 29;
        x *= 0xBF58476D1CE4E5B9ull;
        dst[i] = x ^ (x >> 32);
    }
}

int sg_kv_backend_self_test(sg_kv_backend *b, uint64_t bytes, double *h2d_gbs, double *d2h_gbs,
                            sg_err *err) {
    uint64_t step = b->chunk_bytes < ((uint64_t)64 << 20) ? b->chunk_bytes : (uint64_t)64 << 20;
    bytes -= bytes % 8;
    if (bytes > b->capacity)
        return sg_errf(err, "self-test of %llu bytes does not fit the %llu-byte region",
                       (unsigned long long)bytes, (unsigned long long)b->capacity);
    uint64_t *stage = b->ops->stage_alloc(b, step), *want = sg_xmalloc(step);
    double t_w = 0, t_r = 0;
    int rc = 0;
    for (uint64_t off = 0; off < bytes && rc == 0; off += step) {
        size_t n = bytes - off < step ? bytes - off : step;
        pattern(off, stage, n / 8);
        double t0 = now_s();
        rc = b->ops->write(b, off, stage, n, err);
        t_w += now_s() - t0;
    }
    for (uint64_t off = 0; off < bytes && rc == 0; off += step) {
        size_t n = bytes - off < step ? bytes - off : step;
        memset(stage, 0, n);
        double t0 = now_s();
        rc = b->ops->read(b, off, stage, n, err);
        t_r += now_s() - t0;
        pattern(off, want, n / 8);
        if (rc == 0 && memcmp(stage, want, n) != 0) {
            size_t i = 0;
            while (((char *)stage)[i] == ((char *)want)[i]) i++;
            rc = sg_errf(err, "self-test: byte %llu read back differs from what was written",
                         (unsigned long long)(off + i));
        }
    }
    b->ops->stage_free(b, stage, step);
    free(want);
    if (rc == 0) {
        *h2d_gbs = t_w > 0 ? (double)bytes / t_w / 1e9 : 0;
        *d2h_gbs = t_r > 0 ? (double)bytes / t_r / 1e9 : 0;
    }
    return rc;
}
