/* CUPTI activity collection (see cupti.h). The record layouts come from the toolkit's
 * headers; every CUpti_ActivityKernel version keeps start and end at the same offsets. */
#include "device/cupti.h"

#include "common/buf.h"
#include "common/cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(SG_HAVE_CUDA_H)
#include <cupti_activity.h>

#define RECORD_BUFFER (4u << 20)

struct sg_cupti {
    const sg_cuda_cupti *a;
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

static void CUPTIAPI buf_complete(sg_cu_context ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                  size_t valid) {
    sg_cupti *c = active;
    sg_cupti_activity *next = NULL;
    while (c && c->a->next_record(buffer, valid, &next) == CUPTI_SUCCESS) {
        const CUpti_Activity *rec = (const CUpti_Activity *)next;
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
    if (c->a->errstr) c->a->errstr(r, &s);
    return sg_errf(err, "CUPTI %s failed: %s (error %d)", what, s ? s : "unknown", (int)r);
}

int sg_cupti_open(sg_cupti **out, sg_err *err) {
    if (active) return sg_errf(err, "CUPTI: one collector per process, and one is open");
    const sg_cuda_cupti *a = sg_cuda_cupti_load(err);
    if (!a)
        return sg_err_prefix(err, "CUDA timing needs CUPTI (libcupti, part of the CUDA toolkit)");
    sg_cupti *c = sg_xcalloc(1, sizeof *c);
    c->a = a;
    active = c;
    CUptiResult r = a->register_callbacks(buf_request, buf_complete);
    if (r == CUPTI_SUCCESS) r = a->enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
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
    c->a->disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    c->a->flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (active == c) active = NULL;
    /* libcupti itself stays loaded: common/cuda.c never unloads it (it hooks the driver). */
    free(c);
}

int sg_cupti_begin(sg_cupti *c, sg_err *err) {
    CUptiResult r = c->a->flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); /* drop earlier records */
    c->n = 0;
    c->dropped = 0;
    c->collecting = 1;
    return r == CUPTI_SUCCESS ? 0 : cuptifail(c, err, "cuptiActivityFlushAll", r);
}

int sg_cupti_end(sg_cupti *c, double *ns, int *nkernels, sg_err *err) {
    CUptiResult r = c->a->flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
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
