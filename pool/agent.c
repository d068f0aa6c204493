/* The node agent's job table: jobs from requests onto local slots, their events in one
 * numbered sequence, the task cache, limits. Runs on the loop thread only (agent.h). */
#include "pool/agent.h"

#include "common/json.h"
#include "common/log.h"
#include "common/opts.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

enum { RING = 4096, KEEP_DONE = 1024, MAX_EVENTS_PER_POLL = 256 };

typedef enum { QUEUED, RUNNING, ENDED } job_state;

typedef struct sg_agent_job {
    char id[72], client[72], name[64];
    int pin;  /* the slot it must run on, or -1 */
    int slot; /* where it runs or ran, -1 while queued */
    sg_pool_role kind;
    char task_dir[4200];
    char *candidate; /* NULL: the baseline */
    size_t len;
    sg_prof_opts prof;
    job_state state;
    uint64_t seq; /* arrival */
    int64_t queued_ns, started_ns, ended_ns;
    json_t *result; /* once ended */
    struct sg_agent_job *next;
} ajob;

typedef struct event {
    uint64_t seq;
    char client[72];
    json_t *ev;
} event;

typedef struct local_ctx {
    sg_agent *a;
    int local;
} local_ctx;

struct sg_agent {
    sg_loop *loop;
    sg_agent_config cfg;
    sg_pool_local **local;
    local_ctx *lctx;
    sg_agent_slot *s;
    int n;
    ajob *jobs; /* all kept jobs, newest first */
    int queued, running, ended;
    uint64_t next_seq, auto_id;
    event ring[RING];
    uint64_t ev_next; /* the next event's number (the first is 1) */
    uint64_t instance;
    int draining, dispatch_pending;
    int tasks_stored; /* new tasks clients stored since the start, and their bytes */
    uint64_t task_bytes;
    sg_agent_stats st;
    void (*on_event)(void *arg);
    void *ev_arg;
};

const double sg_agent_buckets[SG_AGENT_NBUCKETS] = {0.001, 0.005, 0.01, 0.05, 0.1, 1, 10, 60};

/* ---- replies ---- */
void sg_agent_error(sg_agent_reply *out, int status, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    out->status = status;
    sg_buf_clear(&out->body);
    sg_buf_append_str(&out->body, "{\"error\":");
    sg_buf_append_json_string(&out->body, msg);
    sg_buf_append_str(&out->body, "}\n");
}

static void reply_json(sg_agent_reply *out, int status, json_t *j) {
    out->status = status;
    sg_buf_clear(&out->body);
    char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
    sg_buf_append_str(&out->body, s ? s : "{}");
    sg_buf_append_str(&out->body, "\n");
    free(s);
    json_decref(j);
}

/* ---- events ---- */
static void emit(sg_agent *a, const ajob *j, json_t *ev) {
    uint64_t seq = a->ev_next++;
    event *e = &a->ring[seq % RING];
    json_decref(e->ev);
    json_object_set_new(ev, "seq", json_integer((json_int_t)seq));
    e->seq = seq;
    e->ev = ev;
    snprintf(e->client, sizeof e->client, "%s", j ? j->client : "");
    if (a->on_event) a->on_event(a->ev_arg);
}

static json_t *job_fields(const sg_agent *a, const ajob *j, const char *ev) {
    json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s}", "ev", ev, "job", j->id, "client", j->client,
                          "kind", sg_pool_role_name(j->kind), "name", j->name);
    if (j->slot >= 0) {
        json_object_set_new(o, "slot", json_integer(j->slot));
        json_object_set_new(o, "slot_name", json_string(a->s[j->slot].desc.name));
    }
    return o;
}

/* ---- jobs ---- */
static ajob *find_job(const sg_agent *a, const char *id) {
    for (ajob *j = a->jobs; j; j = j->next)
        if (!strcmp(j->id, id)) return j;
    return NULL;
}

