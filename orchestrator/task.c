/* task.c — one optimization task: baseline, iterations, reasoning streams, forks,
 * candidates, jobs, early stop, budgets. See task.h for the contract. */
#include "orchestrator/task.h"
#include "common/assert.h"
#include "common/buf.h"

#include "common/json.h"
#include "common/srcnorm.h"
#include "specgen/extract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A task's phases, in order. Every switch over a phase names each one and has no default,
 * so -Wswitch (in -Wall) flags a switch that forgets a phase added here. */
typedef enum task_phase {
    PHASE_NEW,      /* created, not started */
    PHASE_BASELINE, /* the baseline job runs */
    PHASE_RUNNING,  /* iterations */
    PHASE_STOPPING, /* no new work; waits for what runs to end */
    PHASE_DONE      /* finished hook called */
} task_phase;
enum { GEN_REASONING, GEN_FORK };

typedef struct gen_ctx {
    sg_task *task;
    int kind, iteration, index;
    int worker;  /* workers:N: its worker (0..N-1), else 0 */
    sg_gen *gen; /* NULL once done or aborted */
    sg_buf reasoning, content;
    uint64_t reasoning_tokens, content_chunks;
    int tokens_estimated; /* reasoning_tokens is the client's estimate, not the server's */
    sg_trigger_fire fire; /* forks: what started it */
    struct gen_ctx *prev, *next;
} gen_ctx;

typedef struct job_ctx {
    sg_task *task;
    int candidate, iteration;
    int worker; /* workers:N: the worker whose answer it is */
    int fork;   /* from a fork, written after reasoning_tokens of its reasoning */
    uint64_t reasoning_tokens;
    uint64_t hash; /* its normalized source: forgotten again when the job is cancelled */
    char *source;
} job_ctx;

/* workers:N: one worker's own loop (its round, feedback and best kernel). */
typedef struct worker {
    int round;       /* rounds started (its iteration number in the prompt) */
    int iteration;   /* the task-wide iteration id of its current round (jobs, events) */
    int gens, jobs;  /* its reasoning stream running (0/1) and its candidates not yet judged */
    int done;        /* its budget of rounds is spent */
    char **feedback; /* ring of the last cfg.feedback_last paragraphs */
    int nfeedback;
    char *best_kernel; /* NULL: the task's baseline */
    double best_speedup;
} worker;

struct sg_task {
    sg_loop *loop;
    sg_task_config cfg;
    sg_task_spec spec;
    sg_llm_port llm;
    sg_dev_port dev;
    sg_task_hooks hooks;
    sg_trigger *trigger;
    sg_task_stats st;
    task_phase phase; /* changed by set_phase only */
    gen_ctx *gens;    /* every generation still running */
    int iter_gens;    /* running generations of the current iteration */
    int jobs_pending;
    char *best_kernel;
    double best_at_iter_start;
    char **feedback; /* ring of the last cfg.feedback_last paragraphs */
    int nfeedback;
    uint64_t *hashes;
    size_t nhashes, caphashes;
    char *system, *user; /* the current iteration's messages */
    char *answer_prefix; /* with {lang} filled */
    uint64_t budget_timer;
    uint64_t tokens_done; /* tokens of finished generations */
    int finish_scheduled;
    int iter_cut;           /* this iteration was ended early */
    int reasoning_failures; /* consecutive reasoning streams that failed */
    worker *workers;        /* workers:N (cfg.policy.streams of them), else NULL */
    sg_crit workers_end;    /* why the last worker stopped */
    uint64_t probe_hash;    /* probe-exit:K: the iteration's last probe's kernel, */
    int probe_have;         /* when there was one */
};

/* ---- small helpers ---- */

/* "NAME:N" with N from lo to hi: 1 and *n, 0 when s is not NAME:..., -1 (err) when N is bad. */
static int parse_count(const char *s, const char *name, long long lo, long long hi,
                       const char *what, long long *n, sg_err *err) {
    size_t k = strlen(name);
    if (strncmp(s, name, k) || s[k] != ':') return 0;
    char *end;
    *n = s[k + 1] >= '0' && s[k + 1] <= '9' ? strtoll(s + k + 1, &end, 10) : -1;
    if (*n < lo || *n > hi || *end)
        return sg_errf(err, "'%s': %s:N needs N, %s, from %lld to %lld", s, name, what, lo, hi);
    return 1;
}

int sg_policy_parse(const char *s, sg_policy *p, sg_err *err) {
    *p = (sg_policy){.kind = SG_POLICY_SPECGEN, .streams = 1, .fork = 1};
    long long n = 0;
    int r;
    if (!strcmp(s, "specgen")) return 0;
    if (!strcmp(s, "sequential")) {
        p->kind = SG_POLICY_SEQUENTIAL, p->fork = 0;
        return 0;
    }
    if ((r = parse_count(s, "parallel", 1, 64, "the reasoning streams", &n, err)) != 0) {
        if (r > 0) p->kind = SG_POLICY_PARALLEL, p->streams = (int)n, p->fork = 0;
        return r > 0 ? 0 : -1;
    }
    if ((r = parse_count(s, "workers", 1, 64, "the workers", &n, err)) != 0) {
        if (r > 0) p->kind = SG_POLICY_WORKERS, p->streams = (int)n, p->fork = 0;
        return r > 0 ? 0 : -1;
    }
    if ((r = parse_count(s, "probe", 1, 1000000, "the reasoning tokens between forks", &n, err)) !=
        0) {
        if (r > 0) p->probe = (uint64_t)n;
        return r > 0 ? 0 : -1;
    }
    if ((r = parse_count(s, "probe-exit", 1, 1000000, "the reasoning tokens between probes", &n,
                         err)) != 0) {
        if (r > 0) p->kind = SG_POLICY_PROBE_EXIT, p->probe = (uint64_t)n;
        return r > 0 ? 0 : -1;
    }
    return sg_errf(err,
                   "'%s' is not a policy (specgen, sequential, parallel:N, probe:K, workers:N, "
                   "probe-exit:K)",
                   s);
}

