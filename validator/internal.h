/* internal.h — pieces shared inside the validator (and by the profiler's job type):
 * random inputs, the compile cache, the checks and the worker entry point. */
#ifndef SG_VAL_INTERNAL_H
#define SG_VAL_INTERNAL_H

#include "validator/backend.h"
#include "validator/validator.h"

#include <jansson.h>

/* Copy src with comments removed (//@ lines kept), backslash-newlines joined, `%:` as `#`. */
void sg_val_strip_comments(const char *src, size_t len, sg_buf *out);

/* ---- seeded random inputs (splitmix64: fast, reproducible from the seed) ---- */
typedef struct sg_val_rng {
    uint64_t s;
} sg_val_rng;
uint64_t sg_val_rng_next(sg_val_rng *r);
void sg_val_fill(sg_val_rng *r, const sg_val_buffer *b, void *dst, size_t count);

/* ---- compile cache: normalized-source hash -> compiled program (LRU) ---- */
typedef struct sg_val_cache sg_val_cache;
sg_val_cache *sg_val_cache_new(const sg_be_ops *ops, sg_be *be, int capacity);
void sg_val_cache_free(sg_val_cache *c);
/* Compile (or find) src with kernels; *hit tells which. The program stays owned by the
 * cache. On failure the compiler's log is in log. */
int sg_val_cache_get(sg_val_cache *c, const char *src, const char *dir, const char *const *kernels,
                     int nk, const char *opts, sg_be_prog **prog, int *hit, char hash[33],
                     sg_buf *log, sg_err *err);

/* ---- the device side of one worker ---- */
typedef struct sg_val_dev {
    const sg_be_ops *ops;
    sg_be *be;
    sg_val_cache *cache;
    sg_val_pool_opts opts;
    sg_val_lang lang;
    char arch[16];
    /* Called between compile and run, so the parent can switch deadlines. */
    void (*phase)(void *arg, const char *phase);
    void *phase_arg;
} sg_val_dev;

/* Open the backend (0, -1, or SG_BE_NODEV with the explanation in err). */
int sg_val_dev_open(sg_val_dev *d, const sg_val_pool_opts *o, sg_err *err);
void sg_val_dev_close(sg_val_dev *d);

/* Run one validation job in this process. Returns 0 with r filled, or SG_BE_STICKY
 * (r filled too) when the device context is lost and the process must exit. */
int sg_val_check(sg_val_dev *d, const sg_val_job *job, sg_val_result *r);

/* A source ready to run: its text, launch plan and compiled program. */
typedef struct sg_val_source {
    const char *where; /* file name for messages */
    char *src;
    sg_val_plan plan;
    sg_be_prog *prog;
} sg_val_source;

/* Reference then candidate at shape s with inputs drawn from seed (run.c). 0: matched;
 * -1: r says what failed; SG_BE_STICKY: the device context is lost. */
int sg_val_check_shape(sg_val_dev *d, const sg_val_task *t, const sg_val_sizes *s, uint64_t seed,
                       const sg_val_source *cand, const sg_val_source *ref, sg_val_result *r);

/* ---- shared with the profiler's job type (profiler/prof_worker.c) ---- */
/* Read, check and compile the job's candidate (the task's baseline when job->candidate is
 * NULL) into cand and the task's reference into ref, as validation does. Returns 0, or
 * -1 / SG_BE_STICKY with r saying why. Release both with sg_val_source_free. */
int sg_val_prepare_job(sg_val_dev *d, const sg_val_task *t, const sg_val_job *job,
                       sg_val_source *cand, sg_val_source *ref, sg_val_result *r);
void sg_val_source_free(sg_val_source *p);
void sg_val_job_from_json(const json_t *req, sg_val_job *job); /* worker.c */
/* The profiler's job, served by the worker (profiler/prof_worker.c). */
int sg_prof_worker_job(sg_val_dev *d, const json_t *req, json_t **reply);
/* Send a request to slot's worker (starting it if needed) and wait for its reply under
 * the pool's deadlines; each "phase" message from the worker restarts the run deadline.
 * Returns 0 with *reply, 1 when the worker was killed or died (r says how), -1 (err). */
int sg_val_pool_call(sg_val_pool *p, int slot, const sg_val_job *job, json_t *req, json_t **reply,
                     sg_val_result *r, sg_err *err);
/* ---- end of the profiler's part ---- */

/* The worker process: serve jobs from sock until it closes. */
int sg_val_worker_main(int sock, void *opts /* const sg_val_pool_opts* */);

/* ---- wire format: 4-byte big-endian length, then a JSON object ---- */
#define SG_VAL_MAX_MSG (64u << 20)
int sg_val_msg_send(int fd, const json_t *msg, sg_err *err);
/* timeout_ms < 0: wait forever. Returns 0, 1 on timeout, -1 on error/EOF (err says). */
int sg_val_msg_recv(int fd, int timeout_ms, json_t **msg, sg_err *err);

/* Results to and from JSON (the worker's reply). */
json_t *sg_val_result_to_json(const sg_val_result *r);
void sg_val_result_from_json(const json_t *j, sg_val_result *r);
void sg_val_result_set(sg_val_result *r, sg_val_verdict v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
