/* The node agent's kvstore: started on the agent's loop, its budget moved around the
 * jobs with pool.h's policy, its numbers in /metrics and the jobs' events (agent_kv.h). */
#include "pool/agent_kv.h"

#include "common/log.h"
#include "common/net.h"
#include "kvstore/kvstore.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TRACKED 4096
#define FLUSH_ESTIMATE ((uint64_t)64 << 20) /* profile jobs: twice a 32 MiB last-level cache */

typedef struct tracked {
    uint64_t job, need;
} tracked;

struct sg_agent_kv {
    sg_kv_server *srv;
    sg_pool_kv_budget budget;
    sg_dev_lang lang;
    int device;
    char *password;
    char describe[512];
    tracked *jobs; /* jobs counted against the budget, running now */
    int njobs;
};

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
    sg_agent_kv *k = sg_xcalloc(1, sizeof *k);
    k->lang = cfg->lang;
    k->device = cfg->device;
    k->jobs = sg_xcalloc(MAX_TRACKED, sizeof *k->jobs);
    if (cfg->password_file &&
        sg_kv_password_file("--kv-requirepass-file", cfg->password_file, &k->password, err) < 0)
        goto fail;
    char backend[32];
    if (cfg->lang == SG_DEV_CUDA)
        snprintf(backend, sizeof backend, "cuda:%d", cfg->device);
    else
        snprintf(backend, sizeof backend, "host");
    sg_kv_config kc = {.listen = cfg->listen,
                       .memory = cfg->is_auto ? 0 : cfg->size,
                       .backend = backend,
                       .password = k->password,
                       .io_threads = 1,
                       .maxclients = 1000,
                       .hash_seed = (uint64_t)(uintptr_t)k * 0x9E3779B97F4A7C15ull};
    if (sg_kv_server_start(&kc, &k->srv, err) < 0) {
        sg_err_prefix(err, "--kv-memory/--kv-listen");
        goto fail;
    }
    if (sg_kv_server_attach(k->srv, loop, err) < 0) goto fail;
    sg_kv_memory m;
    sg_kv_server_memory(k->srv, &m);
    /* The region is the backend's (auto: its rule); the policy shares what was free. */
    sg_pool_kv_opts po = {.size = m.capacity,
                          .mem = cfg->lang == SG_DEV_CUDA ? SG_POOL_KV_GPU : SG_POOL_KV_HOST,
                          .free_bytes = m.free_at_start};
    if (sg_pool_kv_budget_init(&k->budget, &po, err) < 0) goto fail;
    snprintf(k->describe, sizeof k->describe,
             "kvstore on %s, budget %" PRIu64 " MiB shared with "
             "jobs in %" PRIu64 " MiB",
             sg_kv_server_describe(k->srv), k->budget.budget >> 20, k->budget.shared >> 20);
    *out = k;
    return 0;
fail:
    sg_agent_kv_free(k);
    return -1;
}

const char *sg_agent_kv_describe(const sg_agent_kv *k) { return k->describe; }

/* Jobs on this device use the kvstore's memory; on OpenCL (PoCL: the CPU) every device's. */
static int counts(const sg_agent_kv *k, int device) {
    return k->lang != SG_DEV_CUDA || device == k->device;
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

static void apply(sg_agent_kv *k, const sg_pool_kv_change *ch, int moved, json_t *ev) {
    sg_kv_memory before, after;
    sg_kv_server_memory(k->srv, &before);
    if (moved) {
        sg_err err;
        if (sg_kv_server_set_maxmemory(k->srv, ch->to, &err) < 0)
            sg_warn("pool", "kvstore budget %" PRIu64 " bytes: %s", ch->to, err.msg);
    }
    sg_kv_server_memory(k->srv, &after);
    json_t *o =
        json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "need", (json_int_t)ch->need, "budget_from",
                  (json_int_t)ch->from, "budget_to", (json_int_t)after.limit, "deficit",
                  (json_int_t)ch->deficit, "evicted", (json_int_t)(after.evicted - before.evicted),
                  "used", (json_int_t)after.used);
    if (ch->uncovered) json_object_set_new(o, "uncovered", json_integer((json_int_t)ch->uncovered));
    json_object_set_new(ev, "kv", o);
}

static void on_start(void *arg, int device, uint64_t job, const sg_pool_work *w, json_t *ev) {
    sg_agent_kv *k = arg;
    if (!counts(k, device) || k->njobs == MAX_TRACKED) return;
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
    (void)w, (void)device;
    sg_agent_kv *k = arg;
    for (int i = 0; i < k->njobs; i++) {
        if (k->jobs[i].job != job) continue;
        uint64_t need = k->jobs[i].need;
        k->jobs[i] = k->jobs[--k->njobs];
        sg_pool_kv_change ch;
        int moved = sg_pool_kv_job_end(&k->budget, need, &ch);
        apply(k, &ch, moved, ev);
        return;
    }
}

static void metric(sg_buf *b, const char *name, const char *type, const char *help, uint64_t v) {
    sg_buf_printf(b,
                  "# HELP specgen_kv_%s %s\n# TYPE specgen_kv_%s %s\nspecgen_kv_%s %" PRIu64 "\n",
                  name, help, name, type, name, v);
}

static void on_metrics(void *arg, sg_buf *b) {
    sg_agent_kv *k = arg;
    sg_kv_memory m;
    sg_kv_server_memory(k->srv, &m);
    metric(b, "used_bytes", "gauge", "Region bytes the kvstore's values use.", m.used);
    metric(b, "budget_bytes", "gauge", "The kvstore's budget (maxmemory) now.", m.limit);
    metric(b, "capacity_bytes", "gauge", "The kvstore's region: the most it may use.", m.capacity);
    metric(b, "jobs_need_bytes", "gauge", "Device memory the running jobs need.", k->budget.need);
    metric(b, "keys", "gauge", "Keys stored.", m.keys);
    metric(b, "clients", "gauge", "Clients connected.", m.connected);
    metric(b, "hits_total", "counter", "Lookups that found their key.", m.hits);
    metric(b, "misses_total", "counter", "Lookups that missed.", m.misses);
    metric(b, "evictions_total", "counter", "Keys evicted (for room, or by a lowered budget).",
           m.evicted);
}

sg_agent_hooks sg_agent_kv_hooks(sg_agent_kv *k) {
    return (sg_agent_hooks){
        .arg = k, .job_starting = on_start, .job_ended = on_end, .metrics = on_metrics};
}

void sg_agent_kv_free(sg_agent_kv *k) {
    if (!k) return;
    sg_kv_server_free(k->srv);
    free(k->password);
    free(k->jobs);
    free(k);
}