const char *sg_policy_name(const sg_policy *p, char *buf, size_t n) {
    switch (p->kind) {
    case SG_POLICY_PARALLEL: snprintf(buf, n, "parallel:%d", p->streams); break;
    case SG_POLICY_WORKERS: snprintf(buf, n, "workers:%d", p->streams); break;
    case SG_POLICY_PROBE_EXIT:
        snprintf(buf, n, "probe-exit:%llu", (unsigned long long)p->probe);
        break;
    case SG_POLICY_SEQUENTIAL: snprintf(buf, n, "sequential"); break;
    case SG_POLICY_SPECGEN:
        if (p->probe)
            snprintf(buf, n, "probe:%llu", (unsigned long long)p->probe);
        else
            snprintf(buf, n, "specgen%s", p->fork ? "" : " (no forks)");
        break;
    }
    return buf;
}

int sg_task_prompts_load(const char *dir, sg_task_prompts *p, sg_err *err) {
    memset(p, 0, sizeof *p);
    char path[1024];
    snprintf(path, sizeof path, "%s/optimize.json", dir);
    json_t *o = sg_json_load_file(path, err);
    if (!o) return -1;
    const char *sys = NULL, *user = NULL, *fh = "";
    int rc = sg_json_get_str(o, "system", 1, &sys, path, err);
    if (!rc) rc = sg_json_get_str(o, "user", 1, &user, path, err);
    if (!rc) rc = sg_json_get_str(o, "feedback_header", 0, &fh, path, err);
    if (!rc) {
        p->system = sg_xstrdup(sys);
        p->user = sg_xstrdup(user);
        p->feedback_header = sg_xstrdup(fh);
    }
    json_decref(o);
    if (rc) return rc;
    snprintf(path, sizeof path, "%s/fork.json", dir);
    json_t *f = sg_json_load_file(path, err);
    if (!f) return sg_task_prompts_free(p), -1;
    const char *prefix = NULL;
    int64_t mt = 2048;
    double temp = 0.2, top_p = -1;
    rc = sg_json_get_str(f, "answer_prefix", 1, &prefix, path, err);
    if (!rc) rc = sg_json_get_int(f, "max_tokens", 0, &mt, path, err);
    if (!rc) rc = sg_json_get_num(f, "temperature", 0, &temp, path, err);
    if (!rc) rc = sg_json_get_num(f, "top_p", 0, &top_p, path, err);
    if (!rc && (temp < 0 || temp > 2))
        rc = sg_errf(err, "%s: field \"temperature\": must be 0..2, got %g", path, temp);
    if (!rc && top_p != -1 && !(top_p > 0 && top_p <= 1))
        rc =
            sg_errf(err, "%s: field \"top_p\": must be above 0 and at most 1, got %g", path, top_p);
    if (!rc && (mt < 16 || mt > 65536))
        rc = sg_errf(err, "%s: field \"max_tokens\": must be 16..65536, got %lld", path,
                     (long long)mt);
    if (!rc) {
        p->answer_prefix = sg_xstrdup(prefix);
        p->fork_max_tokens = mt;
        p->fork_temperature = temp;
        p->fork_top_p = top_p;
    }
    json_decref(f);
    if (rc) sg_task_prompts_free(p);
    return rc;
}

void sg_task_prompts_free(sg_task_prompts *p) {
    free(p->system);
    free(p->user);
    free(p->feedback_header);
    free(p->answer_prefix);
    memset(p, 0, sizeof *p);
}

static int64_t since_start(const sg_task *t) { return sg_loop_now(t->loop) - t->st.started_ns; }

/* Hand an event to the recorder: {"ev": name, "t_ms": ..., "iteration": ..., fields...}.
 * Only with a recorder: callers build the fields only then (RECORD, or hooks.record). */
static void record(sg_task *t, const char *ev, json_t *fields) {
    json_t *o = json_object();
    json_object_set_new(o, "ev", json_string(ev));
    json_object_set_new(o, "t_ms", json_real((double)since_start(t) / 1e6));
    json_object_set_new(o, "iteration", json_integer(t->st.iteration));
    if (fields) json_object_update(o, fields);
    t->hooks.record(t->hooks.arg, o);
    json_decref(o);
    json_decref(fields);
}

/* An event whose fields json_pack builds from the arguments, only when someone records. */
#define RECORD(t, ev, ...)                                                                         \
    do {                                                                                           \
        if ((t)->hooks.record) record(t, ev, json_pack(__VA_ARGS__));                              \
    } while (0)

/* Where a live reasoning token count came from (events name it). */
static const char *tokens_source(int estimated) { return estimated ? "estimate" : "server"; }

static void progress(sg_task *t) {
    t->st.tokens_total = t->tokens_done;
    for (gen_ctx *g = t->gens; g; g = g->next)
        t->st.tokens_total += g->reasoning_tokens + g->content_chunks;
    if (t->hooks.progress) t->hooks.progress(t->hooks.arg, &t->st);
}

static void ring_add(const sg_task *t, char **ring, int *n, const char *text) {
    int max = t->cfg.feedback_last > 0 ? t->cfg.feedback_last : 4;
    if (*n == max) {
        free(ring[0]);
        memmove(ring, ring + 1, (size_t)(max - 1) * sizeof *ring);
        (*n)--;
    }
    ring[(*n)++] = sg_xstrdup(text);
}

static void add_feedback(sg_task *t, const char *text) {
    ring_add(t, t->feedback, &t->nfeedback, text);
}

/* workers:N: a paragraph of feedback goes to the worker whose candidate it is. */
static void add_feedback_of(sg_task *t, int w, const char *text) {
    if (!t->workers) {
        add_feedback(t, text);
        return;
    }
    ring_add(t, t->workers[w].feedback, &t->workers[w].nfeedback, text);
}

static void stop_task(sg_task *t, sg_crit reason, const char *error);
static void start_iteration(sg_task *t);

/* ---- generations ---- */

/* The transitions a task may make (the arrows of task.h's life cycle): forward only, and
 * STOPPING is reachable before RUNNING (a cancel or the time budget during the baseline,
 * a cancel before the start). */
static int phase_may_follow(task_phase from, task_phase to) {
    switch (from) {
    case PHASE_NEW: return to == PHASE_BASELINE || to == PHASE_STOPPING;
    case PHASE_BASELINE: return to == PHASE_RUNNING || to == PHASE_STOPPING;
    case PHASE_RUNNING: return to == PHASE_STOPPING;
    case PHASE_STOPPING: return to == PHASE_DONE;
    case PHASE_DONE: return 0;
    }
    SG_UNREACHABLE("phase_may_follow: a phase out of range");
}