/* Forget the oldest ended jobs beyond KEEP_DONE. */
static void trim(sg_agent *a) {
    while (a->ended > KEEP_DONE) {
        ajob **pp = &a->jobs, **last = NULL;
        for (; *pp; pp = &(*pp)->next)
            if ((*pp)->state == ENDED) last = pp;
        if (!last) return;
        ajob *j = *last;
        *last = j->next;
        json_decref(j->result);
        free(j->candidate);
        free(j);
        a->ended--;
    }
}

static void schedule_dispatch(sg_agent *a);

static void end_job(sg_agent *a, ajob *j, sg_pool_end how, json_t *result) {
    if (j->state == QUEUED) a->queued--;
    if (j->state == RUNNING) a->running--;
    j->state = ENDED;
    a->ended++;
    j->ended_ns = sg_loop_now(a->loop);
    json_object_set_new(result, "end", json_string(sg_pool_end_name(how)));
    j->result = result;
    json_t *ev = job_fields(a, j, "job_end");
    json_object_set_new(ev, "end", json_string(sg_pool_end_name(how)));
    json_object_set_new(ev, "result", json_incref(result));
    if (j->slot >= 0 && j->started_ns) {
        sg_agent_slot *s = &a->s[j->slot];
        s->busy_ns += j->ended_ns - j->started_ns;
        json_object_set_new(ev, "service_s",
                            json_real((double)(j->ended_ns - j->started_ns) / SG_SEC));
        const char *v = json_string_value(json_object_get(result, "verdict"));
        if (v) {
            json_t *c = json_object_get(s->verdicts, v);
            json_object_set_new(s->verdicts, v, json_integer(c ? json_integer_value(c) + 1 : 1));
        }
        if (s->job == j) s->job = NULL;
        if (a->cfg.hooks.job_ended) {
            sg_pool_work w = {.kind = j->kind,
                              .task_dir = j->task_dir,
                              .candidate = j->candidate,
                              .candidate_len = j->len,
                              .name = j->name,
                              .prof = &j->prof};
            a->cfg.hooks.job_ended(a->cfg.hooks.arg, s->desc.device, j->seq, &w, ev);
        }
    }
    emit(a, j, ev);
    schedule_dispatch(a);
}

static json_t *simple_result(const char *verdict, const char *msg) {
    return json_pack("{s:b,s:s,s:s}", "pass", 0, "verdict", verdict, "message", msg);
}

static void start_job(sg_agent *a, int si, ajob *j) {
    sg_agent_slot *s = &a->s[si];
    a->queued--;
    a->running++;
    j->state = RUNNING;
    j->slot = si;
    s->job = j;
    j->started_ns = sg_loop_now(a->loop);
    double wait = (double)(j->started_ns - j->queued_ns) / SG_SEC;
    sg_pool_role r = s->role;
    for (int b = 0; b < SG_AGENT_NBUCKETS; b++)
        if (wait <= sg_agent_buckets[b]) a->st.wait_bucket[r][b]++;
    a->st.wait_count[r]++;
    a->st.wait_sum[r] += wait;
    json_t *ev = job_fields(a, j, "job_start");
    json_object_set_new(ev, "role", json_string(sg_pool_role_name(s->role)));
    json_object_set_new(ev, "wait_s", json_real(wait));
    sg_pool_job pj = {.id = j->seq, .slot = si, .started_ns = j->started_ns};
    pj.work = (sg_pool_work){.kind = j->kind,
                             .task_dir = j->task_dir,
                             .candidate = j->candidate,
                             .candidate_len = j->len,
                             .name = j->name,
                             .prof = &j->prof};
    if (a->cfg.hooks.job_starting)
        a->cfg.hooks.job_starting(a->cfg.hooks.arg, s->desc.device, j->seq, &pj.work, ev);
    sg_err err;
    if (sg_pool_local_ops.start(a->local[s->local], s->index, &pj, &err) < 0) {
        json_decref(ev);
        end_job(a, j, SG_POOL_FAILED, simple_result("failed", err.msg));
        return;
    }
    emit(a, j, ev);
}

