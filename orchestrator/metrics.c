/* optimize's and campaign's /metrics (metrics.h): counters fed by the tasks' events, the
 * pool's stats read at each scrape, served by the pool agent's HTTP layer. */
#include "orchestrator/metrics.h"

#include "common/net.h"
#include "common/prom.h"
#include "pool/agent.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A candidate sent to validation, waiting for its verdict (the feedback latency). */
typedef struct pending {
    int candidate;
    double t_ms;
} pending;

typedef struct mtask {
    char *name;
    int started, ended;
    double best;
    pending *wait;
    int nwait, capwait;
} mtask;

/* A label value and its count (verdicts, task ends): a short list, looked up by name. */
typedef struct tally {
    char *key;
    uint64_t n;
} tally;

typedef struct tallies {
    tally *v;
    int n;
} tallies;

struct sg_metrics {
    char *command;
    int ntasks_declared;
    mtask *t;
    int nt;
    tallies verdicts, ends;
    tallies admission; /* campaign admission's decisions, by reason */
    int admit_seen, admit_limit, admit_active, admit_paused;
    uint64_t iterations, forks, forks_failed, new_bests;
    uint64_t tokens[2]; /* reasoning, fork */
    sg_prom_hist feedback, first_token[2];
    const sg_pool *pool;
    sg_agent_http *http;
};

static const double feedback_le[] = {0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};
static const double first_token_le[] = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};
#define NLE(a) ((int)(sizeof a / sizeof a[0]))

sg_metrics *sg_metrics_new(const char *command) {
    sg_metrics *m = sg_xcalloc(1, sizeof *m);
    m->command = sg_xstrdup(command);
    sg_prom_hist_init(&m->feedback, feedback_le, NLE(feedback_le));
    for (int k = 0; k < 2; k++)
        sg_prom_hist_init(&m->first_token[k], first_token_le, NLE(first_token_le));
    return m;
}

static void tallies_free(tallies *t) {
    for (int i = 0; i < t->n; i++) free(t->v[i].key);
    free(t->v);
}

void sg_metrics_free(sg_metrics *m) {
    if (!m) return;
    sg_agent_http_stop(m->http);
    for (int i = 0; i < m->nt; i++) {
        free(m->t[i].name);
        free(m->t[i].wait);
    }
    free(m->t);
    tallies_free(&m->verdicts);
    tallies_free(&m->ends);
    tallies_free(&m->admission);
    free(m->command);
    free(m);
}

void sg_metrics_set_tasks(sg_metrics *m, int tasks) {
    if (m) m->ntasks_declared = tasks;
}

void sg_metrics_set_pool(sg_metrics *m, const sg_pool *pool) {
    if (m) m->pool = pool;
}

static void tally_add(tallies *t, const char *key) {
    if (!key || !*key) key = "unknown";
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->v[i].key, key)) {
            t->v[i].n++;
            return;
        }
    t->v = sg_xrealloc(t->v, (size_t)(t->n + 1) * sizeof *t->v);
    t->v[t->n++] = (tally){sg_xstrdup(key), 1};
}

static mtask *task_of(sg_metrics *m, int i) {
    if (i < 0) return NULL;
    if (i >= m->nt) {
        m->t = sg_xrealloc(m->t, (size_t)(i + 1) * sizeof *m->t);
        memset(m->t + m->nt, 0, (size_t)(i + 1 - m->nt) * sizeof *m->t);
        m->nt = i + 1;
    }
    return &m->t[i];
}

static const char *str(const json_t *ev, const char *k) {
    return json_string_value(json_object_get(ev, k));
}

static double num(const json_t *ev, const char *k) {
    return json_number_value(json_object_get(ev, k));
}

/* A submitted candidate waits for its verdict; its job_done ends the wait. */
static void wait_start(mtask *t, int candidate, double t_ms) {
    if (t->nwait == t->capwait) {
        t->capwait = t->capwait ? 2 * t->capwait : 16;
        t->wait = sg_xrealloc(t->wait, (size_t)t->capwait * sizeof *t->wait);
    }
    t->wait[t->nwait++] = (pending){candidate, t_ms};
}