/* STOPPING or DONE: the task takes no new work. */
static int phase_ending(task_phase p) {
    switch (p) {
    case PHASE_NEW:
    case PHASE_BASELINE:
    case PHASE_RUNNING: return 0;
    case PHASE_STOPPING:
    case PHASE_DONE: return 1;
    }
    SG_UNREACHABLE("phase_ending: a phase out of range");
}

static void set_phase(sg_task *t, task_phase to) {
    SG_ASSERT(phase_may_follow(t->phase, to));
    t->phase = to;
}

static void gen_unlink(sg_task *t, gen_ctx *g) {
    if (g->prev)
        g->prev->next = g->next;
    else
        t->gens = g->next;
    if (g->next) g->next->prev = g->prev;
    if (g->iteration == t->st.iteration) t->iter_gens--;
    SG_ASSERT(t->iter_gens >= 0);
}

static void gen_free(gen_ctx *g) {
    sg_buf_free(&g->reasoning);
    sg_buf_free(&g->content);
    free(g);
}

static void abort_gens(sg_task *t, int only_iteration) {
    gen_ctx *g = t->gens;
    while (g) {
        gen_ctx *next = g->next;
        if (!only_iteration || g->iteration == only_iteration) {
            sg_gen_summary s;
            memset(&s, 0, sizeof s);
            t->llm.abort(t->llm.impl, g->gen, &s);
            g->gen = NULL;
            t->tokens_done += s.reasoning_tokens + s.content_tokens;
            if (g->kind == GEN_FORK) { /* cut short: says nothing about its rule */
                t->st.fork_tokens += s.content_tokens;
                sg_trigger_fork_aborted(t->trigger);
            }
            RECORD(t, "generation_aborted", "{s:s,s:i,s:I,s:I}", "kind",
                   g->kind == GEN_FORK ? "fork" : "reasoning", "index", g->index,
                   "reasoning_tokens", (json_int_t)s.reasoning_tokens, "content_tokens",
                   (json_int_t)s.content_tokens);
            if (t->workers && g->kind == GEN_REASONING) t->workers[g->worker].gens--;
            gen_unlink(t, g);
            gen_free(g);
        }
        g = next;
    }
}

/* ---- candidates and jobs ---- */

/* A cancelled candidate was never judged: when it comes back it must run, not count as a
 * duplicate. */
static void forget_hash(sg_task *t, uint64_t h) {
    for (size_t i = 0; i < t->nhashes; i++)
        if (t->hashes[i] == h) {
            t->hashes[i] = t->hashes[--t->nhashes];
            return;
        }
}

static int seen_before(sg_task *t, uint64_t h) {
    for (size_t i = 0; i < t->nhashes; i++)
        if (t->hashes[i] == h) return 1;
    if (t->nhashes == t->caphashes) {
        t->caphashes = t->caphashes ? 2 * t->caphashes : 32;
        t->hashes = sg_xrealloc(t->hashes, t->caphashes * sizeof *t->hashes);
    }
    t->hashes[t->nhashes++] = h;
    return 0;
}

static void maybe_advance(sg_task *t);
static void room_freed(sg_task *t);

/* What the trigger's load limits read: this task's candidates not yet judged, and the
 * pool's queue per slot when the device port can tell. */
static void set_load(sg_task *t) {
    sg_trigger_set_backlog(t->trigger, t->jobs_pending);
    if (t->llm.fork_room) sg_trigger_set_fork_cap(t->trigger, t->llm.fork_room(t->llm.impl));
    if (t->dev.load && t->cfg.trigger.max_queue_per_slot > 0) {
        int queued = 0, slots = 0;
        t->dev.load(t->dev.impl, &queued, &slots);
        sg_trigger_set_pool_queue(t->trigger, slots > 0 ? (double)queued / slots : 0);
    }
}

/* The device port drops the iteration's queued jobs and kills its running validations;
 * they come back through on_job_done, cancelled (maybe inside this call). */
static void end_jobs(sg_task *t, int iteration) {
    if (t->dev.end_iteration) t->dev.end_iteration(t->dev.impl, iteration);
}