/* A device runs a profile job alone (for jobs the agent places itself). */
static int device_state(const sg_agent *a, int dev, int *profiling) {
    int busy = 0;
    *profiling = 0;
    for (int i = 0; i < a->n; i++)
        if (a->s[i].desc.device == dev && a->s[i].job) {
            busy++;
            *profiling |= a->s[i].job->kind == SG_POOL_PROFILE;
        }
    return busy;
}

/* The oldest queued job for idle slot si: one pinned to it, else an unpinned one of its
 * role, else (lending) any unpinned one the device can take. */
static ajob *next_for(sg_agent *a, int si) {
    ajob *best = NULL, *own = NULL, *other = NULL;
    for (ajob *j = a->jobs; j; j = j->next) { /* newest first: the last match is the oldest */
        if (j->state != QUEUED) continue;
        if (j->pin == si) best = j;
        if (j->pin >= 0) continue;
        int prof, busy = device_state(a, a->s[si].desc.device, &prof);
        if (prof || (j->kind == SG_POOL_PROFILE && busy)) continue;
        if (j->kind == a->s[si].role)
            own = j;
        else
            other = j;
    }
    return best ? best : own ? own : other;
}

static void dispatch(sg_agent *a) {
    for (int progress = 1; progress;) {
        progress = 0;
        for (int i = 0; i < a->n; i++) {
            if (a->s[i].job) continue;
            ajob *j = next_for(a, i);
            if (!j) continue;
            start_job(a, i, j);
            progress = 1;
        }
    }
}

static void dispatch_cb(sg_loop *loop, void *arg) {
    (void)loop;
    sg_agent *a = arg;
    a->dispatch_pending = 0;
    trim(a); /* here, not where a job ends: its caller may still hold it */
    dispatch(a);
}

static void schedule_dispatch(sg_agent *a) {
    if (a->dispatch_pending) return;
    a->dispatch_pending = 1;
    sg_loop_defer(a->loop, dispatch_cb, a);
}

static void on_local_done(void *arg, int index, sg_pool_result *r) {
    local_ctx *c = arg;
    sg_agent *a = c->a;
    for (int i = 0; i < a->n; i++)
        if (a->s[i].local == c->local && a->s[i].index == index && a->s[i].job) {
            r->end = SG_POOL_DONE;
            end_job(a, a->s[i].job, SG_POOL_DONE, sg_pool_result_to_json(r));
            return;
        }
}

/* ---- setup ---- */
int sg_agent_new(sg_loop *loop, const sg_agent_config *cfg, sg_agent **out, sg_err *err) {
    if (cfg->ndevices < 1 || cfg->ndevices > SG_DEVICES_MAX || cfg->per_device < 1 ||
        cfg->per_device > SG_SLOTS_PER_DEVICE_MAX)
        return sg_errf(err, "%d device(s) x %d slot(s): must be 1..%d x 1..%d", cfg->ndevices,
                       cfg->per_device, SG_DEVICES_MAX, SG_SLOTS_PER_DEVICE_MAX);
    sg_agent *a = sg_xcalloc(1, sizeof *a);
    a->loop = loop;
    a->cfg = *cfg;
    if (a->cfg.max_tasks <= 0) a->cfg.max_tasks = 1000;
    if (!a->cfg.max_task_bytes) a->cfg.max_task_bytes = (uint64_t)1 << 30;
    a->ev_next = 1;
    if (getrandom(&a->instance, sizeof a->instance, 0) != sizeof a->instance)
        a->instance = (uint64_t)sg_loop_now(loop) * 2654435761u;
    a->local = sg_xcalloc((size_t)cfg->ndevices, sizeof *a->local);
    a->lctx = sg_xcalloc((size_t)cfg->ndevices, sizeof *a->lctx);
    a->n = cfg->ndevices * cfg->per_device;
    a->s = sg_xcalloc((size_t)a->n, sizeof *a->s);
    for (int d = 0; d < cfg->ndevices; d++) {
        sg_dev_opts o;
        sg_dev_opts_default(&o);
        o.device = cfg->lang;
        if (cfg->lang == SG_DEV_CUDA)
            o.cuda_device = cfg->devices[d];
        else
            o.opencl_device = cfg->devices[d];
        if (sg_pool_local_new(loop, &o, NULL, 1, cfg->per_device, &a->local[d], err) < 0) {
            sg_agent_free(a);
            return -1;
        }
        a->lctx[d] = (local_ctx){a, d};
        sg_pool_local_on_done(a->local[d], on_local_done, &a->lctx[d]);
        int n;
        const sg_pool_slot_desc *desc = sg_pool_local_slots(a->local[d], &n);
        for (int w = 0; w < n; w++) {
            sg_agent_slot *s = &a->s[d * cfg->per_device + w];
            s->desc = desc[w];
            s->desc.device = cfg->devices[d];
            s->local = d;
            s->index = w;
            s->role = SG_POOL_VALIDATE;
            s->verdicts = json_object();
        }
    }
    *out = a;
    return 0;
}

