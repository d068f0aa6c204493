/* The reference engine of a torch task (torchref/engine.py): one Python process per worker,
 * started before the worker sandboxes itself, with the worker's scrubbed environment (no
 * LLM key or token), fed over a socket. It runs only the task's problem file. Frames both
 * ways: 4-byte big-endian length, JSON, then the binary blobs the JSON lists. */
#include "validator/internal.h"

#include "common/buf.h"
#include "common/json.h"
#include "common/paths.h"
#include "common/proc.h"
#include "device/device.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

struct sg_val_torch {
    sg_proc proc;
    char dir[4096]; /* the task folder it serves */
    char version[64];
    int dead;
};

int sg_val_torch_paths(char *py, size_t pyn, char *dir, size_t dn, sg_err *err) {
    if (sg_data_dir("torchref", dir, dn, err) < 0) return -1;
    const char *env = getenv("SPECGEN_PYTHON");
    char venv[4200];
    snprintf(venv, sizeof venv, "%s/../.venv/bin/python", dir);
    if (env && *env)
        snprintf(py, pyn, "%s", env);
    else if (access(venv, X_OK) == 0)
        snprintf(py, pyn, "%s", venv);
    else
        snprintf(py, pyn, "python3"); /* a GPU node's system torch */
    return 0;
}

static int write_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n) {
        ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        c += w, n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, void *p, size_t n) {
    char *c = p;
    while (n) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        c += r, n -= (size_t)r;
    }
    return 0;
}

static json_t *recv_json(sg_val_torch *e, sg_err *err) {
    unsigned char h[4];
    if (read_all(e->proc.sock_fd, h, 4) < 0) {
        e->dead = 1;
        int st = 0;
        char why[128] = "";
        if (sg_proc_wait(&e->proc, 2000, &st) == 0) sg_proc_describe_status(st, why, sizeof why);
        return sg_errf(err, "the torch reference engine stopped%s%s", why[0] ? ": " : "", why),
               NULL;
    }
    size_t n = (size_t)h[0] << 24 | (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3];
    char *text = sg_xmalloc(n + 1);
    json_t *j = NULL;
    if (read_all(e->proc.sock_fd, text, n) == 0)
        j = sg_json_parse(text, n, "engine reply", err);
    else
        sg_errf(err, "the torch reference engine stopped mid-reply"), e->dead = 1;
    free(text);
    return j;
}

void sg_val_torch_free(sg_val_torch *e) {
    if (!e) return;
    sg_proc_close_fds(&e->proc);
    if (e->proc.pid > 0) sg_proc_stop(&e->proc, 2000);
    free(e);
}

static void torch_free_aux(void *p) { sg_val_torch_free(p); }

static const char *engine_error(json_t *j) {
    const char *m = json_string_value(json_object_get(j, "error"));
    return m ? m : "no reason given";
}

/* Wait for the engine's first frame, telling the parent every few seconds that the start
 * goes on (importing torch takes seconds, a minute on a loaded machine), up to a cap. */
#define START_TICK_MS 5000
#define START_CAP_MS 300000
static int wait_hello(sg_val_torch *e, void (*tick)(void *, const char *), void *arg, sg_err *err) {
    for (int waited = 0; waited < START_CAP_MS; waited += START_TICK_MS) {
        struct pollfd pf = {e->proc.sock_fd, POLLIN, 0};
        int r = poll(&pf, 1, START_TICK_MS);
        if (r > 0) return 0;
        if (r < 0 && errno != EINTR) return sg_errf(err, "poll: %s", strerror(errno));
        if (tick) tick(arg, "starting");
    }
    return sg_errf(err, "the torch reference engine did not start within %d s",
                   START_CAP_MS / 1000);
}

