/* port_dev.h — the real device port: validation and profiling jobs on the validator's
 * sandboxed worker pool, run by one thread per slot so the loop never blocks.
 *
 * Contract: jobs wait in one queue ordered by priority (then submission); each slot's
 * thread takes the next, validates it (validator.h), times a correct one against the
 * baseline in the same worker (profiler.h), writes the feedback paragraph (feedback.h),
 * and hands the outcome to the loop thread (sg_loop_wake), where `done` runs. While jobs
 * are queued or running, the port holds a loop ref so the loop keeps running.
 * sg_port_dev_free waits for running jobs to end and drops queued ones without calling
 * them back. The pool, templates and strings are borrowed. */
#ifndef SG_PORT_DEV_H
#define SG_PORT_DEV_H

#include "common/loop.h"
#include "orchestrator/ports.h"
#include "profiler/feedback.h"
#include "profiler/profiler.h"
#include "validator/validator.h"

typedef struct sg_port_dev_config {
    sg_loop *loop;
    sg_val_pool *pool;
    int slots;
    const char *task_dir;
    sg_prof_opts prof;
    const sg_feedback_templates *fb;
} sg_port_dev_config;

typedef struct sg_port_dev sg_port_dev;

sg_port_dev *sg_port_dev_new(const sg_port_dev_config *cfg, sg_dev_port *port, sg_err *err);
void sg_port_dev_free(sg_port_dev *pd);

#endif
