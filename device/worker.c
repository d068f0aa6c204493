/* The worker process: holds the device context and the compile cache, serves jobs of the
 * kinds its pool was given from its socket one at a time, and exits when the socket
 * closes or the context is lost.
 * Limits: no core dumps, an address-space cap, a CPU-time cap over its whole life (the
 * pool replaces it when that runs out), and it dies with its parent.
 * Sandbox: before its first job the worker confines itself (sandbox.c) to the system's
 * toolkits and that job's task folder (plus opts.read_dirs); a later job naming another
 * folder is refused, and without the sandbox no job runs at all. At its start the worker
 * drops every environment variable the toolkits do not need (API keys, tokens). */
#include "device/device.h"

#include "device/sandbox.h"
#include "device/worker.h"

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
    sg_dev dev;
    int opened; /* the device was opened (dev.open_rc says whether that worked) */
    int boxed;  /* 1: sandboxed; -1: the sandbox failed (box_err says why) */
    sg_err box_err;
    char box_dir[4096]; /* the task folder the sandbox lets it read (real path) */
} worker;

static void limits(const sg_dev_opts *o) {
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
        /* The soft limit binds the worker and its kernels; the hard one stays open so that a
         * torch task's reference engine (trusted code, validator/torchref.c) can be started
         * without it: torch maps about 5 GB of address space before its first tensor. */
        struct rlimit as = {o->mem_limit, RLIM_INFINITY};
        setrlimit(RLIMIT_AS, &as);
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
}

static void send_phase(void *arg, const char *phase) {
    worker *w = arg;
    json_t *m = json_pack("{s:s, s:I, s:s}", "type", "phase", "id", w->id, "phase", phase);
    sg_dev_msg_send(w->sock, m, NULL);
    json_decref(m);
}

static void open_device(worker *w, const sg_dev_opts *o) {
    if (w->opened) return;
    w->opened = 1;
    w->dev.open_rc = sg_dev_open(&w->dev, o, &w->dev.open_err);
    w->dev.phase = send_phase;
    w->dev.phase_arg = w;
}

static int listed(const sg_dev_opts *o, const char *real) {
    for (int i = 0; o->read_dirs && o->read_dirs[i]; i++) {
        char r[4096];
        if (realpath(o->read_dirs[i], r) && !strcmp(r, real)) return 1;
    }
    return 0;
}

/* The sandbox is applied once, at the first job; it covers that job's task folder. A
 * NULL reply: the job may run; else the refusal to send back. */
static json_t *sandbox(worker *w, const sg_dev_opts *o, const sg_dev_kind *kind,
                       const json_t *req) {
    const char *dir = json_string_value(json_object_get(req, "task_dir"));
    char real[4096] = "";
    int exists = dir && realpath(dir, real);
    if (!w->boxed) {
        if (kind->before_sandbox) kind->before_sandbox(&w->dev, o, req);
        const char *dirs[65] = {dir};
        int n = dir ? 1 : 0;
        for (int i = 0; o->read_dirs && o->read_dirs[i] && n < 64; i++) dirs[n++] = o->read_dirs[i];
        dirs[n] = NULL;
        w->boxed = 1;
        snprintf(w->box_dir, sizeof w->box_dir, "%s", real);
        char pch[1024];
        sg_dev_pch_dir(o, pch, sizeof pch); /* made here, before the sandbox closes */
        if (sg_dev_sandbox_apply(dirs, pch, &w->box_err) < 0) w->boxed = -1;
    } else if (w->boxed == 1 && exists && strcmp(real, w->box_dir) && !listed(o, real)) {
        /* A missing folder runs on and fails to load, with the usual message. */
        char msg[8192 + 200];
        snprintf(msg, sizeof msg,
                 "worker: task folder %s is outside this worker's sandbox (it may read %s; a "
                 "pool serves one task folder, or those in its read_dirs)",
                 dir, w->box_dir);
        return json_pack("{s:s}", "error", msg);
    }
    if (w->boxed < 0) return json_pack("{s:s}", "error", w->box_err.msg);
    return NULL;
}

static const sg_dev_kind *find_kind(const sg_dev_opts *o, const char *type) {
    for (int i = 0; type && i < o->nkinds; i++)
        if (!strcmp(o->kinds[i]->name, type)) return o->kinds[i];
    return NULL;
}

int sg_dev_worker_main(int sock, void *arg) {
    const sg_dev_opts *o = arg;
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
    sg_dev_sandbox_env(); /* before any job: candidates must not see the parent's API keys */
    worker w = {.sock = 3};
    w.dev.phase = send_phase; /* before_sandbox may report progress too */
    w.dev.phase_arg = &w;
    limits(o);
    for (;;) {
        json_t *req = NULL;
        sg_err err;
        if (sg_dev_msg_recv(w.sock, -1, &req, &err) != 0) break;
        const char *type = json_string_value(json_object_get(req, "type"));
        w.id = json_integer_value(json_object_get(req, "id"));
        json_t *reply = NULL;
        int rc = 0;
        const sg_dev_kind *kind = find_kind(o, type);
        if (type && !strcmp(type, "ping")) {
            reply = json_object();
        } else if (kind && (reply = sandbox(&w, o, kind, req))) {
            rc = 0;
        } else if (kind) {
            open_device(&w, o);
            rc = kind->run(&w.dev, req, &reply);
            if (!reply) reply = json_pack("{s:s}", "error", "the job gave no reply");
        } else {
            reply = json_pack("{s:s}", "error", "unknown job type");
        }
        if (rc == SG_BE_STICKY) json_object_set_new(reply, "exiting", json_true());
        json_object_set_new(reply, "type", json_string("result"));
        json_object_set_new(reply, "id", json_integer(w.id));
        sg_dev_msg_send(w.sock, reply, NULL);
        json_decref(reply);
        json_decref(req);
        if (rc == SG_BE_STICKY) return 3; /* the context is gone: let the pool replace us */
    }
    if (w.opened && w.dev.open_rc == 0) sg_dev_close(&w.dev);
    if (w.dev.aux_free) w.dev.aux_free(w.dev.aux);
    return 0;
}