static void on_job_done(void *arg, const sg_job_outcome *o) {
    job_ctx *j = arg;
    sg_task *t = j->task;
    SG_ASSERT(t->jobs_pending > 0); /* each job ends once */
    t->jobs_pending--;
    if (t->workers) t->workers[j->worker].jobs--;
    if (o->cancelled) { /* its iteration ended: nothing to learn from it */
        t->st.cancelled_jobs++;
        forget_hash(t, j->hash);
        RECORD(t, "job_done", "{s:i,s:i,s:b,s:s,s:s}", "candidate", j->candidate, "of_iteration",
               j->iteration, "correct", 0, "verdict", o->verdict, "message", o->message);
        free(j->source);
        free(j);
        room_freed(t); /* a backlog limit may let a fork start */
        progress(t);
        maybe_advance(t);
        return;
    }
    if (o->ok) {
        t->st.compiled += o->compiled;
        t->st.correct += o->correct;
        t->st.profiled += o->correct && o->speedup > 0;
    }
    if (o->correct && !t->st.first_correct_ns) t->st.first_correct_ns = since_start(t);
    /* time_ns, baseline_ns: the medians the speedup (and the feedback's text) came from */
    /* kb_check: KernelBench's own check of a torch task's candidate (absent when none ran) */
    RECORD(t, "job_done", "{s:i,s:i,s:b,s:s,s:f,s:f,s:f,s:s,s:s,s:o,s:o,s:o*}", "candidate",
           j->candidate, "of_iteration", j->iteration, "correct", o->correct, "verdict",
           o->ok ? o->verdict : "not_run", "speedup", o->speedup, "noise", o->noise, "compile_ms",
           o->compile_ms, "message", o->message, "feedback", o->feedback, "time_ns",
           o->cand_ns > 0 ? json_real(o->cand_ns) : json_null(), "baseline_ns",
           o->base_ns > 0 ? json_real(o->base_ns) : json_null(), "kb_check",
           o->kb_trials > 0 ? json_pack("{s:b,s:i,s:i}", "correct", o->kb_pass == o->kb_trials,
                                        "trials", o->kb_trials, "passed", o->kb_pass)
                            : NULL);
    if (o->race_stop[0])
        RECORD(t, "race_stop", "{s:i,s:s,s:i,s:i,s:f}", "candidate", j->candidate, "stop",
               o->race_stop, "runs", o->runs, "saved_runs", o->race_saved_runs, "saved_ms",
               o->race_saved_ms);
    add_feedback_of(t, j->worker, o->ok && o->feedback[0] ? o->feedback : o->message);
    if (t->workers && o->ok && o->correct && o->speedup > t->workers[j->worker].best_speedup) {
        worker *w = &t->workers[j->worker]; /* its own best: what its next round improves */
        w->best_speedup = o->speedup;
        free(w->best_kernel);
        w->best_kernel = sg_xstrdup(j->source);
    }
    if (o->ok && o->correct && o->speedup > t->st.best_speedup) {
        t->st.best_speedup = o->speedup;
        t->st.best_candidate = j->candidate;
        t->st.best_ns = since_start(t);
        free(t->best_kernel);
        t->best_kernel = j->source;
        j->source = NULL;
        RECORD(t, "new_best", "{s:i,s:f}", "candidate", j->candidate, "speedup", o->speedup);
        if ((t->cfg.drop_stale || t->cfg.preempt_stale) && j->fork && t->dev.drop_stale &&
            t->phase == PHASE_RUNNING)
            t->dev.drop_stale(t->dev.impl, j->iteration, j->reasoning_tokens, t->cfg.preempt_stale);
    }
    if (t->phase == PHASE_RUNNING && o->ok) {
        sg_crit c = sg_criterion_on_candidate(&t->cfg.crit, t->best_at_iter_start, o->correct,
                                              o->speedup, o->noise);
        if (c == SG_CRIT_TARGET) {
            stop_task(t, SG_CRIT_TARGET, NULL);
        } else if (c == SG_CRIT_END_ITERATION && j->iteration == t->st.iteration &&
                   t->iter_gens > 0 && !t->workers) { /* workers: no barrier, no cut */
            uint64_t tokens = 0;
            int est = 0;
            for (gen_ctx *g = t->gens; g; g = g->next)
                if (g->kind == GEN_REASONING && g->iteration == t->st.iteration)
                    tokens += g->reasoning_tokens, est |= g->tokens_estimated;
            t->st.early_stops++;
            t->iter_cut = 1;
            t->st.tokens_at_early_stop += tokens;
            RECORD(t, "early_stop", "{s:i,s:I,s:f,s:s}", "candidate", j->candidate,
                   "reasoning_tokens", (json_int_t)tokens, "speedup", o->speedup, "tokens",
                   tokens_source(est));
            abort_gens(t, t->st.iteration);
            end_jobs(t, t->st.iteration);
        }
    }
    free(j->source);
    free(j);
    room_freed(t);
    progress(t);
    maybe_advance(t);
}

static void submit_candidate(sg_task *t, const char *text, size_t len, const char *origin,
                             const gen_ctx *g) {
    sg_buf src = {0};
    sg_extract_info info;
    sg_err err;
    int id = ++t->st.candidates;
    if (!t->st.first_candidate_ns) t->st.first_candidate_ns = since_start(t);
    if (sg_extract_kernel(text, len, t->spec.lang, &src, &info, &err) < 0) {
        t->st.no_kernel++;
        char fb[700];
        snprintf(fb, sizeof fb, "Candidate %d: %s.", id, err.msg);
        add_feedback_of(t, g->worker, fb);
        RECORD(t, "candidate", "{s:i,s:s,s:s,s:s}", "candidate", id, "origin", origin, "status",
               "no_kernel", "reason", err.msg);
        if (g->kind == GEN_FORK) sg_trigger_fork_finished(t->trigger, g->fire.rule, 1);
        sg_buf_free(&src);
        return;
    }
    char hex[17];
    sg_srcnorm_hex(info.hash, hex);
    int dup = seen_before(t, info.hash);
    if (g->kind == GEN_FORK) sg_trigger_fork_finished(t->trigger, g->fire.rule, dup);
    if (t->hooks.record) {
        json_t *ev = json_pack("{s:i,s:s,s:s,s:s,s:b}", "candidate", id, "origin", origin, "status",
                               dup ? "duplicate" : "submitted", "hash", hex, "unterminated",
                               info.unterminated);
        if (g->kind == GEN_FORK) {
            json_object_set_new(ev, "rule", json_string(sg_rule_name(g->fire.rule)));
            json_object_set_new(ev, "at_tokens", json_integer((json_int_t)g->fire.tokens));
            json_object_set_new(ev, "fork", json_integer(g->index)); /* lineage to the fork */
        }
        if (!dup) json_object_set_new(ev, "source", json_stringn(src.data, src.len));
        record(t, "candidate", ev);
    }
    if (dup) {
        t->st.duplicates++;
        sg_buf_free(&src);
        return;
    }
    job_ctx *j = sg_xcalloc(1, sizeof *j);
    j->task = t;
    j->candidate = id;
    j->iteration = g->iteration; /* the current one, but a worker's round */
    j->worker = g->worker;
    j->fork = g->kind == GEN_FORK;
    j->reasoning_tokens = g->kind == GEN_FORK ? g->fire.tokens : g->reasoning_tokens;
    j->source = sg_buf_steal(&src);
    j->hash = info.hash;
    char name[32];
    snprintf(name, sizeof name, "Candidate %d", id);
    sg_job_request req = {.kind = SG_JOB_CANDIDATE,
                          .source = j->source,
                          .len = strlen(j->source),
                          .name = name,
                          .iteration = g->iteration,
                          .fork = g->kind == GEN_FORK,
                          .reasoning_tokens =
                              g->kind == GEN_FORK ? g->fire.tokens : g->reasoning_tokens};
    if (t->dev.submit(t->dev.impl, &req, on_job_done, j, &err) < 0) {
        RECORD(t, "job_error", "{s:i,s:s}", "candidate", id, "error", err.msg);
        free(j->source);
        free(j);
        return;
    }
    t->jobs_pending++;
    if (t->workers) t->workers[j->worker].jobs++;
}

/* ---- generation events ---- */

static void start_fork(sg_task *t, gen_ctx *parent, const sg_trigger_fire *fire);

