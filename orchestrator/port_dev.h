/* port_dev.h — the real device port: a task's validation and profiling jobs on the pool
 * scheduler (pool.h), whose slots may be shared with other tasks.
 *
 * Contract: each request becomes a validate job of the task's iteration (a fork's or the
 * final answer's priority class); a correct candidate's timing is a new profile job,
 * queued by its own priority. The outcome — verdict, timings, and the feedback paragraph
 * for the model (feedback.h) — reaches `done` on the loop thread, never inside submit.
 * end_iteration cancels the iteration's jobs in the pool; their outcomes come back with
 * `cancelled` set, from the loop (deferred), never inside the end_iteration call. The
 * port measures its feedback: how many candidates got a timing, and the latency from
 * submission (the candidate extracted) to its profile result. sg_port_dev_free cancels
 * what is still queued or running without calling back. The pool, templates and strings
 * are borrowed. Racing (prof.race.on): each profile job races against the best speedup the
 * port has timed so far (the baseline's 1 at first) and the task's target_speedup, so a
 * candidate clearly slower than the best, or clearly past the target, stops early. */
#ifndef SG_PORT_DEV_H
#define SG_PORT_DEV_H

#include "common/loop.h"
#include "orchestrator/ports.h"
#include "pool/pool.h"
#include "profiler/feedback.h"
#include "profiler/profiler.h"

typedef struct sg_port_dev_config {
    sg_loop *loop;
    sg_pool *pool;
    int task; /* the task's index in the pool (tasks take turns) */
    const char *task_dir;
    sg_prof_opts prof;
    double target_speedup; /* racing's "clearly past the target" bar; 0: none */
    const sg_feedback_templates *fb;
} sg_port_dev_config;

typedef struct sg_port_dev sg_port_dev;

typedef struct sg_port_dev_stats {
    int feedback;                         /* candidates timed (profile results) */
    double latency_mean_s, latency_p95_s; /* submission -> profile result */
} sg_port_dev_stats;

sg_port_dev *sg_port_dev_new(const sg_port_dev_config *cfg, sg_dev_port *port, sg_err *err);
void sg_port_dev_stats_get(const sg_port_dev *pd, sg_port_dev_stats *s);
void sg_port_dev_free(sg_port_dev *pd);
/* The pool keys a task's iteration as task << 32 | iteration (one key space for the tasks
 * that share it); events a task records name its own iteration: this one. */
int sg_port_dev_iteration_of(uint64_t pool_iteration);
/* A pool event (job_start, job_end, ...) as a task's event: its iteration the task's own. */
void sg_port_dev_event_iteration(json_t *ev);

#endif
