/* The node agent's kvstore: started on the agent's loop, its budget moved around the
 * jobs with pool.h's policy, its numbers in /metrics and the jobs' events (agent_kv.h). */
#include "pool/agent_kv.h"

#include "common/log.h"
#include "common/net.h"
#include "kvstore/kvstore.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TRACKED 4096
#define FLUSH_ESTIMATE ((uint64_t)64 << 20) /* profile jobs: twice a 32 MiB last-level cache */

typedef struct tracked {
    uint64_t job, need;
} tracked;

/* One kvstore: on one GPU (its jobs move its budget), or in host memory (PoCL: every
 * device's jobs share it). */
typedef struct store {
    sg_kv_server *srv;
    sg_pool_kv_budget budget;
    int device;     /* the CUDA device, or -1: host memory */
    char label[32]; /* "cuda:1" or "host": /metrics' device label */
    tracked *jobs;  /* jobs counted against its budget, running now */
    int njobs;
} store;

struct sg_agent_kv {
    store *st;
    int n;
    char *password;
    char describe[2048];
};

static int start_store(sg_loop *loop, const sg_agent_kv_config *cfg, sg_agent_kv *k, store *st,
                       const char *host, int port, int device, sg_err *err) {
    char listen[300], backend[32];
    snprintf(listen, sizeof listen, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
    st->device = device;
    st->jobs = sg_xcalloc(MAX_TRACKED, sizeof *st->jobs);
    if (device >= 0)
        snprintf(backend, sizeof backend, "cuda:%d", device);
    else
        snprintf(backend, sizeof backend, "host");
    snprintf(st->label, sizeof st->label, "%s", backend);
    sg_kv_config kc = {.listen = listen,
                       .memory = cfg->is_auto ? 0 : cfg->size,
                       .backend = backend,
                       .password = k->password,
                       .io_threads = 1,
                       .maxclients = 1000,
                       .hash_seed = (uint64_t)(uintptr_t)st * 0x9E3779B97F4A7C15ull};
    if (sg_kv_server_start(&kc, &st->srv, err) < 0)
        return sg_err_prefix(err, "--kv-memory/--kv-listen"), -1;
    if (sg_kv_server_attach(st->srv, loop, err) < 0) return -1;
    sg_kv_memory m;
    sg_kv_server_memory(st->srv, &m);
    /* The region is the backend's (auto: its rule); the policy shares what was free. */
    sg_pool_kv_opts po = {.size = m.capacity,
                          .mem = device >= 0 ? SG_POOL_KV_GPU : SG_POOL_KV_HOST,
                          .free_bytes = m.free_at_start};
    if (sg_pool_kv_budget_init(&st->budget, &po, err) < 0) return -1;
    size_t used = strlen(k->describe);
    snprintf(k->describe + used, sizeof k->describe - used,
             "%skvstore on %s, budget %" PRIu64 " MiB shared with jobs in %" PRIu64 " MiB",
             used ? "; " : "", sg_kv_server_describe(st->srv), st->budget.budget >> 20,
             st->budget.shared >> 20);
    return 0;
}

int sg_agent_kv_start(sg_loop *loop, const sg_agent_kv_config *cfg, sg_agent_kv **out,
                      sg_err *err) {
    char host[256];
    int port;
    if (sg_net_parse_hostport(cfg->listen, host, sizeof host, &port, err) < 0)
        return sg_err_prefix(err, "--kv-listen"), -1;
    if (!sg_net_is_loopback(host) && !cfg->password_file)
        return sg_errf(err,
                       "--kv-listen %s: refusing to serve the kvstore beyond loopback without "
                       "--kv-requirepass-file (anyone who can reach it could read and overwrite "
                       "the cache)",
                       cfg->listen);
    int n = cfg->lang == SG_DEV_CUDA ? cfg->ndevices : 1;
    if (n < 1) n = 1;
    if (port && port + n - 1 > 65535)
        return sg_errf(err, "--kv-listen %s: %d devices need ports %d..%d", cfg->listen, n, port,
                       port + n - 1);
    sg_agent_kv *k = sg_xcalloc(1, sizeof *k);
    k->st = sg_xcalloc((size_t)n, sizeof *k->st);
    if (cfg->password_file &&
        sg_kv_password_file("--kv-requirepass-file", cfg->password_file, &k->password, err) < 0)
        goto fail;
    for (int i = 0; i < n; i++) { /* device i at PORT + i (port 0: each its own free one) */
        k->n = i + 1;
        if (start_store(loop, cfg, k, &k->st[i], host, port ? port + i : 0,
                        cfg->lang == SG_DEV_CUDA ? cfg->devices[i] : -1, err) < 0)
            goto fail;
    }
    *out = k;
    return 0;
fail:
    sg_agent_kv_free(k);
    return -1;
}

const char *sg_agent_kv_describe(const sg_agent_kv *k) { return k->describe; }

/* The kvstore whose memory jobs on this device use: the GPU's own, or on OpenCL (PoCL: the
 * CPU) the one host store. NULL: none (a device without a kvstore). */
static store *store_for(sg_agent_kv *k, int device) {
    for (int i = 0; i < k->n; i++)
        if (k->st[i].device < 0 || k->st[i].device == device) return &k->st[i];
    return NULL;
}

static uint64_t job_need(const sg_pool_work *w, sg_err *err) {
    sg_val_task t;
    if (sg_val_task_load(w->task_dir, &t, err) < 0) return UINT64_MAX;
    sg_val_plan plan = {0};
    int have_plan =
        w->candidate && sg_val_plan_parse(w->candidate, &t, "candidate", &plan, err) == 0;
    uint64_t need = 0;
    int inputs = w->prof && w->prof->input_sets > 0 ? w->prof->input_sets : 3;
    int flush = w->kind == SG_POOL_PROFILE && (!w->prof || w->prof->flush_cache);
    int rc = sg_pool_job_memory(&t, w->kind, have_plan ? &plan : NULL, NULL, inputs,
                                flush ? FLUSH_ESTIMATE : 0, &need, err);
    if (have_plan) sg_val_plan_free(&plan);
    sg_val_task_free(&t);
    return rc < 0 ? UINT64_MAX : need;
}

static void apply(store *k, const sg_pool_kv_change *ch, int moved, json_t *ev) {
    sg_kv_memory before, after;
    sg_kv_server_memory(k->srv, &before);
    if (moved) {
        sg_err err;
        if (sg_kv_server_set_maxmemory(k->srv, ch->to, &err) < 0)
            sg_warn("pool", "kvstore %s budget %" PRIu64 " bytes: %s", k->label, ch->to, err.msg);
    }
    sg_kv_server_memory(k->srv, &after);
    json_t *o =
        json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "need", (json_int_t)ch->need, "budget_from",
                  (json_int_t)ch->from, "budget_to", (json_int_t)after.limit, "deficit",
                  (json_int_t)ch->deficit, "evicted", (json_int_t)(after.evicted - before.evicted),
                  "used", (json_int_t)after.used);
    if (ch->uncovered) json_object_set_new(o, "uncovered", json_integer((json_int_t)ch->uncovered));
    json_object_set_new(o, "device", json_string(k->label));
    json_object_set_new(ev, "kv", o);
}