static void on_reasoning(void *arg, const char *text, size_t len, uint64_t tokens, int estimated) {
    gen_ctx *g = arg;
    g->tokens_estimated = estimated;
    sg_task *t = g->task;
    sg_buf_append(&g->reasoning, text, len);
    t->st.reasoning_tokens += tokens > g->reasoning_tokens ? tokens - g->reasoning_tokens : 0;
    g->reasoning_tokens = tokens;
    if (t->phase != PHASE_RUNNING) return;
    if ((t->cfg.policy.kind == SG_POLICY_SPECGEN || t->cfg.policy.kind == SG_POLICY_PROBE_EXIT) &&
        t->cfg.policy.fork && !t->st.forks_refused) {
        sg_trigger_fire fire;
        set_load(t);
        if (sg_trigger_feed(t->trigger, text, len, tokens, &fire)) start_fork(t, g, &fire);
    }
    progress(t);
    sg_crit b = sg_criterion_on_budget(&t->cfg.crit, since_start(t), t->st.tokens_total, 0);
    if (b == SG_CRIT_BUDGET_TOKENS) stop_task(t, b, NULL);
}

static void on_content(void *arg, const char *text, size_t len) {
    gen_ctx *g = arg;
    sg_buf_append(&g->content, text, len);
    g->content_chunks++;
}

/* A fork or a job ended: a code-block cue kept pending while there was no room may fork
 * now, from the current iteration's reasoning as it stands. */
static void room_freed(sg_task *t) {
    if (t->phase != PHASE_RUNNING || t->st.forks_refused) return;
    for (gen_ctx *r = t->gens; r; r = r->next) {
        if (r->kind != GEN_REASONING || r->iteration != t->st.iteration || !r->gen) continue;
        sg_trigger_fire fire;
        set_load(t);
        if (sg_trigger_poll(t->trigger, r->reasoning_tokens, &fire)) start_fork(t, r, &fire);
        return;
    }
}

/* Counted and said on the console. An endpoint without the fork's route or method (404,
 * 405, 501: e.g. no /v1/completions) refuses every fork alike: stop forking and say so. */
static void fork_failed(sg_task *t, gen_ctx *g, const sg_gen_summary *s) {
    sg_trigger_fork_aborted(t->trigger); /* a failure is no duplicate either */
    t->st.forks_failed++;
    snprintf(t->st.fork_error, sizeof t->st.fork_error, "%s", s->error);
    RECORD(t, "fork_failed", "{s:i,s:i,s:s}", "fork", g->index, "http_status", s->http_status,
           "error", s->error);
    int refused = s->http_status == 404 || s->http_status == 405 || s->http_status == 501;
    if (refused && !t->st.forks_refused) {
        t->st.forks_refused = 1;
        RECORD(t, "forks_stopped", "{s:i,s:s}", "http_status", s->http_status, "error", s->error);
    }
}

/* probe-exit:K: a probe's answer is not timed. When its kernel is the previous probe's of
 * the same iteration (equal normalized source), the reasoning stops and that kernel is the
 * iteration's final answer. */
static void probe_answer(sg_task *t, gen_ctx *g, const char *text, size_t len) {
    sg_buf src = {0};
    sg_extract_info info;
    sg_err err;
    int ok = sg_extract_kernel(text, len, t->spec.lang, &src, &info, &err) == 0;
    sg_buf_free(&src);
    int agree = ok && t->probe_have && info.hash == t->probe_hash;
    t->probe_hash = info.hash; /* a probe without a kernel breaks the run */
    t->probe_have = ok;
    char hex[17] = "";
    if (ok) sg_srcnorm_hex(info.hash, hex);
    RECORD(t, "probe", "{s:i,s:I,s:b,s:s,s:b}", "fork", g->index, "at_tokens",
           (json_int_t)g->fire.tokens, "kernel", ok, "hash", hex, "agrees", agree);
    if (!agree) {
        sg_trigger_fork_finished(t->trigger, g->fire.rule, 0); /* no skip on a repeat */
        return;
    }
    uint64_t tokens = 0;
    for (gen_ctx *r = t->gens; r; r = r->next)
        if (r->kind == GEN_REASONING && r->iteration == g->iteration) tokens += r->reasoning_tokens;
    t->st.early_stops++;
    t->st.tokens_at_early_stop += tokens;
    RECORD(t, "early_stop", "{s:s,s:I,s:i}", "why", "probes_agree", "reasoning_tokens",
           (json_int_t)tokens, "fork", g->index);
    submit_candidate(t, text, len, "probe-exit", g);
    abort_gens(t, g->iteration); /* the reasoning and the other probes */
}