void sg_agent_free(sg_agent *a) {
    if (!a) return;
    for (int i = 0; i < a->n; i++) {
        if (a->s[i].job) sg_pool_local_ops.kill(a->local[a->s[i].local], a->s[i].index);
        json_decref(a->s[i].verdicts);
    }
    for (int d = 0; d < a->cfg.ndevices; d++) sg_pool_local_free(a->local[d]);
    while (a->jobs) {
        ajob *j = a->jobs;
        a->jobs = j->next;
        json_decref(j->result);
        free(j->candidate);
        free(j);
    }
    for (int i = 0; i < RING; i++) json_decref(a->ring[i].ev);
    free(a->local);
    free(a->lctx);
    free(a->s);
    free(a);
}

void sg_agent_drain(sg_agent *a) { a->draining = 1; }
void sg_agent_on_event(sg_agent *a, void (*fn)(void *arg), void *arg) {
    a->on_event = fn;
    a->ev_arg = arg;
}
int sg_agent_slots(const sg_agent *a) { return a->n; }
uint64_t sg_agent_instance(const sg_agent *a) { return a->instance; }
uint64_t sg_agent_event_seq(const sg_agent *a) { return a->ev_next - 1; }
const sg_agent_hooks *sg_agent_hooks_of(const sg_agent *a) { return &a->cfg.hooks; }
int64_t sg_agent_now(const sg_agent *a) { return sg_loop_now(a->loop); }
sg_dev_lang sg_agent_lang(const sg_agent *a) { return a->cfg.lang; }
int sg_agent_max_jobs(const sg_agent *a) { return a->cfg.max_jobs; }
int64_t sg_agent_job_started(const ajob *j) { return j->started_ns; }
const char *sg_agent_job_id(const ajob *j) { return j->id; }

int sg_agent_view(const sg_agent *a, const sg_agent_slot **slots, const sg_agent_stats **st,
                  int *queued, int *running, int *tasks_cached) {
    *slots = a->s;
    *st = &a->st;
    *queued = a->queued;
    *running = a->running;
    *tasks_cached = (int)a->st.tasks_received;
    return a->n;
}

/* ---- requests ---- */
static int id_ok(const char *s) {
    size_t n = strlen(s);
    if (n < 1 || n > 64) return 0;
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-", s[i]))
            return 0;
    return 1;
}

static int hash_ok(const char *s) {
    if (strlen(s) != 64) return 0;
    for (int i = 0; i < 64; i++)
        if (!strchr("0123456789abcdef", s[i])) return 0;
    return 1;
}

static int task_cached(const sg_agent *a, const char *hash, char *dir, size_t n) {
    snprintf(dir, n, "%s/%s", a->cfg.cache_dir, hash);
    char tj[4400];
    struct stat st;
    snprintf(tj, sizeof tj, "%s/task.json", dir);
    return stat(tj, &st) == 0 && S_ISREG(st.st_mode);
}