static int wait_end(mtask *t, int candidate, double t_ms, double *latency_s) {
    for (int i = 0; i < t->nwait; i++)
        if (t->wait[i].candidate == candidate) {
            *latency_s = (t_ms - t->wait[i].t_ms) / 1e3;
            t->wait[i] = t->wait[--t->nwait];
            return 1;
        }
    return 0;
}

static void on_candidate(sg_metrics *m, mtask *t, const json_t *ev) {
    const char *status = str(ev, "status");
    int cand = (int)num(ev, "candidate");
    if (status && !strcmp(status, "submitted"))
        wait_start(t, cand, num(ev, "t_ms"));
    else
        tally_add(&m->verdicts, status); /* duplicate, no_kernel: never validated */
}

static void on_job_done(sg_metrics *m, mtask *t, const json_t *ev) {
    const char *verdict = str(ev, "verdict");
    tally_add(&m->verdicts, verdict);
    double lat;
    int cancelled = verdict && (!strcmp(verdict, "dropped") || !strcmp(verdict, "killed"));
    if (wait_end(t, (int)num(ev, "candidate"), num(ev, "t_ms"), &lat) && !cancelled && lat >= 0)
        sg_prom_hist_observe(&m->feedback, lat);
}

static void on_generation(sg_metrics *m, const json_t *ev) {
    const char *kind = str(ev, "kind");
    int k = kind && !strcmp(kind, "fork");
    m->tokens[k] += (uint64_t)num(ev, "reasoning_tokens") + (uint64_t)num(ev, "content_tokens");
    json_t *ft = json_object_get(ev, "first_token_ms");
    if (ft) sg_prom_hist_observe(&m->first_token[k], json_number_value(ft) / 1e3);
}

void sg_metrics_event(sg_metrics *m, int task, const json_t *ev) {
    if (!m || !ev) return;
    const char *name = str(ev, "ev");
    if (name && !strcmp(name, "admission")) { /* the campaign's, not a task's */
        tally_add(&m->admission, str(ev, "reason"));
        m->admit_seen = 1;
        m->admit_limit = (int)num(ev, "limit");
        m->admit_active = (int)num(ev, "active");
        m->admit_paused = (int)num(ev, "paused");
        return;
    }
    mtask *t = task_of(m, task);
    if (!t || !name) return;
    if (!strcmp(name, "task_start")) {
        t->started = 1;
        free(t->name);
        t->name = sg_xstrdup(str(ev, "task") ? str(ev, "task") : "?");
    } else if (!strcmp(name, "task_end")) {
        t->ended = 1;
        tally_add(&m->ends, str(ev, "reason"));
        t->nwait = 0;
    } else if (!strcmp(name, "iteration_start")) {
        m->iterations++;
    } else if (!strcmp(name, "candidate")) {
        on_candidate(m, t, ev);
    } else if (!strcmp(name, "job_done")) {
        on_job_done(m, t, ev);
    } else if (!strcmp(name, "job_error")) {
        tally_add(&m->verdicts, "job_error");
    } else if (!strcmp(name, "fork")) {
        m->forks++;
    } else if (!strcmp(name, "fork_failed")) {
        m->forks_failed++;
    } else if (!strcmp(name, "new_best")) {
        m->new_bests++;
        if (num(ev, "speedup") > t->best) t->best = num(ev, "speedup");
    } else if (!strcmp(name, "generation_done")) {
        on_generation(m, ev);
    }
}

static void counter(sg_buf *b, const char *name, const char *help, uint64_t v) {
    sg_prom_head(b, name, "counter", help);
    sg_buf_printf(b, "%s %" PRIu64 "\n", name, v);
}

