/* The process pool: one worker process per slot, started on first use, reused across
 * jobs, killed at the compile or run deadline, and started again on the next job after
 * it died. Deadlines here are mechanism (poll timeouts), not policy; what a job means is
 * the business of the job kinds and of the caller, who maps outcomes to verdicts. */
#include "device/device.h"

#include "common/opts.h"
#include "common/proc.h"
#include "device/sandbox.h"
#include "device/worker.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct slot {
    sg_proc proc;
    int alive, spawns;
    int busy, compiling;
    json_int_t id;
    int64_t deadline;           /* caller's clock, ms */
    int64_t compile_ms, run_ms; /* this job's limits */
    char dir[4096];             /* the task folder its worker is sandboxed to ("": none yet) */
} slot;

struct sg_dev_pool {
    sg_dev_opts o;
    char *opts_json; /* o for an exec'd worker (built at its first start) */
    char arch[16];
    int n;
    slot *s;
    json_int_t jobs;
};

void sg_dev_opts_default(sg_dev_opts *o) {
    memset(o, 0, sizeof *o);
    o->device = SG_DEV_OPENCL;
    o->slots = 1;
    o->compile_timeout_ms = 30000;
    o->run_timeout_ms = 20000;
}

int sg_dev_pool_new(const sg_dev_opts *o, sg_dev_pool **out, sg_err *err) {
    if (o->slots < 1 || o->slots > SG_SLOTS_PER_DEVICE_MAX) /* the slots of one device */
        return sg_errf(err, "pool: %d slots (1..%d)", o->slots, SG_SLOTS_PER_DEVICE_MAX);
    sg_dev_pool *p = sg_xcalloc(1, sizeof *p);
    p->o = *o;
    if (o->arch) {
        snprintf(p->arch, sizeof p->arch, "%s", o->arch);
        p->o.arch = p->arch;
    }
    if (!p->o.mem_limit && o->device == SG_DEV_OPENCL) p->o.mem_limit = 8ULL << 30;
    if (o->device == SG_DEV_OPENCL) sg_dev_pocl_sweep(); /* what earlier workers left */
    p->n = o->slots;
    p->s = sg_xcalloc((size_t)p->n, sizeof *p->s);
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

/* End an idle worker: it exits when its socket closes. */
static void retire(slot *s) {
    close(s->proc.sock_fd);
    s->proc.sock_fd = -1;
    if (sg_proc_wait(&s->proc, 2000, NULL) != 0) kill_slot(s);
    sg_proc_close_fds(&s->proc);
    s->alive = 0;
}

void sg_dev_pool_free(sg_dev_pool *p) {
    if (!p) return;
    for (int i = 0; i < p->n; i++) {
        slot *s = &p->s[i];
        if (s->alive) retire(s);
    }
    free(p->s);
    free(p->opts_json);
    free(p);
}

int sg_dev_pool_spawns(const sg_dev_pool *p, int slot) { return p->s[slot].spawns; }

void sg_dev_pool_kill(sg_dev_pool *p, int si) {
    if (si < 0 || si >= p->n || !p->s[si].busy) return;
    kill_slot(&p->s[si]);
    p->s[si].busy = 0;
}

/* Exec'd afresh where the program said how (sg_dev_worker_exec_set), else forked. */
static int start_worker(sg_dev_pool *p, slot *s, sg_err *err) {
    const char *exe = sg_dev_worker_exec_path();
    int flags = SG_PROC_SOCKET | SG_PROC_NEW_PGRP;
    if (!exe) return sg_proc_fork(&s->proc, sg_dev_worker_main, &p->o, flags, err);
    if (!p->opts_json && !(p->opts_json = sg_dev_opts_to_json(&p->o)))
        return sg_errf(err, "its options cannot be written as JSON (a folder name that is not "
                            "UTF-8?)");
    char *argv[] = {(char *)exe, "__dev-worker", p->opts_json, NULL};
    /* only what a worker keeps: an API key never reaches it, not even for its first
     * instants (a sanitizer's runtime, for one, copies the environment it starts with) */
    char **envp = sg_dev_sandbox_env_list();
    int rc = sg_proc_spawn_env(&s->proc, argv, envp, flags, err);
    free(envp);
    return rc;
}

/* A worker that exited between jobs (after a sticky device error it answers, then exits)
 * is reaped here, so the next job gets a fresh one instead of a dead socket. A worker
 * confines itself to the task folder of its first job (sandbox.c): a job of another folder
 * (a campaign's next task) gets a fresh worker. */
static int ensure(sg_dev_pool *p, slot *s, const char *dir, sg_err *err) {
    int st;
    if (s->alive && dir && s->dir[0] && strcmp(dir, s->dir)) retire(s);
    if (s->alive && waitpid(s->proc.pid, &st, WNOHANG) == s->proc.pid) {
        s->proc.pid = 0;
        sg_proc_close_fds(&s->proc);
        s->alive = 0;
    }
    if (s->alive) {
        if (dir && !s->dir[0]) snprintf(s->dir, sizeof s->dir, "%s", dir); /* after pings */
        return 0;
    }
    fflush(NULL); /* the child must not flush our buffered output again */
    if (start_worker(p, s, err) < 0) return sg_err_prefix(err, "cannot start a worker process");
    s->alive = 1;
    s->spawns++;
    snprintf(s->dir, sizeof s->dir, "%s", dir ? dir : "");
    return 0;
}

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The worker died: reap it and say how. */
static void died(slot *s, sg_dev_outcome *out) {
    int st = 0;
    sg_proc_wait(&s->proc, 2000, &st);
    if (s->proc.pid > 0) kill_slot(s);
    sg_proc_close_fds(&s->proc);
    s->alive = 0;
    out->kind = SG_DEV_DIED;
    out->compiling = s->compiling;
    out->status = st;
    sg_proc_describe_status(st, out->how, sizeof out->how);
}

int sg_dev_pool_submit(sg_dev_pool *p, int si, json_t *req, int64_t compile_ms, int64_t run_ms,
                       int64_t now, sg_err *err) {
    if (si < 0 || si >= p->n) return sg_errf(err, "pool: no slot %d", si);
    slot *s = &p->s[si];
    if (s->busy) return sg_errf(err, "pool: slot %d is busy", si);
    if (ensure(p, s, json_string_value(json_object_get(req, "task_dir")), err) < 0) return -1;
    s->id = ++p->jobs;
    json_object_set_new(req, "id", json_integer(s->id));
    s->busy = 1;
    s->compiling = 1;
    s->compile_ms = compile_ms > 0 ? compile_ms : p->o.compile_timeout_ms;
    s->run_ms = run_ms > 0 ? run_ms : p->o.run_timeout_ms;
    s->deadline = now + s->compile_ms;
    if (sg_dev_msg_send(s->proc.sock_fd, req, err) < 0) s->deadline = now; /* step reports it */
    return 0;
}

int sg_dev_pool_fd(const sg_dev_pool *p, int si) {
    return si >= 0 && si < p->n && p->s[si].busy ? p->s[si].proc.sock_fd : -1;
}

int64_t sg_dev_pool_deadline(const sg_dev_pool *p, int si) {
    return si >= 0 && si < p->n && p->s[si].busy ? p->s[si].deadline : INT64_MAX;
}

int sg_dev_pool_step(sg_dev_pool *p, int si, int64_t now, sg_dev_outcome *out) {
    slot *s = &p->s[si];
    memset(out, 0, sizeof *out);
    if (!s->busy) { /* nothing to wait for: report it as a dead worker, not a hang */
        out->kind = SG_DEV_DIED;
        snprintf(out->how, sizeof out->how, "slot %d has no job", si);
        return 0;
    }
    for (;;) {
        json_t *m = NULL;
        sg_err err;
        int rc = sg_dev_msg_recv(s->proc.sock_fd, 0, &m, &err);
        if (rc == 1) {
            if (now < s->deadline) return 1;
            kill_slot(s);
            out->kind = s->compiling ? SG_DEV_COMPILE_DEADLINE : SG_DEV_RUN_DEADLINE;
            out->limit_ms = s->compiling ? s->compile_ms : s->run_ms;
            break;
        }
        if (rc < 0) {
            died(s, out);
            break;
        }
        const char *type = json_string_value(json_object_get(m, "type"));
        int mine = json_integer_value(json_object_get(m, "id")) == s->id;
        const char *ph = json_string_value(json_object_get(m, "phase"));
        if (mine && type && !strcmp(type, "phase") && ph &&
            (!strcmp(ph, "starting") || !strcmp(ph, "compile"))) {
            /* a helper of the job kind is starting, or a torch.compile forward may compile */
            s->compiling = s->compiling || !strcmp(ph, "compile"); /* its deadline's verdict */
            s->deadline = now + s->compile_ms;
        } else if (mine && type && !strcmp(type, "phase")) {
            s->compiling = 0;
            s->deadline = now + s->run_ms;
        } else if (mine) {
            if (json_is_true(json_object_get(m, "exiting"))) { /* its device context is lost */
                if (sg_proc_wait(&s->proc, 5000, NULL) != 0) kill_slot(s);
                sg_proc_close_fds(&s->proc);
                s->alive = 0;
            }
            out->kind = SG_DEV_REPLY;
            out->reply = m;
            break;
        }
        json_decref(m);
    }
    s->busy = 0;
    return 0;
}

int sg_dev_pool_call(sg_dev_pool *p, int si, json_t *req, int64_t compile_ms, int64_t run_ms,
                     sg_dev_outcome *out, sg_err *err) {
    if (sg_dev_pool_submit(p, si, req, compile_ms, run_ms, mono_ms(), err) < 0) return -1;
    slot *s = &p->s[si];
    for (;;) {
        int64_t left = s->deadline - mono_ms();
        struct pollfd pf = {.fd = s->proc.sock_fd, .events = POLLIN};
        if (left > 0) poll(&pf, 1, left > INT32_MAX ? INT32_MAX : (int)left);
        if (sg_dev_pool_step(p, si, mono_ms(), out) == 0) return 0;
    }
}