/* A message for the client: the agent's cache folder is the agent's business. A path in it
 * (CACHE/NAME/FILE: a task's folder or the temporary one a task is checked in) becomes
 * FILE; the folder itself "the agent's cache folder". */
static void hide_cache_path(const char *cache, const char *msg, char *out, size_t n) {
    static const char stop[] = " :,;'\"()/";
    size_t cl = strlen(cache), o = 0;
    while (*msg && o + 1 < n) {
        if (!cl || strncmp(msg, cache, cl)) {
            out[o++] = *msg++;
            continue;
        }
        const char *p = msg + cl;
        size_t name = *p == '/' ? strcspn(p + 1, stop) : 0;
        if (*p == '/' && name && p[1 + name] == '/') {
            msg = p + name + 2; /* CACHE/NAME/: FILE stays */
            continue;
        }
        int w = snprintf(out + o, n - o, "the agent's cache folder");
        o = w < 0 || (size_t)w >= n - o ? n - 1 : o + (size_t)w;
        msg = p + (*p == '/' ? name + 1 : 0);
    }
    out[o] = 0;
}

static uint64_t bundle_bytes(const json_t *files) {
    uint64_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)files, k, v) n += strlen(k) + json_string_length(v);
    return n;
}

/* The task of a job (its folder into dir): from the cache, or stored from files within
 * the limits. 0, or -1 with out set. */
static int take_task(sg_agent *a, const char *task, const json_t *files, char *dir, size_t n,
                     sg_agent_reply *out) {
    int have = task_cached(a, task, dir, n);
    if (have && !files) return 0;
    if (!files) {
        reply_json(out, 412,
                   json_pack("{s:s,s:s,s:s}", "error",
                             "this agent does not hold that task: send it again with "
                             "\"task_files\"",
                             "need", "task_files", "task", task));
        return -1;
    }
    uint64_t bytes = bundle_bytes(files);
    if (!have &&
        (a->tasks_stored >= a->cfg.max_tasks || a->task_bytes + bytes > a->cfg.max_task_bytes)) {
        a->st.rejected_full++;
        sg_agent_error(out, 429,
                       "this agent stores no more tasks: clients stored %d (%llu bytes) since "
                       "it started, and this one has %llu bytes; the limits are --max-tasks %d "
                       "and --max-task-bytes %llu. Tasks it holds can still be used",
                       a->tasks_stored, (unsigned long long)a->task_bytes,
                       (unsigned long long)bytes, a->cfg.max_tasks,
                       (unsigned long long)a->cfg.max_task_bytes);
        return -1;
    }
    sg_err e;
    int rc = sg_pool_bundle_store(a->cfg.cache_dir, task, files, dir, n, &e);
    if (rc == -1) {
        char msg[sizeof e.msg];
        hide_cache_path(a->cfg.cache_dir, e.msg, msg, sizeof msg);
        sg_agent_error(out, 400, "job request: %s", msg);
        return -1;
    }
    if (rc < 0) {
        sg_error("agent", "cannot store a task sent by a client: %s", e.msg);
        sg_agent_error(out, 500,
                       "the agent cannot store the task in its cache folder (its log says why)");
        return -1;
    }
    if (rc == 1) {
        a->tasks_stored++;
        a->task_bytes += bytes;
    }
    a->st.tasks_received++;
    return 0;
}

/* A job request's fields, as read by read_job_request. */
typedef struct job_request {
    const char *id, *client, *kind, *task, *name;
    int64_t pin;
    json_t *files;
    const json_t *cand;
    sg_pool_role k;
    sg_prof_opts po;
} job_request;