int sg_val_torch_start(const char *task_dir, sg_dev_lang lang, void (*tick)(void *, const char *),
                       void *arg, sg_val_torch **out, sg_err *err) {
    char py[4200], dir[4096], script[4200];
    *out = NULL;
    if (sg_val_torch_paths(py, sizeof py, dir, sizeof dir, err) < 0) return -1;
    snprintf(script, sizeof script, "%s/engine.py", dir);
    char *argv[] = {py, script, (char *)task_dir, lang == SG_DEV_CUDA ? "cuda" : "cpu", NULL};
    sg_val_torch *e = sg_xcalloc(1, sizeof *e);
    snprintf(e->dir, sizeof e->dir, "%s", task_dir);
    char **envp = sg_dev_sandbox_env_list();
    int flags = SG_PROC_SOCKET | SG_PROC_NULL_IO;
    /* The engine runs without the worker's address-space cap (device/worker.c keeps the hard
     * limit open): the soft limit is raised for the spawn, which the child inherits, and put
     * back. Under the cap torch's own mappings left too little for a transposed convolution's
     * buffers (KernelBench level 2: "can't allocate 876879108 bytes"). */
    struct rlimit as, open_as;
    int capped = getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != as.rlim_max;
    if (capped) {
        open_as = (struct rlimit){as.rlim_max, as.rlim_max};
        capped = setrlimit(RLIMIT_AS, &open_as) == 0;
    }
    int rc = sg_proc_spawn_env(&e->proc, argv, envp, flags, err);
    if (capped) setrlimit(RLIMIT_AS, &as);
    free(envp);
    if (rc < 0) {
        free(e);
        return sg_err_prefix(err, "cannot start the torch reference engine (%s)", py);
    }
    json_t *hello = wait_hello(e, tick, arg, err) < 0 ? NULL : recv_json(e, err);
    if (!hello || !json_is_true(json_object_get(hello, "ok"))) {
        if (hello)
            sg_errf(err,
                    "the torch reference engine (%s) did not start: %s. PyTorch comes with "
                    "`make deps` (deps/pip.txt into .venv) or `pip install torch`; "
                    "SPECGEN_PYTHON names another interpreter",
                    py, engine_error(hello));
        json_decref(hello);
        sg_val_torch_free(e);
        return -1;
    }
    const char *v = json_string_value(json_object_get(hello, "torch"));
    snprintf(e->version, sizeof e->version, "%s", v ? v : "?");
    json_decref(hello);
    *out = e;
    return 0;
}

/* The worker's first job: a torch task gets its engine now, before the sandbox. A failure
 * is kept as the message later jobs answer with. */
typedef struct failed_start {
    sg_val_torch e;
    sg_err err;
} failed_start;

void sg_val_before_sandbox(sg_dev *d, const sg_dev_opts *o, const json_t *req) {
    const char *dir = json_string_value(json_object_get(req, "task_dir"));
    sg_val_task t;
    sg_err e;
    if (d->aux || !dir || o->compile_only || sg_val_task_load(dir, &t, &e) < 0) return;
    int torch = t.torch_ref != NULL;
    sg_val_task_free(&t);
    if (!torch) return;
    sg_val_torch *eng = NULL;
    if (sg_val_torch_start(dir, o->device, d->phase, d->phase_arg, &eng, &e) < 0) {
        failed_start *f = sg_xcalloc(1, sizeof *f);
        f->e.dead = 1;
        f->e.proc.pid = -1;
        f->e.proc.sock_fd = f->e.proc.in_fd = f->e.proc.out_fd = f->e.proc.err_fd = -1;
        snprintf(f->e.dir, sizeof f->e.dir, "%s", dir);
        f->err = e;
        eng = &f->e;
    }
    d->aux = eng;
    d->aux_free = torch_free_aux;
}

int sg_val_torch_get(sg_dev *d, const sg_val_task *t, sg_val_torch **out, sg_err *err) {
    sg_val_torch *e = d->aux;
    *out = NULL;
    if (!e)
        return sg_errf(err, "no torch reference engine in this worker (it starts at the "
                            "worker's first job, before the sandbox)");
    if (e->dead && e->proc.pid == -1) return sg_errf(err, "%s", ((failed_start *)e)->err.msg);
    if (e->dead) return sg_errf(err, "the torch reference engine has stopped");
    char a[4096], b[4096];
    if (!realpath(e->dir, a) || !realpath(t->dir, b) || strcmp(a, b))
        return sg_errf(err, "this worker's torch reference engine serves %s, not %s", e->dir,
                       t->dir);
    *out = e;
    return 0;
}

/* One "run" or "time" request; the reply's blobs land in the task buffers' slots. */
int sg_val_torch_call(sg_val_torch *e, json_t *req, const sg_val_task *t, unsigned char **data,
                      const size_t *bytes, json_t **reply, sg_err *err) {
    *reply = NULL;
    char *text = json_dumps(req, JSON_COMPACT);
    size_t n = strlen(text);
    unsigned char h[4] = {(unsigned char)(n >> 24), (unsigned char)(n >> 16),
                          (unsigned char)(n >> 8), (unsigned char)n};
    int rc = write_all(e->proc.sock_fd, h, 4) < 0 || write_all(e->proc.sock_fd, text, n) < 0;
    free(text);
    json_t *given = json_object_get(req, "given");
    for (size_t i = 0; !rc && i < json_array_size(given); i++) {
        const char *name = json_string_value(json_array_get(json_array_get(given, i), 0));
        for (int b = 0; b < t->nbuf; b++)
            if (!strcmp(t->buf[b].name, name)) rc = write_all(e->proc.sock_fd, data[b], bytes[b]);
    }
    if (rc) return e->dead = 1, sg_errf(err, "the torch reference engine stopped (write)");
    json_t *j = recv_json(e, err);
    if (!j) return -1;
    if (!json_is_true(json_object_get(j, "ok"))) {
        sg_errf(err, "%s", engine_error(j));
        json_decref(j);
        return -2; /* the problem's own error: the engine lives on */
    }
    const char *lists[2] = {"drawn", "out"};
    for (int l = 0; l < 2; l++) {
        json_t *arr = json_object_get(j, lists[l]);
        for (size_t i = 0; i < json_array_size(arr); i++) {
            const char *name = json_string_value(json_array_get(json_array_get(arr, i), 0));
            size_t len = (size_t)json_integer_value(json_array_get(json_array_get(arr, i), 1));
            int b = 0;
            while (b < t->nbuf && strcmp(t->buf[b].name, name ? name : "")) b++;
            unsigned char *dst = sg_xmalloc(len + 1);
            int bad = read_all(e->proc.sock_fd, dst, len) < 0;
            if (!bad && b < t->nbuf && len == bytes[b])
                memcpy(data[b], dst, len);
            else if (!bad)
                sg_errf(err,
                        "buffer %s: the problem's tensor has %zu bytes, the task's count gives "
                        "%zu (re-import the problem)",
                        name ? name : "?", len, b < t->nbuf ? bytes[b] : 0);
            free(dst);
            if (bad) return e->dead = 1, json_decref(j), sg_errf(err, "engine reply cut short");
            if (b >= t->nbuf || len != bytes[b]) rc = -2;
        }
    }
    if (rc) return json_decref(j), -2;
    *reply = j;
    return 0;
}