static void on_gen_done(void *arg, const sg_gen_summary *s) {
    gen_ctx *g = arg;
    sg_task *t = g->task;
    g->gen = NULL;
    gen_unlink(t, g);
    if (t->workers && g->kind == GEN_REASONING) t->workers[g->worker].gens--;
    t->tokens_done += s->reasoning_tokens + s->content_tokens;
    if (t->hooks.record) {
        const char *kind = g->kind == GEN_FORK ? "fork" : "reasoning";
        json_t *ev = json_pack(
            "{s:s,s:i,s:s,s:I,s:I,s:b,s:s}", "kind", kind, "index", g->index, "finish", s->finish,
            "reasoning_tokens", (json_int_t)s->reasoning_tokens, "content_tokens",
            (json_int_t)s->content_tokens, "estimated", s->estimated, "error", s->error);
        if (!s->estimated) json_object_set_new(ev, "prompt_tokens", json_integer(s->prompt_tokens));
        if (s->cached_reported)
            json_object_set_new(ev, "cached_tokens", json_integer(s->cached_tokens));
        if (s->prompt_form[0]) { /* a fork: sent as token ids or as text, and why */
            json_object_set_new(ev, "prompt", json_string(s->prompt_form));
            if (s->prefix_ids) json_object_set_new(ev, "prefix_ids", json_integer(s->prefix_ids));
            if (s->form_why[0]) json_object_set_new(ev, "prompt_why", json_string(s->form_why));
        }
        if (s->first_token_ns > 0) /* the LLM's first-token latency (/metrics' histogram) */
            json_object_set_new(ev, "first_token_ms", json_real((double)s->first_token_ns / 1e6));
        record(t, "generation_done", ev);
    }
    if (g->kind == GEN_FORK) {
        t->st.forks_done++;
        t->st.fork_tokens += s->content_tokens;
        if (!s->estimated) { /* the server's counts: its cache report belongs with them */
            t->st.fork_prompt_tokens += s->prompt_tokens;
            t->st.fork_cached_tokens += s->cached_tokens;
            t->st.forks_cache_reported += s->cached_reported;
        }
    }
    if (g->kind == GEN_REASONING)
        t->reasoning_failures = s->error[0] ? t->reasoning_failures + 1 : 0;
    if (s->error[0] && s->first_token_timeout) {
        t->st.first_token_timeouts++;
        snprintf(t->st.first_token_error, sizeof t->st.first_token_error, "%s", s->error);
    }
    if (s->error[0]) {
        if (g->kind == GEN_FORK)
            fork_failed(t, g, s);
        else if (t->reasoning_failures >= 2 && t->phase == PHASE_RUNNING) {
            char msg[700];
            snprintf(msg, sizeof msg, "the reasoning stream failed twice in a row: %s", s->error);
            gen_free(g);
            stop_task(t, SG_CRIT_CONTINUE, msg);
            return;
        }
    } else if (t->phase == PHASE_RUNNING || t->phase == PHASE_STOPPING) {
        if (g->kind == GEN_FORK) {
            /* The answer prefix opened the code block: extraction reads it too. */
            sg_buf text = {0};
            sg_buf_append_str(&text, t->answer_prefix);
            sg_buf_append(&text, g->content.data ? g->content.data : "", g->content.len);
            if (t->phase == PHASE_RUNNING && t->cfg.policy.kind == SG_POLICY_PROBE_EXIT)
                probe_answer(t, g, text.data, text.len);
            else if (t->phase == PHASE_RUNNING)
                submit_candidate(t, text.data, text.len, "fork", g);
            sg_buf_free(&text);
        } else if (t->phase == PHASE_RUNNING) {
            submit_candidate(t, g->content.data ? g->content.data : "", g->content.len, "final", g);
            /* probe-exit: the final answer is in; its probes still running are moot */
            if (t->cfg.policy.kind == SG_POLICY_PROBE_EXIT) abort_gens(t, g->iteration);
        }
    }
    if (g->kind == GEN_FORK) room_freed(t);
    gen_free(g);
    progress(t);
    maybe_advance(t);
}

static gen_ctx *gen_new(sg_task *t, int kind, int index) {
    gen_ctx *g = sg_xcalloc(1, sizeof *g);
    g->task = t;
    g->kind = kind;
    g->iteration = t->st.iteration;
    g->index = index;
    g->next = t->gens;
    if (t->gens) t->gens->prev = g;
    t->gens = g;
    t->iter_gens++;
    return g;
}

static void start_fork(sg_task *t, gen_ctx *parent, const sg_trigger_fire *fire) {
    SG_ASSERT(t->phase == PHASE_RUNNING);
    sg_err err;
    gen_ctx *g = gen_new(t, GEN_FORK, ++t->st.forks_started);
    g->fire = *fire;
    sg_gen_events ev = {on_reasoning, on_content, on_gen_done, g};
    sg_fork_request req = {.tmpl = t->cfg.tmpl,
                           .parent = parent->gen,
                           .system = t->system,
                           .user = t->user,
                           .reasoning = parent->reasoning.data ? parent->reasoning.data : "",
                           .reasoning_len = parent->reasoning.len,
                           .answer_prefix = t->answer_prefix,
                           .stop = (const char *const *)t->cfg.tmpl->stop,
                           .nstop = t->cfg.tmpl->nstop,
                           .max_tokens = t->cfg.prompts->fork_max_tokens,
                           .temperature = t->cfg.prompts->fork_temperature,
                           .top_p = t->cfg.prompts->fork_top_p};
    g->gen = t->llm.start_fork(t->llm.impl, &req, &ev, &err);
    if (!g->gen) {
        RECORD(t, "fork_error", "{s:s}", "error", err.msg);
        gen_unlink(t, g);
        gen_free(g);
        return;
    }
    sg_trigger_fork_started(t->trigger, fire);
    RECORD(t, "fork", "{s:i,s:s,s:s,s:I,s:I,s:b,s:I,s:s}", "fork", g->index, "rule",
           sg_rule_name(fire->rule), "cue", fire->cue, "at_tokens", (json_int_t)fire->tokens,
           "at_bytes", (json_int_t)fire->offset, "deferred", fire->deferred, "cue_tokens",
           (json_int_t)fire->cue_tokens, "tokens", tokens_source(parent->tokens_estimated));
}

/* ---- iterations ---- */

/* The iteration's messages from a feedback ring, a best kernel and its speedup, and the
 * iteration number the prompt shows (a worker's own, under workers:N). */
static void build_messages_from(sg_task *t, int iteration, char **feedback, int nfeedback,
                                const char *best_kernel, double best_speedup) {
    sg_buf fb = {0};
    if (nfeedback) {
        sg_buf_append_str(&fb, t->cfg.prompts->feedback_header);
        for (int i = 0; i < nfeedback; i++) {
            sg_buf_append_str(&fb, "- ");
            sg_buf_append_str(&fb, feedback[i]);
            if (fb.len && fb.data[fb.len - 1] != '\n') sg_buf_append_str(&fb, "\n");
        }
        sg_buf_append_str(&fb, "\n");
    }
    char iter[16], best[32], target[32];
    snprintf(iter, sizeof iter, "%d", iteration);
    snprintf(best, sizeof best, "%.2f", best_speedup);
    snprintf(target, sizeof target, "%.2f", t->cfg.crit.target_speedup);
    sg_buf kernel = {0};
    sg_buf_append_str(&kernel, best_kernel);
    if (kernel.len && kernel.data[kernel.len - 1] != '\n') sg_buf_append_str(&kernel, "\n");
    const char *keys[] = {"name",      "lang",        "description",  "target",
                          "iteration", "best_kernel", "best_speedup", "feedback"};
    const char *vals[] = {t->spec.name, t->spec.lang, t->spec.description,   target, iter,
                          kernel.data,  best,         fb.data ? fb.data : ""};
    sg_buf sys = {0}, user = {0};
    sg_buf_fill(&sys, t->cfg.prompts->system, keys, vals, 8);
    sg_buf_fill(&user, t->cfg.prompts->user, keys, vals, 8);
    free(t->system);
    free(t->user);
    t->system = sg_buf_steal(&sys);
    t->user = sg_buf_steal(&user);
    sg_buf_free(&fb);
    sg_buf_free(&kernel);
}

