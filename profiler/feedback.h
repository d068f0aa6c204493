/* feedback.h — what the model is told about each candidate.
 *
 * Contract: pure text formatting from plain facts (no I/O besides loading the template
 * file once). Each function appends one short paragraph to `out`:
 *   - compile errors: the compiler log trimmed to the first errors (with one line of
 *     context each), line numbers mapped back to the candidate's own lines (the harness
 *     may prepend lines), warnings dropped when there are errors;
 *   - a mismatch: which output, which shape, where, how far off, and why when a guard
 *     fired (out-of-bounds write, input modified, NaN);
 *   - timing: candidate vs baseline medians, run count, speedup with its noise band and
 *     verdict, then a short diagnosis instead of a counter dump: memory-, compute- or
 *     latency-bound from a roofline estimate when the task declares bytes and flops,
 *     naming the peak it measured against (the task's tensor-core type on a GPU with a
 *     datasheet entry, else FP32: profiler/peaks.h),
 *     register spills, and the occupancy limiter when the backend reports them.
 * The wording lives in prompts/feedback.json ({placeholders}); sg_feedback_load reads it
 * and a missing or malformed file is an error naming the field. */
#ifndef SG_FEEDBACK_H
#define SG_FEEDBACK_H

#include "common/buf.h"
#include "common/err.h"
#include "profiler/stats.h"

typedef struct sg_feedback_templates {
    char *compile_error, *mismatch, *timing, *diagnosis;
} sg_feedback_templates;

int sg_feedback_load(const char *prompts_dir, sg_feedback_templates *t, sg_err *err);
void sg_feedback_free(sg_feedback_templates *t);

typedef struct sg_fb_compile {
    const char *candidate; /* "candidate 3" */
    const char *log;       /* compiler output as printed */
    int line_offset;       /* lines the harness put before the candidate's first line */
    int max_errors;        /* 0: default 8 */
} sg_fb_compile;

typedef struct sg_fb_mismatch {
    const char *candidate;
    const char *output; /* buffer name */
    const char *shape;  /* "B=3 N=1001" */
    long long index;
    const char *got, *expected; /* the values at index, as the validator wrote them */
    double max_abs, max_rel;
    const char *reason; /* NULL, or "wrote outside its buffer", "changed input x", ... */
} sg_fb_mismatch;

typedef struct sg_fb_static {
    int have;
    int registers, shared_bytes, local_bytes; /* local_bytes > 0: spills */
    double occupancy;                         /* 0..1 theoretical */
    const char *occupancy_limiter;            /* "registers", "shared memory", "block size" */
} sg_fb_static;

typedef struct sg_fb_roofline {
    int have;
    double bytes, flops;          /* per run, declared by the task */
    double peak_gbs, peak_gflops; /* of the device, for the task's arithmetic (peaks.h) */
    char peak[384];               /* which arithmetic peak, from where ("" when unknown) */
    char bw_source[96];           /* where the bandwidth figure comes from */
} sg_fb_roofline;

typedef struct sg_fb_timing {
    const char *candidate;
    sg_timing baseline, cand;
    sg_fb_static facts;
    sg_fb_roofline roof;
} sg_fb_timing;

void sg_feedback_compile(const sg_feedback_templates *t, const sg_fb_compile *c, sg_buf *out);
void sg_feedback_mismatch(const sg_feedback_templates *t, const sg_fb_mismatch *m, sg_buf *out);
void sg_feedback_timing(const sg_feedback_templates *t, const sg_fb_timing *tm, sg_buf *out);
/* The diagnosis sentence alone (also used by `specgen profile`). */
void sg_feedback_diagnose(const sg_fb_timing *tm, sg_buf *out);

#endif
