/* The pool: one worker process per device slot, started on first use, reused across
 * jobs, killed at the compile or run deadline, and started again on the next job after
 * it died. Deadlines here are mechanism (poll timeouts), not policy. */
#include "validator/internal.h"

#include "common/proc.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

typedef struct slot {
    sg_proc proc;
    int alive, spawns;
} slot;

struct sg_val_pool {
    sg_val_pool_opts o;
    char arch[16];
    int n;
    slot *s;
    uint64_t jobs, seed_base;
};

void sg_val_pool_opts_default(sg_val_pool_opts *o) {
    memset(o, 0, sizeof *o);
    o->device = SG_VAL_OPENCL;
    o->slots = 1;
    o->compile_timeout_ms = 30000;
    o->run_timeout_ms = 20000;
}

int sg_val_pool_new(const sg_val_pool_opts *o, sg_val_pool **out, sg_err *err) {
    if (o->slots < 1 || o->slots > 256) return sg_errf(err, "pool: %d slots (1..256)", o->slots);
    sg_val_pool *p = sg_xcalloc(1, sizeof *p);
    p->o = *o;
    if (o->arch) {
        snprintf(p->arch, sizeof p->arch, "%s", o->arch);
        p->o.arch = p->arch;
    }
    if (!p->o.mem_limit && o->device == SG_VAL_OPENCL) p->o.mem_limit = 8ULL << 30;
    p->n = o->slots;
    p->s = sg_xcalloc((size_t)p->n, sizeof *p->s);
    if (getrandom(&p->seed_base, sizeof p->seed_base, 0) != sizeof p->seed_base)
        p->seed_base = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    *out = p;
    return 0;
}

static void kill_slot(slot *s) {
    if (!s->alive) return;
    sg_proc_kill(&s->proc, SIGKILL);
    sg_proc_wait(&s->proc, -1, NULL);
    sg_proc_close_fds(&s->proc);
    s->alive = 0;
}

void sg_val_pool_free(sg_val_pool *p) {
    if (!p) return;
    for (int i = 0; i < p->n; i++) {
        slot *s = &p->s[i];
        if (!s->alive) continue;
        close(s->proc.sock_fd); /* the worker exits on EOF */
        s->proc.sock_fd = -1;
        if (sg_proc_wait(&s->proc, 2000, NULL) != 0) kill_slot(s);
        sg_proc_close_fds(&s->proc);
        s->alive = 0;
    }
    free(p->s);
    free(p);
}

int sg_val_pool_spawns(const sg_val_pool *p, int slot) { return p->s[slot].spawns; }

static int ensure(sg_val_pool *p, slot *s, sg_err *err) {
    if (s->alive) return 0;
    fflush(NULL); /* the child must not flush our buffered output again */
    if (sg_proc_fork(&s->proc, sg_val_worker_main, &p->o, SG_PROC_SOCKET | SG_PROC_NEW_PGRP, err) <
        0)
        return sg_err_prefix(err, "cannot start a validation worker");
    s->alive = 1;
    s->spawns++;
    return 0;
}

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The worker died: reap it and describe how. */
static void died(slot *s, const char *phase, sg_val_result *r) {
    int st = 0;
    sg_proc_wait(&s->proc, 2000, &st);
    if (s->proc.pid > 0) kill_slot(s);
    sg_proc_close_fds(&s->proc);
    s->alive = 0;
    char how[128];
    sg_proc_describe_status(st, how, sizeof how);
    sg_val_result_set(r, SG_VAL_CRASH,
                      "the worker process died while %s the candidate (%s)%s; it will be restarted",
                      phase, how,
                      WIFSIGNALED(st) && (WTERMSIG(st) == SIGSEGV || WTERMSIG(st) == SIGBUS)
                          ? " - most likely an out-of-bounds memory access"
                      : WIFSIGNALED(st) && WTERMSIG(st) == SIGXCPU ? " - CPU time limit"
                                                                   : "");
}

/* Send req and wait for its result, switching from the compile to the run deadline when
 * the worker says it has compiled. */