static void build_messages(sg_task *t) {
    build_messages_from(t, t->st.iteration, t->feedback, t->nfeedback, t->best_kernel,
                        t->st.best_speedup);
}

/* A reasoning stream on the current messages; NULL (the task stopping) when it could not
 * start. */
static gen_ctx *start_stream(sg_task *t, int index, int worker) {
    gen_ctx *g = gen_new(t, GEN_REASONING, index);
    g->worker = worker;
    sg_gen_events ev = {on_reasoning, on_content, on_gen_done, g};
    sg_err err;
    g->gen = t->llm.start_reasoning(t->llm.impl, t->system, t->user, &ev, &err);
    if (!g->gen) {
        gen_unlink(t, g);
        gen_free(g);
        stop_task(t, SG_CRIT_CONTINUE, err.msg);
        return NULL;
    }
    return g;
}

static void start_iteration(sg_task *t) {
    SG_ASSERT(t->phase == PHASE_RUNNING && t->iter_gens == 0);
    t->st.iteration++;
    t->iter_gens = 0;
    t->iter_cut = 0;
    t->best_at_iter_start = t->st.best_speedup;
    t->probe_have = 0;
    sg_trigger_reset(t->trigger);
    build_messages(t);
    RECORD(t, "iteration_start", "{s:f,s:i}", "best_speedup", t->st.best_speedup, "feedback_items",
           t->nfeedback);
    for (int i = 0; i < t->cfg.policy.streams; i++)
        if (!start_stream(t, i + 1, 0)) return;
    progress(t);
}

/* workers:N: worker w's next round, on its own feedback and best kernel; 0 when its budget
 * of rounds is spent (it is then done). Each round is a task-wide iteration id of its own. */
static int start_round(sg_task *t, int wi) {
    worker *w = &t->workers[wi];
    sg_crit b = sg_criterion_on_budget(&t->cfg.crit, since_start(t), t->st.tokens_total, w->round);
    if (b != SG_CRIT_CONTINUE) {
        w->done = 1;
        t->workers_end = b;
        return 0;
    }
    w->round++;
    w->iteration = ++t->st.iteration;
    const char *base = t->spec.baseline ? t->spec.baseline : "";
    build_messages_from(t, w->round, w->feedback, w->nfeedback,
                        w->best_kernel ? w->best_kernel : base, w->best_speedup);
    RECORD(t, "iteration_start", "{s:f,s:i,s:i,s:i}", "best_speedup", w->best_speedup,
           "feedback_items", w->nfeedback, "worker", wi + 1, "round", w->round);
    if (!start_stream(t, wi + 1, wi)) return 0;
    w->gens++;
    return 1;
}

/* workers:N: every idle worker starts its next round; the task ends when all are done. */
static void workers_advance(sg_task *t) {
    int live = 0;
    for (int i = 0; i < t->cfg.policy.streams && t->phase == PHASE_RUNNING; i++) {
        worker *w = &t->workers[i];
        if (!w->done && !w->gens && !w->jobs) start_round(t, i);
        live += !w->done || w->gens || w->jobs;
    }
    if (t->phase == PHASE_RUNNING && !live) stop_task(t, t->workers_end, NULL);
}

static void finish_now(sg_loop *loop, void *arg) {
    sg_task *t = arg;
    t->finish_scheduled = 0;
    if (t->phase != PHASE_STOPPING || t->jobs_pending || t->gens) return;
    set_phase(t, PHASE_DONE);
    t->st.ended_ns = since_start(t);
    const char *why = t->st.error[0]    ? "error"
                      : t->st.cancelled ? "cancelled"
                                        : sg_crit_name(t->st.end_reason);
    RECORD(t, "task_end", "{s:s,s:f,s:i,s:s,s:f}", "reason", why, "best_speedup",
           t->st.best_speedup, "best_candidate", t->st.best_candidate, "error", t->st.error,
           "elapsed_s", (double)t->st.ended_ns / 1e9); /* summary.json's elapsed_s */
    if (t->hooks.finished) t->hooks.finished(t->hooks.arg, &t->st);
}

/* Called after anything finishes: next iteration, or the end of the task. */
static void maybe_advance(sg_task *t) {
    if (t->phase == PHASE_STOPPING) {
        if (!t->jobs_pending && !t->gens && !t->finish_scheduled) {
            t->finish_scheduled = 1;
            sg_loop_defer(t->loop, finish_now, t); /* not from inside a port's callback */
        }
        return;
    }
    if (t->phase == PHASE_RUNNING && t->workers) {
        workers_advance(t);
        return;
    }
    if (t->phase != PHASE_RUNNING || t->iter_gens > 0) return;
    /* The iteration's generations are over. Wait for its candidates only when nothing
     * else could make progress: an early-stopped iteration moves on at once. */
    if (t->jobs_pending && !t->iter_cut) return;
    sg_crit b =
        sg_criterion_on_budget(&t->cfg.crit, since_start(t), t->st.tokens_total, t->st.iteration);
    if (b != SG_CRIT_CONTINUE) {
        stop_task(t, b, NULL);
        return;
    }
    start_iteration(t);
}

static void stop_task(sg_task *t, sg_crit reason, const char *error) {
    if (phase_ending(t->phase)) return;
    set_phase(t, PHASE_STOPPING);
    t->st.end_reason = reason;
    if (error) snprintf(t->st.error, sizeof t->st.error, "%s", error);
    sg_loop_timer_cancel(t->loop, t->budget_timer);
    if (reason == SG_CRIT_TARGET) {
        /* Meeting the target cuts the reasoning still running: an early stop too. */
        uint64_t tokens = 0;
        int live = 0, est = 0;
        for (gen_ctx *g = t->gens; g; g = g->next)
            if (g->kind == GEN_REASONING)
                tokens += g->reasoning_tokens, live++, est |= g->tokens_estimated;
        if (live) {
            t->st.early_stops++;
            t->st.tokens_at_early_stop += tokens;
            RECORD(t, "early_stop", "{s:s,s:I,s:f,s:s}", "why", "target", "reasoning_tokens",
                   (json_int_t)tokens, "speedup", t->st.best_speedup, "tokens", tokens_source(est));
        }
    }
    abort_gens(t, 0);
    for (int i = 0; i <= t->st.iteration; i++) end_jobs(t, i); /* nothing more to learn */
    const char *why = error ? "error" : t->st.cancelled ? "cancelled" : sg_crit_name(reason);
    RECORD(t, "stopping", "{s:s,s:s}", "reason", why, "error", error ? error : "");
    maybe_advance(t);
}

