/* cupti.h — device time of every kernel in a region, from CUPTI activity records.
 *
 * Contract: sg_cupti_open loads libcupti (common/cuda.h) and enables activity records of kind
 * CONCURRENT_KERNEL (every kernel on every stream, without serializing them). Between
 * sg_cupti_begin and sg_cupti_end (called after the context was synchronized) the span
 * from the earliest kernel start to the latest kernel end is collected, so work a
 * candidate hides on another stream is counted. CUPTI's buffer callbacks carry no user
 * pointer, so one collector per process is active at a time (the worker's). Without a
 * GPU nothing here can run; without the CUDA headers at build time open() says so.
 *
 * sg_cupti_metrics_begin / _end (cupti_range.c): hardware metrics (names as in Nsight
 * Compute: dram and SM throughput as % of peak, achieved occupancy, L2 hit rate) of the
 * kernels launched in between, through the CUPTI Range Profiler and Profiler Host API
 * (CUDA 12.6+), one auto range per launch with kernel replay. Errors start with "metrics
 * unavailable:". Do not keep an activity collector open meanwhile. */
#ifndef SG_CUPTI_H
#define SG_CUPTI_H

#include "common/err.h"

typedef struct sg_cupti sg_cupti;

int sg_cupti_open(sg_cupti **c, sg_err *err);
void sg_cupti_close(sg_cupti *c);
int sg_cupti_begin(sg_cupti *c, sg_err *err);
/* ns: last end - first start; nkernels: records seen. -1 when no kernel ran. */
int sg_cupti_end(sg_cupti *c, double *ns, int *nkernels, sg_err *err);
typedef struct sg_cupti_metrics sg_cupti_metrics;
/* ctx: the CUcontext; device: its ordinal. */
int sg_cupti_metrics_begin(sg_cupti_metrics **m, void *ctx, int device, sg_err *err);
/* Call after the context was synchronized; always releases m. One line into out. */
int sg_cupti_metrics_end(sg_cupti_metrics *m, char *out, size_t n, sg_err *err);

#endif
