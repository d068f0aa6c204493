/* CUPTI activity collection (see cupti.h). The record layouts come from the toolkit's
 * headers; every CUpti_ActivityKernel version keeps start and end at the same offsets. */
#include "device/cupti.h"

#include "common/buf.h"
#include "common/dl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sg_cupti_dlopen(const sg_dl_sym *syms, void **handle, sg_err *err) {
    const char *home = getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "/usr/local/cuda";
    char p[3][600];
    snprintf(p[0], sizeof p[0], "%s/lib64/libcupti.so", home);
    snprintf(p[1], sizeof p[1], "%s/extras/CUPTI/lib64/libcupti.so", home);
    snprintf(p[2], sizeof p[2], "%s/targets/x86_64-linux/lib/libcupti.so", home);
    const char *const names[] = {
        "libcupti.so", "libcupti.so.13", "libcupti.so.12", p[0], p[1], p[2], NULL};
    return sg_dl_load(names, syms, handle, err);
}

#if defined(SG_HAVE_CUDA_H)
#include <cupti_activity.h>

#define RECORD_BUFFER (4u << 20)

struct sg_cupti {
    void *h;
    CUptiResult (*enable)(CUpti_ActivityKind);
    CUptiResult (*disable)(CUpti_ActivityKind);
    CUptiResult (*reg)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*flush)(uint32_t);
    CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*errstr)(CUptiResult, const char **);
    uint64_t first, last;
    int n, collecting;
    unsigned dropped;
};

/* The active collector: CUPTI's callbacks take no user pointer (see cupti.h). */
static sg_cupti *active;

static void CUPTIAPI buf_request(uint8_t **buffer, size_t *size, size_t *max_records) {
    *buffer = aligned_alloc(8, RECORD_BUFFER);
    *size = *buffer ? RECORD_BUFFER : 0;
    *max_records = 0;
}

static void CUPTIAPI buf_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                  size_t valid) {
    sg_cupti *c = active;
    CUpti_Activity *rec = NULL;
    while (c && c->next(buffer, valid, &rec) == CUPTI_SUCCESS) {
        if (!c->collecting) continue; /* launches before the region (warm-up, checks) */
        if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
            rec->kind != CUPTI_ACTIVITY_KIND_KERNEL)
            continue;
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
        /* A forced flush also hands over records whose timestamps are not written yet
         * (cupti_activity.h); one of those would make the span absurd, so count it apart. */
        if (!k->start || k->end < k->start) {
            c->dropped++;
            continue;
        }
        if (!c->n || k->start < c->first) c->first = k->start;
        if (!c->n || k->end > c->last) c->last = k->end;
        c->n++;
    }
    free(buffer);
}

static int cuptifail(sg_cupti *c, sg_err *err, const char *what, CUptiResult r) {
    const char *s = NULL;
    if (c->errstr) c->errstr(r, &s);
    return sg_errf(err, "CUPTI %s failed: %s (error %d)", what, s ? s : "unknown", (int)r);
}

int sg_cupti_open(sg_cupti **out, sg_err *err) {
    if (active) return sg_errf(err, "CUPTI: one collector per process, and one is open");
    sg_cupti *c = sg_xcalloc(1, sizeof *c);
    const sg_dl_sym syms[] = {{"cuptiActivityEnable", (void **)&c->enable, 0},
                              {"cuptiActivityDisable", (void **)&c->disable, 0},
                              {"cuptiActivityRegisterCallbacks", (void **)&c->reg, 0},
                              {"cuptiActivityFlushAll", (void **)&c->flush, 0},
                              {"cuptiActivityGetNextRecord", (void **)&c->next, 0},
                              {"cuptiGetResultString", (void **)&c->errstr, 1},
                              {NULL, NULL, 0}};
    if (sg_cupti_dlopen(syms, &c->h, err) < 0) {
        free(c);
        return sg_err_prefix(err, "CUDA timing needs CUPTI (libcupti, part of the CUDA toolkit)");
    }
    active = c;
    CUptiResult r = c->reg(buf_request, buf_complete);
    if (r == CUPTI_SUCCESS) r = c->enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (r != CUPTI_SUCCESS) {
        cuptifail(c, err, "activity setup", r);
        sg_cupti_close(c);
        return -1;
    }
    *out = c;
    return 0;
}

void sg_cupti_close(sg_cupti *c) {
    if (!c) return;
    if (c->disable) c->disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (c->flush) c->flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (active == c) active = NULL;
    /* libcupti stays loaded (no dlclose): once attached it has hooked the driver's
     * callbacks and may run its own threads, and it has no NODELETE flag, so unloading it
     * mid-process (the metrics reopen it, the next timed region again) is undefined; CUPTI
     * only supports detaching through cuptiFinalize. The handle's reference just leaks. */
    free(c);
}

int sg_cupti_begin(sg_cupti *c, sg_err *err) {
    CUptiResult r = c->flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); /* drop earlier records */
    c->n = 0;
    c->dropped = 0;
    c->collecting = 1;
    return r == CUPTI_SUCCESS ? 0 : cuptifail(c, err, "cuptiActivityFlushAll", r);
}

int sg_cupti_end(sg_cupti *c, double *ns, int *nkernels, sg_err *err) {
    CUptiResult r = c->flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    c->collecting = 0;
    *ns = c->n && c->last > c->first ? (double)(c->last - c->first) : 0;
    if (nkernels) *nkernels = c->n;
    if (r != CUPTI_SUCCESS) return cuptifail(c, err, "cuptiActivityFlushAll", r);
    if (!c->n)
        return sg_errf(err, "CUPTI recorded no kernel in the timed region%s",
                       c->dropped ? " (only records without timestamps)" : "");
    return 0;
}

#else /* no CUDA headers at build time */

int sg_cupti_open(sg_cupti **c, sg_err *err) {
    return sg_errf(err, "CUDA timing was not built: the CUDA headers (cupti_activity.h) were "
                        "missing at build time (set CUDA_HOME and rebuild)");
}
void sg_cupti_close(sg_cupti *c) {}
int sg_cupti_begin(sg_cupti *c, sg_err *err) { return sg_errf(err, "CUPTI not built"); }
int sg_cupti_end(sg_cupti *c, double *ns, int *n, sg_err *err) {
    return sg_errf(err, "CUPTI not built");
}
#endif
