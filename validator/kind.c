/* The validation job kind: what a worker does with a "validate" request (device.h's job
 * kinds), and the job fields that the profiler's requests share. */
#include "validator/internal.h"

#include <stdlib.h>
#include <string.h>

/* The job fields of a validate or profile request (strings borrowed from req). */
void sg_val_job_from_json(const json_t *req, sg_val_job *job) {
    memset(job, 0, sizeof *job);
    json_t *cand = json_object_get(req, "candidate");
    job->task_dir = json_string_value(json_object_get(req, "task_dir"));
    job->candidate = json_is_string(cand) ? json_string_value(cand) : NULL;
    job->candidate_len = json_is_string(cand) ? json_string_length(cand) : 0;
    job->candidate_name = json_string_value(json_object_get(req, "candidate_name"));
    const char *seed = json_string_value(json_object_get(req, "seed"));
    job->seed = seed ? strtoull(seed, NULL, 10) : 1;
}

static int run_validate(sg_dev *d, const json_t *req, json_t **reply) {
    sg_val_result r;
    memset(&r, 0, sizeof r);
    r.first_bad = -1;
    if (d->open_rc < 0) {
        sg_val_result_set(&r, d->open_rc == SG_BE_NODEV ? SG_VAL_NO_DEVICE : SG_VAL_CRASH, "%s",
                          d->open_err.msg);
        *reply = sg_val_result_to_json(&r);
        return 0;
    }
    sg_val_job job;
    sg_val_job_from_json(req, &job);
    if (!job.task_dir) {
        sg_val_result_set(&r, SG_VAL_REJECTED, "worker: the job has no task_dir");
        *reply = sg_val_result_to_json(&r);
        return 0;
    }
    int rc = sg_val_check(d, &job, &r);
    r.seed = job.seed;
    *reply = sg_val_result_to_json(&r);
    return rc;
}

const sg_dev_kind sg_val_kind = {"validate", run_validate, sg_val_before_sandbox};
const sg_dev_kind *const sg_val_kinds[1] = {&sg_val_kind};