/* Read and check b's fields into r: 0, or -1 after a 400 reply into out. */
static int read_job_request(const sg_agent *a, json_t *b, job_request *r, sg_agent_reply *out) {
    sg_err e;
    const char *w = "job request";
    *r = (job_request){.client = "", .name = "candidate", .pin = -1, .k = SG_POOL_VALIDATE};
    if (sg_json_get_str(b, "id", 0, &r->id, w, &e) < 0 ||
        sg_json_get_str(b, "client", 0, &r->client, w, &e) < 0 ||
        sg_json_get_str(b, "kind", 1, &r->kind, w, &e) < 0 ||
        sg_json_get_str(b, "task", 1, &r->task, w, &e) < 0 ||
        sg_json_get_str(b, "name", 0, &r->name, w, &e) < 0 ||
        sg_json_get_int(b, "slot", 0, &r->pin, w, &e) < 0 ||
        sg_json_get_obj(b, "task_files", 0, &r->files, w, &e) < 0) {
        sg_agent_error(out, 400, "%s", e.msg);
        return -1;
    }
    r->cand = json_object_get(b, "candidate");
    if (sg_pool_role_parse(r->kind, &r->k) < 0) {
        sg_agent_error(out, 400, "job request: \"kind\" '%.40s' is not a job kind (%s)", r->kind,
                       SG_POOL_ROLE_NAMES);
        return -1;
    }
    if (r->id && !id_ok(r->id)) {
        sg_agent_error(out, 400, "job request: \"id\" must be 1..64 of [A-Za-z0-9._:-]");
        return -1;
    }
    if (r->client[0] && !id_ok(r->client)) {
        sg_agent_error(out, 400, "job request: \"client\" must be 1..64 of [A-Za-z0-9._:-]");
        return -1;
    }
    if (!hash_ok(r->task)) {
        sg_agent_error(out, 400,
                       "job request: \"task\" must be the task's SHA-256 (64 hex digits)");
        return -1;
    }
    if (json_object_get(b, "slot") && (r->pin < 0 || r->pin >= a->n)) {
        sg_agent_error(out, 400,
                       "job request: \"slot\" %lld: this agent has slots 0..%d (leave "
                       "\"slot\" out to let the agent choose)",
                       (long long)r->pin, a->n - 1);
        return -1;
    }
    if (r->cand && !json_is_string(r->cand) && !json_is_null(r->cand)) {
        sg_agent_error(out, 400, "job request: \"candidate\" must be source text or null");
        return -1;
    }
    if (sg_pool_prof_opts_from_json(json_object_get(b, "prof"), &r->po, &e) < 0) {
        sg_agent_error(out, 400, "job request: %s", e.msg);
        return -1;
    }
    return 0;
}

/* A new queued job for request r, its task in dir. */
static ajob *queue_job(sg_agent *a, const job_request *r, const char *dir) {
    ajob *j = sg_xcalloc(1, sizeof *j);
    if (r->id)
        snprintf(j->id, sizeof j->id, "%s", r->id);
    else
        snprintf(j->id, sizeof j->id, "j%" PRIu64, ++a->auto_id);
    snprintf(j->client, sizeof j->client, "%s", r->client);
    snprintf(j->name, sizeof j->name, "%s", r->name);
    snprintf(j->task_dir, sizeof j->task_dir, "%s", dir);
    if (json_is_string(r->cand)) {
        j->len = json_string_length(r->cand);
        j->candidate = sg_xmalloc(j->len + 1);
        memcpy(j->candidate, json_string_value(r->cand), j->len + 1);
    }
    j->pin = (int)r->pin;
    j->slot = -1;
    j->kind = r->k;
    j->prof = r->po;
    j->state = QUEUED;
    j->seq = ++a->next_seq;
    j->queued_ns = sg_loop_now(a->loop);
    j->next = a->jobs;
    a->jobs = j;
    a->queued++;
    a->st.submitted++;
    return j;
}