static void on_budget_timer(sg_loop *loop, void *arg) {
    sg_task *t = arg;
    t->budget_timer = 0;
    stop_task(t, SG_CRIT_BUDGET_TIME, NULL);
}

static void on_baseline(void *arg, const sg_job_outcome *o) {
    sg_task *t = arg;
    SG_ASSERT(t->jobs_pending > 0);
    t->jobs_pending--;
    RECORD(t, "baseline", "{s:b,s:b,s:s,s:f,s:s}", "ok", o->ok, "correct", o->correct, "verdict",
           o->verdict, "median_ns", o->base_ns, "message", o->message);
    if (t->phase != PHASE_BASELINE) {
        maybe_advance(t);
        return;
    }
    if (!o->ok || !o->correct || !(o->base_ns > 0)) {
        char msg[1200];
        snprintf(msg, sizeof msg, "the baseline did not validate: %s", o->message);
        set_phase(t, PHASE_RUNNING);
        stop_task(t, SG_CRIT_CONTINUE, msg);
        return;
    }
    t->st.baseline_ns_median = (int64_t)o->base_ns;
    set_phase(t, PHASE_RUNNING);
    if (t->workers)
        workers_advance(t);
    else
        start_iteration(t);
}

/* ---- life cycle ---- */

sg_task *sg_task_new(sg_loop *loop, const sg_task_config *cfg, const sg_task_spec *spec,
                     const sg_llm_port *llm, const sg_dev_port *dev, const sg_task_hooks *hooks,
                     sg_err *err) {
    if (!spec->lang || (strcmp(spec->lang, "cuda") && strcmp(spec->lang, "opencl"))) {
        sg_errf(err, "task language '%s' is not cuda or opencl", spec->lang ? spec->lang : "");
        return NULL;
    }
    sg_task *t = sg_xcalloc(1, sizeof *t);
    t->loop = loop;
    t->cfg = *cfg;
    t->spec = *spec;
    t->llm = *llm;
    t->dev = *dev;
    if (hooks) t->hooks = *hooks;
    t->trigger = sg_trigger_new(&cfg->trigger);
    int max = cfg->feedback_last > 0 ? cfg->feedback_last : 4;
    t->feedback = sg_xcalloc((size_t)max, sizeof *t->feedback);
    t->best_kernel = sg_xstrdup(spec->baseline ? spec->baseline : "");
    t->st.best_speedup = 1.0;
    if (cfg->policy.kind == SG_POLICY_WORKERS) {
        SG_ASSERT(cfg->policy.streams >= 1);
        t->workers = sg_xcalloc((size_t)cfg->policy.streams, sizeof *t->workers);
        for (int i = 0; i < cfg->policy.streams; i++) {
            t->workers[i].feedback = sg_xcalloc((size_t)max, sizeof(char *));
            t->workers[i].best_speedup = 1.0;
        }
    }
    sg_buf prefix = {0};
    const char *k = "lang";
    sg_buf_fill(&prefix, cfg->prompts->answer_prefix, &k, &spec->lang, 1);
    t->answer_prefix = sg_buf_steal(&prefix);
    seen_before(t, sg_srcnorm_hash(t->best_kernel,
                                   strlen(t->best_kernel))); /* the baseline is no candidate */
    return t;
}

int sg_task_start(sg_task *t, sg_err *err) {
    if (t->phase != PHASE_NEW) return sg_errf(err, "task already started");
    t->st.started_ns = sg_loop_now(t->loop);
    set_phase(t, PHASE_BASELINE);
    char pol[32];
    json_t *origin = t->spec.origin_format
                         ? json_pack("{s:s,s:s*,s:s*}", "format", t->spec.origin_format, "file",
                                     t->spec.origin_file, "sha256", t->spec.origin_sha256)
                         : NULL;
    RECORD(t, "task_start", "{s:s,s:s,s:s,s:f,s:s*,s:s*,s:o*}", "task", t->spec.name, "lang",
           t->spec.lang, "policy", sg_policy_name(&t->cfg.policy, pol, sizeof pol), "target",
           t->cfg.crit.target_speedup, "baseline_kind", t->spec.baseline_kind, "precision",
           t->spec.precision, "origin", origin);
    if (!t->hooks.record) json_decref(origin);
    if (t->cfg.crit.budget_ns > 0)
        t->budget_timer = sg_loop_timer(t->loop, t->cfg.crit.budget_ns, on_budget_timer, t);
    sg_job_request req = {SG_JOB_BASELINE, NULL, 0, "baseline", 0, 0, 0};
    if (t->dev.submit(t->dev.impl, &req, on_baseline, t, err) < 0) return -1;
    t->jobs_pending++;
    return 0;
}

void sg_task_cancel(sg_task *t) {
    if (t->phase == PHASE_BASELINE) set_phase(t, PHASE_RUNNING);
    if (!phase_ending(t->phase)) t->st.cancelled = 1;
    stop_task(t, SG_CRIT_CONTINUE, NULL);
}

const char *sg_task_best_kernel(const sg_task *t) { return t->best_kernel; }

void sg_task_free(sg_task *t) {
    if (!t) return;
    abort_gens(t, 0);
    sg_loop_timer_cancel(t->loop, t->budget_timer);
    sg_trigger_free(t->trigger);
    for (int i = 0; i < t->nfeedback; i++) free(t->feedback[i]);
    free(t->feedback);
    for (int w = 0; t->workers && w < t->cfg.policy.streams; w++) {
        for (int i = 0; i < t->workers[w].nfeedback; i++) free(t->workers[w].feedback[i]);
        free(t->workers[w].feedback);
        free(t->workers[w].best_kernel);
    }
    free(t->workers);
    free(t->hashes);
    free(t->best_kernel);
    free(t->system);
    free(t->user);
    free(t->answer_prefix);
    free(t);
}

double sg_task_prefix_reuse(const sg_task_stats *s) {
    if (!s->forks_cache_reported || !s->fork_prompt_tokens) return -1;
    return (double)s->fork_cached_tokens / (double)s->fork_prompt_tokens;
}
