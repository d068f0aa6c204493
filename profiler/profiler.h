/* profiler.h — trustworthy timing of a candidate against the baseline, in the same
 * sandboxed worker that validated it.
 *
 * Contract
 * - sg_prof_time runs inside the validator's worker for `slot` (validator.h's pool): it
 *   compiles (the compile cache makes this free after validation) the task's baseline and
 *   the job's candidate (job->candidate NULL: the baseline alone), then times them
 *   interleaved — warm-up runs, then runs rotating over `input_sets` freshly generated
 *   input sets, the last-level cache flushed before every run (a write over a buffer
 *   twice its size), until the median is stable (stats.h's rule) or max_runs.
 * - One run's time is device time: OpenCL event timestamps, from the first kernel's
 *   start to the last kernel's end; on CUDA, CUPTI activity records of every kernel on any
 *   stream in the timed region (so work hidden on another stream is counted).
 * - The result: both timings, the speedup with its noise band and verdict, static facts
 *   of the candidate's kernels when the backend reports them (registers, local memory /
 *   spills, occupancy; work-group limits on OpenCL), and a line about hardware metrics
 *   ("metrics unavailable: ..." where they are). Deadlines are the pool's run timeout
 *   per timing batch; a candidate that hangs is killed like in validation.
 * - After timing, the candidate's outputs for every input set (its buffers as the timing
 *   left them) are compared with the reference: a mismatch sets r->verdict.
 * - Returns 0 with r filled, -1 with err when the job could not run (err says why). */
#ifndef SG_PROFILER_H
#define SG_PROFILER_H

#include "common/err.h"
#include "profiler/feedback.h"
#include "profiler/stats.h"
#include "validator/validator.h"

/* The profiling job kind ("profile"), and the table a pool that validates and profiles
 * is started with: sg_dev_opts.kinds = sg_prof_kinds, nkinds = 2. */
extern const sg_dev_kind sg_prof_kind;
extern const sg_dev_kind *const sg_prof_kinds[2];

typedef struct sg_prof_opts {
    int warmup;        /* untimed runs of each kernel first (default 2) */
    int input_sets;    /* fresh input sets rotated over (default 3) */
    int flush_cache;   /* flush the last-level cache before each run (default 1) */
    sg_stability stab; /* min/max runs, window, tolerance (stats.h defaults) */
    /* Racing (stats.h sg_race_check; default on, min_runs 3, tie_min_runs -1: the
     * stability rule's min_runs, resolved when the request is made): the caller sets best
     * (the best speedup so far) and target (the task's target speedup) for each candidate;
     * with neither set, racing never stops a run. on = 0 turns it off; tie_min_runs = 0
     * only its "not_better" stop. */
    sg_race race;
} sg_prof_opts;

void sg_prof_opts_default(sg_prof_opts *o);

typedef struct sg_prof_result {
    sg_timing baseline, candidate; /* candidate.runs == 0 when only the baseline ran */
    sg_speedup speedup;
    /* The speedup's paired 99% interval over all the runs (sg_race_check's; 0 and 0 below
     * 2 runs). A caller racing later candidates should race them against the best's
     * speedup_lo, not its point figure: the best of several noisy figures is biased up (the
     * winner's curse), and "clearly slower than the best" must mean slower than what the
     * best surely reaches (docs/profiler.md "Racing"). */
    double speedup_lo, speedup_hi;
    sg_fb_static facts;    /* the worst over the candidate's kernels */
    sg_fb_roofline roof;   /* when the task declares "bytes" and "flops" per run */
    char facts_text[1024]; /* every kernel's facts, one clause each */
    char metrics[512];
    double wall_ms;   /* the profiler's own wall time for this job */
    double device_ms; /* the sum of all timed runs (wall_ms - device_ms: overhead) */
    /* SG_VAL_MISMATCH when the candidate's outputs after timing were wrong for some input
     * set (it depends on earlier launches, e.g. remembers results): message says how, and
     * the timings must not be believed. SG_VAL_PASS otherwise. */
    sg_val_verdict verdict;
    char message[1024];
    int input_sets;
    double flush_bytes; /* the buffer written before each run; 0: no flush */
    /* Racing: why it stopped the timing ("" when it did not: stable or max_runs), the
     * speedup's 99% interval then, and what it saved at least: the runs per side that the
     * stability rule's min_runs would still have asked for, and their device time (both
     * sides, at the mean run time measured). The stability rule might have asked for more:
     * these are lower bounds (make bench-racing measures the real saving). */
    char race_stop[16];
    double race_lo, race_hi;
    double race_bar; /* the best so far ("slower", "not_better") or the target ("past_target") */
    int race_saved_runs;
    double race_saved_ms;
} sg_prof_result;

int sg_prof_time(sg_val_pool *pool, int slot, const sg_val_job *job, const sg_prof_opts *o,
                 sg_prof_result *r, sg_err *err);

/* sg_prof_time's two halves, for callers that wait on a loop (pool/slot_local.c): the job
 * as a worker request (NULL with err when the candidate cannot be sent; the caller
 * json_decrefs it), and the worker's reply as a result (-1 with err when the worker said
 * the job could not run). wall_ms is left to the caller. */
json_t *sg_prof_request(const sg_val_job *job, const sg_prof_opts *o, sg_err *err);
int sg_prof_from_reply(const json_t *reply, sg_prof_result *r, sg_err *err);

/* Validate job, then, when it passed, time it (sg_prof_time). A candidate found wrong
 * while timing (input rotation caught remembered results) gets that verdict and message
 * in vr. Returns 0 (vr filled; *timed says whether pr holds a timing), 1 when it passed
 * validation but could not be timed (err says why), -1 when validation could not run. */
int sg_prof_check(sg_val_pool *pool, int slot, const sg_val_job *job, const sg_prof_opts *o,
                  sg_val_result *vr, sg_prof_result *pr, int *timed, sg_err *err);

/* The feedback paragraph for the model about one checked candidate (pr NULL: not timed):
 * compile errors through sg_feedback_compile, wrong results with the validator's message,
 * timings with sg_feedback_timing. Appends to out. */
void sg_prof_feedback(const sg_feedback_templates *fb, const char *name, const sg_val_result *vr,
                      const sg_prof_result *pr, sg_buf *out);

/* `specgen profile` (cmd_profile.c). */
int sg_cmd_profile(int argc, char **argv);

#endif