static void submit(sg_agent *a, const sg_agent_request *rq, sg_agent_reply *out) {
    if (a->draining) {
        sg_agent_error(out, 503, "the agent is shutting down: it takes no new jobs");
        return;
    }
    sg_err e;
    json_t *b = sg_json_parse(rq->body ? rq->body : "", rq->len, "job request", &e);
    if (!b || !json_is_object(b)) {
        sg_agent_error(out, 400, "%s", b ? "job request: expected a JSON object" : e.msg);
        json_decref(b);
        return;
    }
    job_request r;
    if (read_job_request(a, b, &r, out) < 0) goto done;
    if (r.id && find_job(a, r.id) && find_job(a, r.id)->state != ENDED) {
        sg_agent_error(out, 409, "job '%s' is already queued or running here", r.id);
        goto done;
    }
    if (a->queued + a->running >= a->cfg.max_jobs) {
        a->st.rejected_full++;
        sg_agent_error(out, 429,
                       "too many jobs in flight: %d queued or running, the limit is %d "
                       "(--max-jobs); retry when some have ended",
                       a->queued + a->running, a->cfg.max_jobs);
        goto done;
    }
    char dir[4200];
    if (take_task(a, r.task, r.files, dir, sizeof dir, out) < 0) goto done;
    ajob *j = queue_job(a, &r, dir);
    schedule_dispatch(a);
    reply_json(
        out, 202,
        json_pack("{s:s,s:s,s:I}", "job", j->id, "state", "queued", "seq", (json_int_t)j->seq));
done:
    json_decref(b);
}

static json_t *job_json(const sg_agent *a, const ajob *j) {
    static const char *const names[] = {"queued", "running", "ended"};
    json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:i}", "job", j->id, "client", j->client, "kind",
                          sg_pool_role_name(j->kind), "state", names[j->state], "pin", j->pin);
    if (j->slot >= 0) json_object_set_new(o, "slot_name", json_string(a->s[j->slot].desc.name));
    if (j->result) json_object_set_new(o, "result", json_incref(j->result));
    return o;
}

static void cancel(sg_agent *a, ajob *j, sg_agent_reply *out) {
    if (j->state == QUEUED) {
        end_job(a, j, SG_POOL_DROPPED, simple_result("dropped", "cancelled before it ran"));
    } else if (j->state == RUNNING) {
        sg_agent_slot *s = &a->s[j->slot];
        sg_pool_local_ops.kill(a->local[s->local], s->index);
        end_job(a, j, SG_POOL_KILLED,
                simple_result("killed", "cancelled while running; the worker was killed"));
    }
    reply_json(out, 200, job_json(a, j));
}

static void events(sg_agent *a, const sg_agent_request *rq, sg_agent_reply *out) {
    const char *after_s = rq->arg(rq->ctx, "after"), *client = rq->arg(rq->ctx, "client");
    const char *wait_s = rq->arg(rq->ctx, "wait");
    char *end = NULL;
    errno = 0;
    unsigned long long after = after_s ? strtoull(after_s, &end, 10) : 0;
    if (after_s && (!isdigit((unsigned char)after_s[0]) || *end || errno)) {
        sg_agent_error(out, 400,
                       "events: ?after=%.40s is not an event number (0 or a later event's "
                       "\"seq\")",
                       after_s);
        return;
    }
    double wait = 0;
    if (wait_s) {
        end = NULL;
        wait = strtod(wait_s, &end);
        if (!isdigit((unsigned char)wait_s[0]) || *end || !(wait >= 0 && wait <= 300)) {
            sg_agent_error(out, 400, "events: ?wait=%.40s is not a number of seconds in 0..300",
                           wait_s);
            return;
        }
    }
    if (a->cfg.max_poll_wait_s > 0 && wait > a->cfg.max_poll_wait_s) wait = a->cfg.max_poll_wait_s;
    uint64_t last = a->ev_next - 1, first = a->ev_next > RING ? a->ev_next - RING : 1;
    json_t *list = json_array();
    uint64_t next = after > last ? last : after;
    for (uint64_t s = after + 1 > first ? after + 1 : first; s <= last; s++) {
        event *e = &a->ring[s % RING];
        next = s;
        if (client && *client && strcmp(client, e->client)) continue;
        json_array_append(list, e->ev);
        if (json_array_size(list) >= MAX_EVENTS_PER_POLL) break;
    }
    if (json_array_size(list) == 0 && wait > 0 && !rq->expired && after <= last && next == last) {
        json_decref(list);
        out->suspend_s = wait;
        return;
    }
    char inst[17];
    snprintf(inst, sizeof inst, "%016" PRIx64, a->instance);
    reply_json(out, 200,
               json_pack("{s:s,s:I,s:b,s:o}", "instance", inst, "next", (json_int_t)next, "gap",
                         after + 1 < first && after < last, "events", list));
}