static void write_tallies(sg_buf *b, const char *name, const char *label, const tallies *t) {
    for (int i = 0; i < t->n; i++) {
        sg_buf_printf(b, "%s{%s=\"", name, label);
        sg_prom_label(b, t->v[i].key);
        sg_buf_printf(b, "\"} %" PRIu64 "\n", t->v[i].n);
    }
}

static void write_tasks(const sg_metrics *m, sg_buf *b) {
    int started = 0, ended = 0;
    for (int i = 0; i < m->nt; i++) {
        started += m->t[i].started;
        ended += m->t[i].ended;
    }
    int queued = m->ntasks_declared > started ? m->ntasks_declared - started : 0;
    sg_prom_head(b, "specgen_tasks", "gauge", "tasks of the run now, by state");
    sg_buf_printf(b,
                  "specgen_tasks{state=\"queued\"} %d\nspecgen_tasks{state=\"running\"} %d\n"
                  "specgen_tasks{state=\"ended\"} %d\n",
                  queued, started - ended, ended);
    sg_prom_head(b, "specgen_tasks_ended_total", "counter", "tasks ended, by why they ended");
    write_tallies(b, "specgen_tasks_ended_total", "reason", &m->ends);
    sg_prom_head(b, "specgen_task_best_speedup", "gauge",
                 "each started task's best speedup over its baseline so far (0: none yet)");
    for (int i = 0; i < m->nt; i++) {
        if (!m->t[i].started) continue;
        sg_buf_append_str(b, "specgen_task_best_speedup{task=\"");
        sg_prom_label(b, m->t[i].name);
        sg_buf_printf(b, "\"} %g\n", m->t[i].best);
    }
}

static void write_pool(const sg_metrics *m, sg_buf *b) {
    if (!m->pool) return;
    sg_pool_stats st;
    sg_pool_stats_get(m->pool, &st);
    sg_prom_head(b, "specgen_pool_utilisation_ratio", "gauge",
                 "busy share of the pool's slot time since the start (all slots, or one role's)");
    sg_buf_printf(b, "specgen_pool_utilisation_ratio{role=\"all\"} %.6f\n", st.utilisation);
    for (int r = 0; r < SG_POOL_NROLES; r++)
        sg_buf_printf(b, "specgen_pool_utilisation_ratio{role=\"%s\"} %.6f\n",
                      sg_pool_role_name((sg_pool_role)r), st.role[r].utilisation);
    sg_prom_head(b, "specgen_pool_busy_seconds_total", "counter",
                 "slot time spent running jobs, by role (rate() over it: busy slots)");
    for (int r = 0; r < SG_POOL_NROLES; r++)
        sg_buf_printf(b, "specgen_pool_busy_seconds_total{role=\"%s\"} %.6f\n",
                      sg_pool_role_name((sg_pool_role)r), st.role[r].busy_s);
    sg_prom_head(b, "specgen_pool_slots", "gauge", "slots now, by role");
    for (int r = 0; r < SG_POOL_NROLES; r++)
        sg_buf_printf(b, "specgen_pool_slots{role=\"%s\"} %d\n", sg_pool_role_name((sg_pool_role)r),
                      st.role[r].slots);
    sg_prom_head(b, "specgen_pool_jobs", "gauge", "pool jobs now, by state");
    sg_buf_printf(
        b, "specgen_pool_jobs{state=\"queued\"} %d\nspecgen_pool_jobs{state=\"running\"} %d\n",
        st.queued, st.running);
}

