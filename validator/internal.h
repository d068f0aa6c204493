/* internal.h — pieces shared inside the validator (and by the profiler, which may use the
 * validator; never the other way round): random inputs, the checks run inside a worker,
 * and the synchronous pool call the profiler's job goes through. */
#ifndef SG_VAL_INTERNAL_H
#define SG_VAL_INTERNAL_H

#include "device/device.h"
#include "validator/validator.h"

#include <jansson.h>

/* task.json's buffer and scalar objects (task_buffer.c); errors are prefixed by where. */
int sg_val_load_buffer(json_t *o, sg_val_buffer *b, const char *where, sg_err *err);
int sg_val_load_scalar(json_t *o, sg_val_scalar *s, const char *where, sg_err *err);

/* Copy src with comments removed (//@ lines kept), backslash-newlines joined, `%:` as `#`. */
void sg_val_strip_comments(const char *src, size_t len, sg_buf *out);

/* ---- seeded random inputs (splitmix64: fast, reproducible from the seed) ---- */
typedef struct sg_val_rng {
    uint64_t s;
} sg_val_rng;
uint64_t sg_val_rng_next(sg_val_rng *r);
/* Fill count elements of b's type from its input distribution number `dist` (taken
 * modulo the buffer's count of them). */
/* Fill count elements with distribution `dist` of b at shape s (randint's size
 * expressions are evaluated there; the task loader checked that they evaluate). */
void sg_val_fill(sg_val_rng *r, const sg_val_buffer *b, int dist, const sg_val_sizes *s, void *dst,
                 size_t count);
/* d at shape s: randint's size expressions evaluated (lo <= hi); errors name the init. */
int sg_val_dist_at(const sg_val_dist *d, const sg_val_sizes *s, sg_val_dist *out, sg_err *err);

/* ---- the validation job, run inside a worker ---- */
/* Run one validation job in this process. Returns 0 with r filled, or SG_BE_STICKY
 * (r filled too) when the device context is lost and the process must exit. */
int sg_val_check(sg_dev *d, const sg_val_job *job, sg_val_result *r);

/* A source ready to run: its text, launch plan and compiled program. */
typedef struct sg_val_source {
    const char *where; /* file name for messages */
    char *src;
    sg_val_plan plan;
    sg_be_prog *prog;
    int baseline_plan; /* a candidate without //@launch lines: it runs the baseline's plan */
} sg_val_source;

/* Reference then candidate at shape s with inputs drawn from seed and each input
 * buffer's distribution number `dist` (run.c). passed: the last shape that passed before
 * (NULL: none), for the precision-loss hint of a mismatch. 0: matched; -1: r says what
 * failed; SG_BE_STICKY: the device context is lost. */
int sg_val_check_shape(sg_dev *d, const sg_val_task *t, const sg_val_sizes *s, int dist,
                       uint64_t seed, const sg_val_source *cand, const sg_val_source *ref,
                       const sg_val_sizes *passed, sg_val_result *r);

/* A mismatch of output b (n elements of got against ref) that looks like precision loss
 * from accumulating in the task's bf16 / f16 type (precision.c says when): 1 with a
 * sentence in out, else 0 and out empty. n_passed: b's element count at the last shape
 * that passed (-1: none passed yet), shown as passed_shape with its max relative error. */
int sg_val_precision_hint(const sg_val_task *t, const sg_val_buffer *b, const void *got,
                          const void *ref, size_t n, int64_t n_passed, const char *passed_shape,
                          double passed_max_rel, char *out, size_t outn);

/* ---- shared with the profiler's job type (profiler/prof_worker.c) ---- */
/* Read, check and compile the job's candidate (the task's baseline when job->candidate is
 * NULL) into cand and the task's reference into ref, as validation does. Returns 0, or
 * -1 / SG_BE_STICKY with r saying why. Release both with sg_val_source_free. */
int sg_val_prepare_job(sg_dev *d, const sg_val_task *t, const sg_val_job *job, sg_val_source *cand,
                       sg_val_source *ref, sg_val_result *r);
void sg_val_source_free(sg_val_source *p);
void sg_val_job_from_json(const json_t *req, sg_val_job *job); /* kind.c */
/* Send a request to slot's worker (starting it if needed) and wait for its reply under
 * the pool's deadlines; each "phase" message from the worker restarts the run deadline.
 * Returns 0 with *reply, 1 when the worker was killed or died (r says how), -1 (err). */
int sg_val_pool_call(sg_val_pool *p, int slot, const sg_val_job *job, json_t *req, json_t **reply,
                     sg_val_result *r, sg_err *err);
/* ---- end of the profiler's part ---- */

void sg_val_result_set(sg_val_result *r, sg_val_verdict v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