static json_t *sizes_json(const sg_val_sizes *s) {
    json_t *o = json_object();
    for (int i = 0; i < s->n; i++) json_object_set_new(o, s->name[i], json_integer(s->value[i]));
    return o;
}

static const char *mode_name(sg_val_torch_mode m) {
    return m == SG_VAL_TORCH_REF ? "ref" : m == SG_VAL_TORCH_COMPILE ? "compile" : "eager";
}

/* A torch.compile forward compiles at its first call at a shape (seconds to minutes of
 * inductor on a CPU): it runs under the job's compile deadline, not the run deadline (the
 * worker's "compile" phase), and the run deadline starts again after it. */
static void compile_phase(sg_dev *d, sg_val_torch_mode mode, const char *phase) {
    if (mode == SG_VAL_TORCH_COMPILE && d->phase) d->phase(d->phase_arg, phase);
}

int sg_val_torch_run_set(sg_dev *d, const sg_val_task *t, const sg_val_sizes *s, int dist,
                         uint64_t seed, sg_val_torch_mode mode, unsigned char **data,
                         const size_t *bytes, sg_err *err) {
    sg_val_torch *eng;
    if (sg_val_torch_get(d, t, &eng, err) < 0) return -1;
    json_t *given = json_array(), *draw = json_array();
    for (int i = 0; i < t->nbuf; i++) {
        const sg_val_buffer *b = &t->buf[i];
        if (b->role != SG_VAL_IN) continue;
        if (mode == SG_VAL_TORCH_REF && b->dist[dist % b->ndist].kind == SG_VAL_INIT_MODEL)
            json_array_append_new(draw, json_string(b->name));
        else
            json_array_append_new(given, json_pack("[s,I]", b->name, (json_int_t)bytes[i]));
    }
    json_t *req =
        json_pack("{s:s, s:o, s:I, s:s, s:o, s:o}", "op", "run", "sizes", sizes_json(s), "seed",
                  (json_int_t)(seed >> 1), "mode", mode_name(mode), "given", given, "draw", draw);
    json_t *reply = NULL;
    compile_phase(d, mode, "compile");
    int rc = sg_val_torch_call(eng, req, t, data, bytes, &reply, err);
    compile_phase(d, mode, "run");
    json_decref(req);
    json_decref(reply);
    return rc == -1 ? SG_BE_STICKY : rc < 0 ? -1 : 0;
}

int sg_val_torch_time(sg_dev *d, const sg_val_task *t, const sg_val_sizes *s,
                      sg_val_torch_mode mode, uint64_t seed, int warmup, int reps,
                      size_t flush_bytes, double *samples, int *nsamples, sg_err *err) {
    sg_val_torch *eng;
    if (sg_val_torch_get(d, t, &eng, err) < 0) return -1;
    json_t *req =
        json_pack("{s:s, s:o, s:I, s:s, s:i, s:i, s:I, s:[], s:[]}", "op", "time", "sizes",
                  sizes_json(s), "seed", (json_int_t)(seed >> 1), "mode", mode_name(mode), "warmup",
                  warmup, "reps", reps, "flush", (json_int_t)flush_bytes, "given", "draw");
    json_t *reply = NULL;
    compile_phase(d, mode, "compile");
    int rc = sg_val_torch_call(eng, req, t, NULL, NULL, &reply, err);
    compile_phase(d, mode, "run");
    json_decref(req);
    if (rc < 0) return rc == -1 ? SG_BE_STICKY : -1;
    json_t *ns = json_object_get(reply, "ns");
    *nsamples = 0;
    for (size_t i = 0; i < json_array_size(ns) && (int)i < reps; i++)
        samples[(*nsamples)++] = json_number_value(json_array_get(ns, i));
    json_decref(reply);
    return 0;
}