void sg_metrics_write(const sg_metrics *m, sg_buf *b) {
    sg_prom_build_info(b, m->command);
    write_tasks(m, b);
    counter(b, "specgen_iterations_total", "iterations started (one reasoning round each)",
            m->iterations);
    sg_prom_head(b, "specgen_candidates_total", "counter",
                 "candidate kernels by verdict (pass, mismatch, compile_error, ...; duplicate and "
                 "no_kernel were never run; dropped and killed: their iteration ended first)");
    write_tallies(b, "specgen_candidates_total", "verdict", &m->verdicts);
    counter(b, "specgen_forks_total", "forks started from the reasoning", m->forks);
    counter(b, "specgen_forks_failed_total", "forks that ended with an error", m->forks_failed);
    counter(b, "specgen_new_best_total", "times a task's best kernel improved", m->new_bests);
    sg_prom_head(b, "specgen_tokens_total", "counter",
                 "tokens generated by finished generations, by kind (reasoning streams, forks)");
    sg_buf_printf(b,
                  "specgen_tokens_total{kind=\"reasoning\"} %" PRIu64
                  "\nspecgen_tokens_total{kind=\"fork\"} %" PRIu64 "\n",
                  m->tokens[0], m->tokens[1]);
    sg_prom_head(
        b, "specgen_feedback_latency_seconds", "histogram",
        "from a candidate's extraction to its verdict (validated, and timed when correct)");
    sg_prom_hist_write(b, "specgen_feedback_latency_seconds", "", &m->feedback);
    sg_prom_head(b, "specgen_llm_first_token_seconds", "histogram",
                 "from a generation's request to its first token, by kind");
    sg_prom_hist_write(b, "specgen_llm_first_token_seconds", "kind=\"reasoning\"",
                       &m->first_token[0]);
    sg_prom_hist_write(b, "specgen_llm_first_token_seconds", "kind=\"fork\"", &m->first_token[1]);
    write_pool(m, b);
    if (!m->admit_seen) return;
    sg_prom_head(b, "specgen_admission_tasks", "gauge",
                 "campaign admission: the limit on tasks running iterations at once, the tasks "
                 "running one, and those waiting between iterations");
    sg_buf_printf(b,
                  "specgen_admission_tasks{what=\"limit\"} %d\nspecgen_admission_tasks{what="
                  "\"active\"} %d\nspecgen_admission_tasks{what=\"paused\"} %d\n",
                  m->admit_limit, m->admit_active, m->admit_paused);
    sg_prom_head(b, "specgen_admission_decisions_total", "counter",
                 "campaign admission's decisions (one per interval), by reason (grow, hold, "
                 "preemptions, queue, throughput, cache_full, no_demand, draining, fixed)");
    write_tallies(b, "specgen_admission_decisions_total", "reason", &m->admission);
}

static void handle(void *arg, const sg_agent_request *req, sg_agent_reply *out) {
    const sg_metrics *m = arg;
    size_t plen = strcspn(req->path, "?");
    if (plen != 8 || strncmp(req->path, "/metrics", 8)) {
        sg_agent_error(out, 404, "only /metrics is served here");
        return;
    }
    if (strcmp(req->method, "GET") && strcmp(req->method, "HEAD")) {
        sg_agent_error(out, 405, "/metrics takes GET");
        return;
    }
    out->status = 200;
    out->ctype = "text/plain; version=0.0.4; charset=utf-8";
    sg_metrics_write(m, &out->body);
}

int sg_metrics_listen(sg_metrics *m, sg_loop *loop, const char *addr, const char *token,
                      const char *token_opt, sg_err *err) {
    char host[256];
    int port;
    if (sg_net_parse_hostport(addr, host, sizeof host, &port, err) < 0)
        return sg_err_prefix(err, "--metrics-listen");
    sg_agent_http_config hc = {.host = host,
                               .port = port,
                               .token = token,
                               .max_body = 4096,
                               .request_timeout_ns = 10 * SG_SEC,
                               .max_conns = 64,
                               .max_conns_per_addr = 8,
                               .handle = handle,
                               .handle_arg = m,
                               .name = "metrics server",
                               .token_opt = token_opt};
    m->http = sg_agent_http_start(loop, NULL, &hc, err);
    return m->http ? 0 : sg_err_prefix(err, "--metrics-listen");
}

int sg_metrics_port(const sg_metrics *m) { return m && m->http ? sg_agent_http_port(m->http) : 0; }
