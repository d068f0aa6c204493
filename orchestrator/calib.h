/* calib.h — calibration runs on the ports: what `specgen calibrate` (a real endpoint and
 * pool) and `specgen sim --calibration-run` (the models) both measure, with the same code.
 *
 * Contract
 *  - sg_calib_task runs one task on the loop through the two ports: the baseline is
 *    validated and timed; one reasoning stream runs to its end (nothing stops it early);
 *    every trigger point the trigger rules see in it (code_block, transition: no spacing,
 *    no cap) forks a kernel at that point, and so does every interval_tokens of reasoning
 *    (interval: the control, at the first chunk past each multiple); every fork's kernel
 *    and the final answer's are validated and, when correct, timed. When all of it is
 *    over, done() gets the rows (JSON objects whose keys are the columns of calib_trace,
 *    calib_point and calib_fork, without the task) and the trace as replay JSONL
 *    (docs/replay-trace.md). Positions are reasoning tokens (the server's count, or its
 *    estimate) and the fraction of the reasoning's final length.
 *  - sg_calib_ramp measures the decode rate against concurrency: n = 1, 2, 4, ... streams
 *    of the given prompt at once, each measured over `tokens` tokens (from its first token
 *    event to its last one in the window where all run), then aborted; it stops after
 *    max_streams, or when the total rate grew by less than 10% over the previous step.
 *    Then prefill probes: forks whose reasoning is `probe_tokens` filler words (each size
 *    twice: the second may find the first in the server's prefix cache). Rows: calib_rate.
 *  - Policy-free of clocks: times are the loop's (virtual in the simulation). */
#ifndef SG_CALIB_H
#define SG_CALIB_H

#include "common/loop.h"
#include "orchestrator/ports.h"
#include "orchestrator/task.h"
#include "results/results.h"

#include <jansson.h>

typedef struct sg_calib_out {
    json_t *trace;  /* calib_trace's row */
    json_t *points; /* calib_point rows */
    json_t *forks;  /* calib_fork rows */
    char *replay;   /* the trace as replay JSONL (owned by the callee until done returns) */
    char error[512];
} sg_calib_out;

typedef struct sg_calib_task_config {
    sg_loop *loop;
    const sg_llm_port *llm;
    const sg_dev_port *dev;
    const sg_task_config *tc; /* prompts, template, trigger rules (their cues) */
    const sg_task_spec *spec;
    uint64_t interval_tokens; /* the control's spacing; 0: no interval forks */
    int max_forks;            /* at most this many forks (0: no cap) */
    void (*done)(void *arg, const sg_calib_out *out);
    void *arg;
} sg_calib_task_config;

typedef struct sg_calib_task sg_calib_task;
sg_calib_task *sg_calib_task_start(const sg_calib_task_config *c, sg_err *err);
/* Stop it (Ctrl-C, a budget): aborts its generations; done is not called. Jobs already
 * submitted still report to it: free it only once the loop has no more of its jobs (the
 * device port cannot cancel them), or after the pool is gone. */
void sg_calib_task_cancel(sg_calib_task *t);
/* Tokens it generated so far (reasoning, forks). */
uint64_t sg_calib_task_tokens(const sg_calib_task *t);
void sg_calib_task_free(sg_calib_task *t);

/* A trace's replay JSONL into DIR/NAME.jsonl (the folder is made; an existing file replaced;
 * a path that is no regular file refused, common/wfile.h). */
int sg_calib_write_trace(const char *dir, const char *name, const char *jsonl, sg_err *err);

/* The rows of a JSON array into a calibration table, each with key = id added. */
int sg_calib_write_rows(sg_results *db, const char *table, json_t *rows, const char *key,
                        int64_t id, sg_err *err);
/* A pool event: a job_end of a finished job becomes a calib_service row of the campaign;
 * 0 when written or not such an event, -1 (err) when the write failed. */
int sg_calib_service_event(sg_results *db, int64_t campaign, const json_t *ev, sg_err *err);

typedef struct sg_calib_ramp_config {
    sg_loop *loop;
    const sg_llm_port *llm;
    const char *system, *user;    /* the streams' prompt */
    const sg_fork_request *fork;  /* the probes' template (its reasoning is replaced) */
    int max_streams;              /* 64 */
    uint64_t tokens;              /* per stream: 256 */
    const uint64_t *probe_tokens; /* prefill probes' sizes (nprobe of them) */
    int nprobe;
    void (*done)(void *arg, json_t *rows, const char *error); /* rows: calib_rate rows */
    void *arg;
} sg_calib_ramp_config;

/* A probe's reasoning starts with this (the simulated port serves it as a prefix it has
 * never seen: its tokens are its words). */
#define SG_CALIB_PROBE_MARK "[specgen prefill probe]"

typedef struct sg_calib_ramp sg_calib_ramp;
sg_calib_ramp *sg_calib_ramp_start(const sg_calib_ramp_config *c, sg_err *err);
void sg_calib_ramp_free(sg_calib_ramp *r);

#endif
