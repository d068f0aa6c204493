/* The host backend: one anonymous mmap region, explicit huge pages when a pool is reserved. */
#include "kvstore/backend.h"
#include "kvstore/slab.h"

#include "common/buf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_2M ((uint64_t)2 << 20)

static int host_write(sg_kv_backend *b, uint64_t off, const void *src, size_t n, sg_err *err) {
    memcpy((char *)b->impl + off, src, n);
    return 0;
}

static int host_read(sg_kv_backend *b, uint64_t off, void *dst, size_t n, sg_err *err) {
    memcpy(dst, (char *)b->impl + off, n);
    return 0;
}

/* Giving a chunk back: the pages return to the kernel; touching them again later
 * faults in fresh zero pages, so acquire has nothing to do. */
static int host_release(sg_kv_backend *b, uint32_t chunk, sg_err *err) {
    uint64_t off = (uint64_t)chunk * b->chunk_bytes;
    if (madvise((char *)b->impl + off, b->chunk_bytes, MADV_DONTNEED) != 0)
        return sg_errf(err, "madvise(DONTNEED) of chunk %u: %s", chunk, strerror(errno));
    return 0;
}

static int host_acquire(sg_kv_backend *b, uint32_t chunk, sg_err *err) { return 0; }

static void *host_stage_alloc(sg_kv_backend *b, size_t n) { return sg_xmalloc(n); }
static void host_stage_free(sg_kv_backend *b, void *p, size_t n) { free(p); }

static void host_destroy(sg_kv_backend *b) {
    munmap(b->impl, b->capacity);
    free(b);
}

static const sg_kv_backend_ops host_ops = {
    host_write,       host_read,       host_release, host_acquire,
    host_stage_alloc, host_stage_free, host_destroy,
};

static uint64_t mem_available(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
    if (f) fclose(f);
    return (uint64_t)kb * 1024;
}

int sg_kv_backend_host_open(uint64_t bytes, int staged, sg_kv_backend **out, sg_err *err) {
    uint64_t avail = mem_available();
    if (bytes == 0) bytes = avail / 2;
    uint64_t asked = bytes; /* the message names it, not the rounded-down 0 */
    bytes &= ~(HUGE_2M - 1);
    if (bytes < HUGE_2M)
        return sg_errf(err, "--memory: the host region needs at least 2 MiB (got %llu bytes)",
                       (unsigned long long)asked);
    /* Explicit huge pages need a reserved pool (vm.nr_hugepages; no MAP_NORESERVE, or an
     * empty pool would turn into SIGBUS on first touch); without one mmap fails and the
     * region has 4 KiB pages, faulted in as values arrive. Transparent huge pages are
     * not asked for: with the usual defrag=madvise a first touch may compact memory
     * synchronously, which tripled kvstore's CPU per 4 MiB SET on a fresh region in
     * bench-kv, while warm copies ran no faster with them. */
    int hugetlb = 1;
    void *p =
        mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
    if (p == MAP_FAILED) {
        hugetlb = 0;
        p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
    }
    if (p == MAP_FAILED)
        return sg_errf(err, "cannot map a host region of %llu bytes: %s", (unsigned long long)bytes,
                       strerror(errno));
    sg_kv_backend *b = sg_xcalloc(1, sizeof *b);
    snprintf(b->name, sizeof b->name, "%s", staged ? "host-staged" : "host");
    snprintf(b->detail, sizeof b->detail, "host memory, %s",
             hugetlb ? "explicit 2 MiB huge pages" : "4 KiB pages");
    b->ops = &host_ops;
    b->capacity = bytes;
    b->free_at_start = avail;
    b->chunk_bytes = HUGE_2M;
    b->host_base = staged ? NULL : p;
    b->impl = p;
    *out = b;
    return 0;
}
