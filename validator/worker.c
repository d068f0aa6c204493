/* The worker process: holds the device context and the compile cache, serves jobs from
 * its socket one at a time, and exits when the socket closes or the context is lost.
 * Limits: no core dumps, an address-space cap, a CPU-time cap over its whole life (the
 * pool replaces it when that runs out), and it dies with its parent. */
#include "validator/internal.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#define WORKER_CPU_SECONDS 3600

typedef struct worker {
    int sock;
    json_int_t id;
    sg_val_dev dev;
    int opened; /* 1: device open, -1: open failed (nodev explains why) */
    int nodev;  /* the failure was "this backend cannot run here" */
    sg_err why;
} worker;

static void limits(const sg_val_pool_opts *o) {
    struct rlimit core = {0, 0};
    setrlimit(RLIMIT_CORE, &core);
    struct rlimit cpu = {WORKER_CPU_SECONDS, WORKER_CPU_SECONDS + 10};
    setrlimit(RLIMIT_CPU, &cpu);
#if defined(__SANITIZE_ADDRESS__)
    /* AddressSanitizer's shadow already maps terabytes: an address-space cap would make
     * every later mapping fail. Sanitizer builds (make test-asan) run without it. */
    int cap_memory = 0;
#else
    int cap_memory = 1;
#endif
    if (o->mem_limit && cap_memory) {
        struct rlimit as = {o->mem_limit, o->mem_limit};
        setrlimit(RLIMIT_AS, &as);
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
}

static void send_phase(void *arg, const char *phase) {
    worker *w = arg;
    json_t *m = json_pack("{s:s, s:I, s:s}", "type", "phase", "id", w->id, "phase", phase);
    sg_val_msg_send(w->sock, m, NULL);
    json_decref(m);
}

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

static int do_validate(worker *w, const json_t *req, json_t **reply) {
    sg_val_result r;
    memset(&r, 0, sizeof r);
    r.first_bad = -1;
    if (w->opened < 0) {
        sg_val_result_set(&r, w->nodev ? SG_VAL_NO_DEVICE : SG_VAL_CRASH, "%s", w->why.msg);
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
    int rc = sg_val_check(&w->dev, &job, &r);
    r.seed = job.seed;
    *reply = sg_val_result_to_json(&r);
    return rc;
}

static void open_device(worker *w, const sg_val_pool_opts *o) {
    if (w->opened) return;
    int rc = sg_val_dev_open(&w->dev, o, &w->why);
    w->opened = rc == 0 ? 1 : -1;
    w->nodev = rc == SG_BE_NODEV;
    w->dev.phase = send_phase;
    w->dev.phase_arg = w;
}

int sg_val_worker_main(int sock, void *arg) {
    const sg_val_pool_opts *o = arg;
    if (sock != 3) {
        dup2(sock, 3);
        close(sock);
    }
    close_range(4, ~0U, 0); /* other workers' sockets must not stay open in this one */
    if (!getenv("SPECGEN_WORKER_STDERR")) { /* compilers chatter on stderr; results carry logs */
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 1);
            dup2(null, 2);
            close(null);
        }
    }
    worker w = {.sock = 3};
    limits(o);
    for (;;) {
        json_t *req = NULL;
        sg_err err;
        if (sg_val_msg_recv(w.sock, -1, &req, &err) != 0) break;
        const char *type = json_string_value(json_object_get(req, "type"));
        w.id = json_integer_value(json_object_get(req, "id"));
        json_t *reply = NULL;
        int rc = 0;
        if (type && !strcmp(type, "ping")) {
            reply = json_object();
        } else if (type && !strcmp(type, "validate")) {
            open_device(&w, o);
            rc = do_validate(&w, req, &reply);
        } else if (type && !strcmp(type, "profile")) { /* profiler/prof_worker.c */
            open_device(&w, o);
            if (w.opened < 0)
                reply = json_pack("{s:s, s:b}", "error", w.why.msg, "nodev", w.nodev);
            else
                rc = sg_prof_worker_job(&w.dev, req, &reply);
        } else {
            reply = json_pack("{s:s}", "error", "unknown job type");
        }
        if (rc == SG_BE_STICKY) json_object_set_new(reply, "exiting", json_true());
        json_object_set_new(reply, "type", json_string("result"));
        json_object_set_new(reply, "id", json_integer(w.id));
        sg_val_msg_send(w.sock, reply, NULL);
        json_decref(reply);
        json_decref(req);
        if (rc == SG_BE_STICKY) return 3; /* the context is gone: let the pool replace us */
    }
    if (w.opened > 0) sg_val_dev_close(&w.dev);
    return 0;
}