static void on_start(void *arg, int device, uint64_t job, const sg_pool_work *w, json_t *ev) {
    store *k = store_for(arg, device);
    if (!k || k->njobs == MAX_TRACKED) return;
    sg_err err;
    uint64_t need = job_need(w, &err);
    if (need == UINT64_MAX) { /* the job will fail on its own, with this message */
        json_object_set_new(ev, "kv", json_pack("{s:s}", "error", err.msg));
        return;
    }
    k->jobs[k->njobs++] = (tracked){job, need};
    sg_pool_kv_change ch;
    int moved = sg_pool_kv_job_start(&k->budget, need, &ch);
    apply(k, &ch, moved, ev);
}

static void on_end(void *arg, int device, uint64_t job, const sg_pool_work *w, json_t *ev) {
    (void)w;
    store *k = store_for(arg, device);
    for (int i = 0; k && i < k->njobs; i++) {
        if (k->jobs[i].job != job) continue;
        uint64_t need = k->jobs[i].need;
        k->jobs[i] = k->jobs[--k->njobs];
        sg_pool_kv_change ch;
        int moved = sg_pool_kv_job_end(&k->budget, need, &ch);
        apply(k, &ch, moved, ev);
        return;
    }
}

/* One metric: its help and type once, then a line per kvstore, labelled by its device. */
static void metric(sg_buf *b, const sg_agent_kv *k, const char *name, const char *type,
                   const char *help, size_t field) {
    sg_buf_printf(b, "# HELP specgen_kv_%s %s\n# TYPE specgen_kv_%s %s\n", name, help, name, type);
    for (int i = 0; i < k->n; i++) {
        const store *s = &k->st[i];
        sg_kv_memory m;
        sg_kv_server_memory(s->srv, &m);
        uint64_t v =
            field == SIZE_MAX ? s->budget.need : *(const uint64_t *)((const char *)&m + field);
        sg_buf_printf(b, "specgen_kv_%s{device=\"%s\"} %" PRIu64 "\n", name, s->label, v);
    }
}

static void on_metrics(void *arg, sg_buf *b) {
    const sg_agent_kv *k = arg;
#define F(f) offsetof(sg_kv_memory, f)
    metric(b, k, "used_bytes", "gauge", "Region bytes the kvstore's values use.", F(used));
    metric(b, k, "budget_bytes", "gauge", "The kvstore's budget (maxmemory) now.", F(limit));
    metric(b, k, "capacity_bytes", "gauge", "The kvstore's region: the most it may use.",
           F(capacity));
    metric(b, k, "jobs_need_bytes", "gauge", "Device memory the running jobs need.", SIZE_MAX);
    metric(b, k, "keys", "gauge", "Keys stored.", F(keys));
    metric(b, k, "clients", "gauge", "Clients connected.", F(connected));
    metric(b, k, "hits_total", "counter", "Lookups that found their key.", F(hits));
    metric(b, k, "misses_total", "counter", "Lookups that missed.", F(misses));
    metric(b, k, "evictions_total", "counter", "Keys evicted (for room, or by a lowered budget).",
           F(evicted));
#undef F
}

sg_agent_hooks sg_agent_kv_hooks(sg_agent_kv *k) {
    return (sg_agent_hooks){
        .arg = k, .job_starting = on_start, .job_ended = on_end, .metrics = on_metrics};
}

void sg_agent_kv_free(sg_agent_kv *k) {
    if (!k) return;
    for (int i = 0; i < k->n; i++) {
        sg_kv_server_free(k->st[i].srv);
        free(k->st[i].jobs);
    }
    free(k->st);
    free(k->password);
    free(k);
}