static int exchange(sg_val_pool *p, slot *s, json_t *req, json_t **reply, sg_val_result *r,
                    sg_err *err) {
    json_int_t id = (json_int_t)++p->jobs;
    json_object_set_new(req, "id", json_integer(id));
    if (sg_val_msg_send(s->proc.sock_fd, req, err) < 0) {
        died(s, "receiving", r);
        return 1;
    }
    int compiling = 1;
    int64_t deadline = mono_ms() + p->o.compile_timeout_ms;
    for (;;) {
        int64_t left = deadline - mono_ms();
        json_t *m = NULL;
        int rc = left <= 0 ? 1 : sg_val_msg_recv(s->proc.sock_fd, (int)left, &m, err);
        if (rc == 1) {
            kill_slot(s);
            if (compiling)
                sg_val_result_set(r, SG_VAL_COMPILE_TIMEOUT,
                                  "compiling did not finish within %lld ms; the worker was killed",
                                  (long long)p->o.compile_timeout_ms);
            else
                sg_val_result_set(r, SG_VAL_TIMEOUT,
                                  "the kernels did not finish within %lld ms (a hang or an endless "
                                  "loop); the worker was killed",
                                  (long long)p->o.run_timeout_ms);
            return 1;
        }
        if (rc < 0) {
            died(s, compiling ? "compiling" : "running", r);
            return 1;
        }
        const char *type = json_string_value(json_object_get(m, "type"));
        if (json_integer_value(json_object_get(m, "id")) == id && type && !strcmp(type, "phase")) {
            compiling = 0;
            deadline = mono_ms() + p->o.run_timeout_ms;
            json_decref(m);
            continue;
        }
        if (json_integer_value(json_object_get(m, "id")) != id) {
            json_decref(m);
            continue;
        }
        *reply = m;
        return 0;
    }
}

int sg_val_pool_validate(sg_val_pool *p, int si, const sg_val_job *job, sg_val_result *r,
                         sg_err *err) {
    memset(r, 0, sizeof *r);
    r->first_bad = -1;
    if (si < 0 || si >= p->n) return sg_errf(err, "pool: no slot %d", si);
    slot *s = &p->s[si];
    uint64_t seed = job->seed ? job->seed : p->seed_base + p->jobs * 0x9e3779b97f4a7c15ULL;
    if (job->candidate && job->candidate_len > SG_VAL_MAX_SOURCE) {
        sg_val_result_set(r, SG_VAL_REJECTED, "source is %zu bytes, over the limit of %d",
                          job->candidate_len, SG_VAL_MAX_SOURCE);
        return 0;
    }
    json_t *cand = job->candidate ? json_stringn(job->candidate, job->candidate_len) : json_null();
    if (!cand) {
        sg_val_result_set(r, SG_VAL_REJECTED,
                          "the source is not valid UTF-8 text (or holds a NUL byte)");
        return 0;
    }
    char seeds[24];
    snprintf(seeds, sizeof seeds, "%llu", (unsigned long long)seed);
    json_t *req = json_pack("{s:s, s:s, s:o, s:s, s:s}", "type", "validate", "task_dir",
                            job->task_dir, "candidate", cand, "candidate_name",
                            job->candidate_name ? job->candidate_name : "candidate", "seed", seeds);
    if (ensure(p, s, err) < 0) {
        json_decref(req);
        return -1;
    }
    json_t *reply = NULL;
    int rc = exchange(p, s, req, &reply, r, err);
    json_decref(req);
    if (rc == 0) {
        sg_val_result_from_json(reply, r);
        json_decref(reply);
    }
    r->seed = seed;
    return 0;
}

int sg_val_pool_ping(sg_val_pool *p, int si, sg_err *err) {
    if (si < 0 || si >= p->n) return sg_errf(err, "pool: no slot %d", si);
    slot *s = &p->s[si];
    if (ensure(p, s, err) < 0) return -1;
    json_t *req = json_pack("{s:s}", "type", "ping"), *reply = NULL;
    sg_val_result r;
    int rc = exchange(p, s, req, &reply, &r, err);
    json_decref(req);
    json_decref(reply);
    return rc == 0 ? 0 : sg_errf(err, "ping: %s", r.message);
}

/* ---- the profiler's job type goes through the same slot, deadlines and respawn ---- */
int sg_val_pool_call(sg_val_pool *p, int si, json_t *req, json_t **reply, sg_val_result *r,
                     sg_err *err) {
    memset(r, 0, sizeof *r);
    r->first_bad = -1;
    if (si < 0 || si >= p->n) return sg_errf(err, "pool: no slot %d", si);
    slot *s = &p->s[si];
    if (ensure(p, s, err) < 0) return -1;
    return exchange(p, s, req, reply, r, err);
}