static void set_role(sg_agent *a, int si, const sg_agent_request *rq, sg_agent_reply *out) {
    sg_err e;
    json_t *b = sg_json_parse(rq->body ? rq->body : "", rq->len, "role request", &e);
    const char *role = NULL;
    if (!b || sg_json_get_str(b, "role", 1, &role, "role request", &e) < 0) {
        sg_agent_error(out, 400, "%s", e.msg);
    } else if (sg_pool_role_parse(role, &a->s[si].role) < 0) {
        sg_agent_error(out, 400, "role request: \"role\" '%.40s' is not a role (%s)", role,
                       SG_POOL_ROLE_NAMES);
    } else {
        reply_json(
            out, 200,
            json_pack("{s:i,s:s,s:s}", "slot", si, "slot_name", a->s[si].desc.name, "role", role));
        schedule_dispatch(a);
    }
    json_decref(b);
}

void sg_agent_handle(sg_agent *a, const sg_agent_request *rq, sg_agent_reply *out) {
    const char *m = rq->method, *p = rq->path;
    int get = !strcmp(m, "GET"), post = !strcmp(m, "POST");
    out->status = 200;
    out->ctype = NULL;
    out->suspend_s = 0;
    if (!strcmp(p, "/metrics") && get) {
        out->ctype = "text/plain; version=0.0.4";
        sg_buf_clear(&out->body);
        sg_agent_metrics(a, &out->body);
    } else if (!strcmp(p, "/v1/status") && get) {
        reply_json(out, 200, sg_agent_status(a));
    } else if (!strcmp(p, "/v1/jobs") && post) {
        submit(a, rq, out);
    } else if (!strcmp(p, "/v1/events") && get) {
        events(a, rq, out);
    } else if (!strncmp(p, "/v1/jobs/", 9)) {
        char id[80];
        snprintf(id, sizeof id, "%s", p + 9);
        char *slash = strchr(id, '/');
        int is_cancel = slash && !strcmp(slash, "/cancel");
        if (slash) *slash = 0;
        ajob *j = id_ok(id) && (!slash || is_cancel) ? find_job(a, id) : NULL;
        if (!j)
            sg_agent_error(out, 404, "no job '%.64s' here (ended jobs are kept for a while)", id);
        else if ((is_cancel && post) || (!slash && !strcmp(m, "DELETE")))
            cancel(a, j, out);
        else if (!slash && get)
            reply_json(out, 200, job_json(a, j));
        else
            sg_agent_error(out, 405, "%s %s: use GET, DELETE, or POST .../cancel", m, p);
    } else if (!strncmp(p, "/v1/slots/", 10)) {
        char *end = NULL;
        long si = strtol(p + 10, &end, 10);
        if (!isdigit((unsigned char)p[10]) || strcmp(end, "/role") || si < 0 || si >= a->n)
            sg_agent_error(out, 404, "%s: slots are /v1/slots/0..%d/role", p, a->n - 1);
        else if (strcmp(m, "PUT") && !post)
            sg_agent_error(out, 405, "%s %s: use PUT with {\"role\": ...}", m, p);
        else
            set_role(a, (int)si, rq, out);
    } else if (!strcmp(p, "/metrics") || !strcmp(p, "/v1/status") || !strcmp(p, "/v1/jobs") ||
               !strcmp(p, "/v1/events")) {
        sg_agent_error(out, 405, "%s does not take %s", p, m);
    } else {
        sg_agent_error(out, 404,
                       "no such endpoint: %.200s (see docs/agent.md: /v1/status, /v1/jobs, "
                       "/v1/events, /v1/slots/N/role, /metrics)",
                       p);
    }
}
