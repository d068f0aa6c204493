/* cupti.h — device time of every kernel in a region, from CUPTI activity records.
 *
 * Contract: sg_cupti_open dlopens libcupti and enables activity records of kind
 * CONCURRENT_KERNEL (every kernel on every stream, without serializing them). Between
 * sg_cupti_begin and sg_cupti_end (called after the context was synchronized) the span
 * from the earliest kernel start to the latest kernel end is collected, so work a
 * candidate hides on another stream is counted. CUPTI's buffer callbacks carry no user
 * pointer, so one collector per process is active at a time (the worker's). Without a
 * GPU nothing here can run; without the CUDA headers at build time open() says so.
 * sg_cupti_metrics_check says whether hardware metrics (Range Profiler) can be collected. */
#ifndef SG_CUPTI_H
#define SG_CUPTI_H

#include "common/err.h"

typedef struct sg_cupti sg_cupti;

int sg_cupti_open(sg_cupti **c, sg_err *err);
void sg_cupti_close(sg_cupti *c);
int sg_cupti_begin(sg_cupti *c, sg_err *err);
/* ns: last end - first start; nkernels: records seen. -1 when no kernel ran. */
int sg_cupti_end(sg_cupti *c, double *ns, int *nkernels, sg_err *err);
/* -1 with "metrics unavailable: why" in err. */
int sg_cupti_metrics_check(sg_cupti *c, sg_err *err);

#endif
