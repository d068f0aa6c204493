/* The task state machine on the virtual clock, with scripted ports: a reasoning model
 * that writes one word every 10 ms, forks answered by how far the reasoning had got, and
 * a device whose verdict and speed are written in the kernel text ("SPEED=2.5",
 * "WRONG"). This tests the policy (forks, duplicates, early stop, iterations, budgets),
 * not interop: the real ports are tested against real servers and PoCL elsewhere. */
#include "common/buf.h"
#include "orchestrator/task.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ---- scripted LLM ---- */

typedef struct script {
    const char *reasoning; /* words, one token each */
    const char *final;     /* the answer after the reasoning */
    struct {
        uint64_t at;
        const char *answer;
    } forks[8];
    int nforks;
    int64_t word_ns, fork_ns;
    /* when set: the reasoning and final answer of the n-th reasoning stream started (the
     * last one for every later stream) */
    const char *reasoning_by_start[4], *final_by_start[4];
    int nby_start;
} script;

struct sg_gen {
    sg_loop *loop;
    sg_gen_events ev;
    const script *sc;
    int fork;
    const char *pos;
    uint64_t tokens;
    const char *answer;
    uint64_t timer;
};

typedef struct fake_llm {
    sg_loop *loop;
    const script *sc;
    uint64_t reasoning_tokens_now; /* of the running reasoning stream */
    int reasoning_started, forks_started;
    char last_user[8192];
} fake_llm;

static fake_llm *LLM;

static void gen_step(sg_loop *loop, void *arg) {
    sg_gen *g = arg;
    g->timer = 0;
    if (!g->fork && *g->pos) {
        const char *end = g->pos;
        while (*end == ' ') end++;
        while (*end && *end != ' ') end++;
        g->tokens++;
        LLM->reasoning_tokens_now = g->tokens;
        size_t n = (size_t)(end - g->pos);
        const char *p = g->pos;
        g->pos = end;
        g->timer = sg_loop_timer(loop, g->sc->word_ns, gen_step, g);
        g->ev.reasoning(g->ev.arg, p, n, g->tokens, 0);
        return;
    }
    /* The answer, then done. */
    sg_gen_summary s = {.reasoning_tokens = g->fork ? 0 : g->tokens, .content_tokens = 10};
    snprintf(s.finish, sizeof s.finish, "stop");
    if (g->answer) g->ev.content(g->ev.arg, g->answer, strlen(g->answer));
    sg_gen_events ev = g->ev;
    free(g);
    ev.done(ev.arg, &s);
}

static sg_gen *fake_start_reasoning(void *impl, const char *system, const char *user,
                                    const sg_gen_events *ev, sg_err *err) {
    fake_llm *f = impl;
    snprintf(f->last_user, sizeof f->last_user, "%s", user);
    sg_gen *g = calloc(1, sizeof *g);
    g->loop = f->loop;
    g->ev = *ev;
    g->sc = f->sc;
    g->pos = f->sc->reasoning;
    g->answer = f->sc->final;
    if (f->sc->nby_start) {
        int i =
            f->reasoning_started < f->sc->nby_start ? f->reasoning_started : f->sc->nby_start - 1;
        g->pos = f->sc->reasoning_by_start[i];
        g->answer = f->sc->final_by_start[i];
    }
    f->reasoning_started++;
    g->timer = sg_loop_timer(f->loop, f->sc->word_ns, gen_step, g);
    return g;
}

static sg_gen *fake_start_fork(void *impl, const sg_fork_request *req, const sg_gen_events *ev,
                               sg_err *err) {
    fake_llm *f = impl;
    sg_gen *g = calloc(1, sizeof *g);
    g->loop = f->loop;
    g->ev = *ev;
    g->sc = f->sc;
    g->fork = 1;
    g->answer = "nothing useful";
    for (int i = 0; i < f->sc->nforks; i++)
        if (f->sc->forks[i].at <= f->reasoning_tokens_now) g->answer = f->sc->forks[i].answer;
    f->forks_started++;
    /* Both shapes of the fork carry the same reasoning: the raw prompt ends with the
     * assistant message's text, which holds the reasoning so far. */
    sg_msg msgs[2] = {{"system", req->system}, {"user", req->user}};
    sg_buf prompt = {0}, assistant = {0};
    sg_err e;
    assert_int_equal(sg_fork_prompt(req->tmpl, msgs, 2, req->reasoning, req->reasoning_len,
                                    req->answer_prefix, &prompt, &e),
                     0);
    sg_fork_assistant(req->tmpl, req->reasoning, req->reasoning_len, req->answer_prefix,
                      &assistant);
    assert_true(prompt.len >= assistant.len && memcmp(prompt.data + prompt.len - assistant.len,
                                                      assistant.data, assistant.len) == 0);
    assert_true(req->reasoning_len > 0 &&
                memmem(assistant.data, assistant.len, req->reasoning, req->reasoning_len) != NULL);
    sg_buf_free(&prompt);
    sg_buf_free(&assistant);
    g->timer = sg_loop_timer(f->loop, f->sc->fork_ns, gen_step, g);
    return g;
}

static void fake_abort(void *impl, sg_gen *g, sg_gen_summary *out) {
    memset(out, 0, sizeof *out);
    out->reasoning_tokens = g->fork ? 0 : g->tokens;
    snprintf(out->finish, sizeof out->finish, "client-abort");
    sg_loop_timer_cancel(g->loop, g->timer);
    free(g);
}

/* ---- scripted device ---- */

typedef struct fake_job {
    sg_job_done_fn done;
    void *arg;
    sg_job_outcome o;
    int iteration, fork;
    uint64_t tokens; /* the request's reasoning_tokens */
    uint64_t timer;
    struct fake_job *next;
} fake_job;

typedef struct fake_dev {
    sg_loop *loop;
    int baseline_broken;
    int jobs;
    int64_t job_ns; /* how long a job takes (default 20 ms) */
    fake_job *running;
    int stale_calls, stale_running; /* drop_stale: calls, and those asking running jobs too */
} fake_dev;

static fake_dev *DEV;

static void job_finish(sg_loop *loop, void *arg) {
    fake_job *j = arg;
    for (fake_job **p = &DEV->running; *p; p = &(*p)->next)
        if (*p == j) {
            *p = j->next;
            break;
        }
    j->done(j->arg, &j->o);
    free(j);
}

/* Cancelled jobs answer at once (from the loop), marked cancelled, as the real port does:
 * the iteration's (below: its forks' from before `tokens`, when stale is set). */
static void fake_cancel(fake_dev *d, int iteration, int stale, uint64_t tokens) {
    for (fake_job *j = d->running; j; j = j->next) {
        if (j->iteration != iteration || j->o.cancelled) continue;
        if (stale && (!j->fork || j->tokens >= tokens)) continue;
        sg_loop_timer_cancel(d->loop, j->timer);
        memset(&j->o, 0, sizeof j->o);
        j->o.cancelled = 1;
        snprintf(j->o.verdict, sizeof j->o.verdict, "dropped");
        j->timer = sg_loop_timer(d->loop, 0, job_finish, j);
    }
}

static void fake_end_iteration(void *impl, int iteration) { fake_cancel(impl, iteration, 0, 0); }

static void fake_drop_stale(void *impl, int iteration, uint64_t tokens, int running) {
    fake_dev *d = impl;
    d->stale_calls++;
    d->stale_running += running;
    fake_cancel(impl, iteration, 1, tokens);
}

static int fake_submit(void *impl, const sg_job_request *req, sg_job_done_fn done, void *arg,
                       sg_err *err) {
    fake_dev *d = impl;
    fake_job *j = calloc(1, sizeof *j);
    j->done = done;
    j->arg = arg;
    j->o.ok = 1;
    j->o.compiled = 1;
    j->o.base_ns = 1e6;
    d->jobs++;
    if (req->kind == SG_JOB_BASELINE) {
        j->o.correct = !d->baseline_broken;
        snprintf(j->o.verdict, sizeof j->o.verdict, d->baseline_broken ? "mismatch" : "pass");
        snprintf(j->o.message, sizeof j->o.message, d->baseline_broken ? "wrong at index 3" : "ok");
    } else if (strstr(req->source, "WRONG")) {
        snprintf(j->o.verdict, sizeof j->o.verdict, "mismatch");
        snprintf(j->o.feedback, sizeof j->o.feedback, "%s gives WRONG results.", req->name);
    } else {
        const char *sp = strstr(req->source, "SPEED=");
        j->o.correct = 1;
        j->o.speedup = sp ? atof(sp + 6) : 1.0;
        j->o.cand_ns = 1e6 / j->o.speedup;
        j->o.noise = 0.01;
        snprintf(j->o.verdict, sizeof j->o.verdict, "pass");
        snprintf(j->o.feedback, sizeof j->o.feedback, "%s is correct: speedup %.2fx.", req->name,
                 j->o.speedup);
    }
    j->iteration = req->iteration;
    j->fork = req->fork;
    j->tokens = req->reasoning_tokens;
    j->next = d->running;
    d->running = j;
    int64_t ns = d->job_ns ? d->job_ns : 20 * SG_MS;
    if (req->source && strstr(req->source, "SLOW")) ns *= 50; /* a slow one: 1 s by default */
    j->timer = sg_loop_timer(d->loop, ns, job_finish, j);
    return 0;
}

/* ---- harness ---- */

typedef struct run {
    sg_task_stats st;
    int finished;
    int events_fork, events_early_stop;
    sg_buf log;
    char best[256];
} run;

static void on_record(void *arg, json_t *ev) {
    run *r = arg;
    const char *name = json_string_value(json_object_get(ev, "ev"));
    r->events_fork += !strcmp(name, "fork");
    r->events_early_stop += !strcmp(name, "early_stop");
    char *s = json_dumps(ev, JSON_COMPACT);
    sg_buf_printf(&r->log, "%s\n", s);
    free(s);
}

static void on_finished(void *arg, const sg_task_stats *s) {
    run *r = arg;
    r->st = *s;
    r->finished = 1;
}

static const char *prompts_dir(void) {
    static char buf[1024];
    const char *root = getenv("SPECGEN_ROOT");
    snprintf(buf, sizeof buf, "%s/prompts", root ? root : ".");
    return buf;
}

#define K(speed)                                                                                   \
    "```opencl\n__kernel void k(__global float *y) { y[0] = 1; } // SPEED=" speed "\n```\n"

/* Set by a test to change the task's config after the defaults below (then reset). */
static void (*tweak)(sg_task_config *cfg);

static void run_task_dev(const script *sc, const char *policy, int baseline_broken,
                         int max_iterations, int64_t job_ns, run *r) {
    sg_err err;
    sg_loop *loop = sg_loop_new_virtual(0, &err);
    /* static: tests read LLM and DEV after the run (they were on this frame's stack) */
    static fake_llm f;
    f = (fake_llm){.loop = loop, .sc = sc};
    LLM = &f;
    static fake_dev d;
    d = (fake_dev){.loop = loop, .baseline_broken = baseline_broken, .job_ns = job_ns};
    DEV = &d;
    sg_llm_port lp = {&f, fake_start_reasoning, fake_start_fork, fake_abort, NULL};
    sg_dev_port dp = {&d, fake_submit, fake_end_iteration, NULL, fake_drop_stale};
    sg_chat_template tmpl;
    assert_int_equal(sg_template_load(prompts_dir(), "generic", &tmpl, &err), 0);
    sg_task_prompts prompts;
    assert_int_equal(sg_task_prompts_load(prompts_dir(), &prompts, &err), 0);
    sg_task_config cfg = {.tmpl = &tmpl, .prompts = &prompts, .feedback_last = 4};
    assert_int_equal(sg_policy_parse(policy, &cfg.policy, &err), 0);
    sg_criterion_default(&cfg.crit);
    cfg.crit.target_speedup = 2.0;
    cfg.crit.max_iterations = max_iterations;
    sg_trigger_config_default(&cfg.trigger);
    cfg.trigger.min_spacing_tokens = 20;
    cfg.trigger.transition_min_new_tokens = 30;
    cfg.trigger.interval_tokens = 0;
    if (tweak) tweak(&cfg);
    tweak = NULL;
    sg_task_spec spec = {
        .name = "demo", .lang = "opencl", .description = "y = 2x", .baseline = K("1.0")};
    memset(r, 0, sizeof *r);
    sg_task_hooks hooks = {on_record, NULL, on_finished, r};
    sg_task *t = sg_task_new(loop, &cfg, &spec, &lp, &dp, &hooks, &err);
    assert_non_null(t);
    assert_int_equal(sg_task_start(t, &err), 0);
    assert_int_equal(sg_loop_run(loop, &err), 0);
    assert_true(r->finished);
    snprintf(r->best, sizeof r->best, "%s", sg_task_best_kernel(t));
    sg_task_free(t);
    sg_task_prompts_free(&prompts);
    sg_template_free(&tmpl);
    sg_loop_free(loop);
}

static void run_task(const script *sc, const char *policy, int baseline_broken, int max_iterations,
                     run *r) {
    run_task_dev(sc, policy, baseline_broken, max_iterations, 0, r);
}

/* 300 words of reasoning: a code block closes near word 60, "Wait" starts a sentence at
 * word ~150, and the final answer holds the best kernel. */
static char reasoning_text[8192];
static script demo_script(void) {
    sg_buf b = {0};
    for (int i = 0; i < 55; i++) sg_buf_printf(&b, "w%d ", i);
    sg_buf_append_str(&b, "first:\n```\ncode\n```\n");
    for (int i = 0; i < 90; i++) sg_buf_printf(&b, "v%d ", i);
    sg_buf_append_str(&b, "done. Wait, tile it.");
    for (int i = 0; i < 150; i++) sg_buf_printf(&b, " u%d", i);
    snprintf(reasoning_text, sizeof reasoning_text, "%s", b.data);
    sg_buf_free(&b);
    script sc = {.reasoning = reasoning_text,
                 .final = "Final:\n" K("2.5"),
                 .word_ns = 10 * SG_MS,
                 .fork_ns = 50 * SG_MS};
    sc.forks[0].at = 50;
    sc.forks[0].answer = K("1.02");
    sc.forks[1].at = 140;
    sc.forks[1].answer =
        "```opencl\n__kernel void k(__global float *y) { y[0] = 2; } // SPEED=2.4\n```\n";
    sc.nforks = 2;
    return sc;
}

static void test_specgen_reaches_target_before_reasoning_ends(void **state) {
    script sc = demo_script();
    run spec, seq;
    run_task(&sc, "specgen", 0, 3, &spec);
    run_task(&sc, "sequential", 0, 3, &seq);
    assert_int_equal(spec.st.end_reason, SG_CRIT_TARGET);
    assert_int_equal(seq.st.end_reason, SG_CRIT_TARGET);
    assert_true(spec.st.forks_started >= 2);
    assert_int_equal(seq.st.forks_started, 0);
    assert_true(spec.st.best_speedup > 2.3 && spec.st.best_speedup < 2.5); /* the fork's kernel */
    assert_true(seq.st.best_speedup == 2.5);                               /* the final answer */
    assert_true(spec.st.reasoning_tokens < 250); /* the reasoning was cut */
    assert_true(seq.st.reasoning_tokens > spec.st.reasoning_tokens + 50);
    assert_non_null(strstr(spec.best, "SPEED=2.4"));
    double ratio = (double)seq.st.ended_ns / (double)spec.st.ended_ns;
    print_message("# virtual time to target: specgen %.2f s, sequential %.2f s, ratio %.2f\n",
                  spec.st.ended_ns / 1e9, seq.st.ended_ns / 1e9, ratio);
    assert_true(ratio > 1.5);
    sg_buf_free(&spec.log);
    sg_buf_free(&seq.log);
}

static void test_early_stop_then_next_iteration_with_feedback(void **state) {
    /* Forks give 1.3x (beats 1.0 by more than 5%) but never the target. */
    script sc = demo_script();
    sc.forks[0].answer =
        "```opencl\n__kernel void k(__global float *y) { y[0] = 3; } // SPEED=1.3\n```\n";
    sc.forks[1].answer = sc.forks[0].answer;
    sc.final = "no kernel here";
    run r;
    run_task(&sc, "specgen", 0, 2, &r);
    assert_int_equal(r.st.end_reason, SG_CRIT_BUDGET_ITERATIONS);
    assert_int_equal(r.st.iteration, 2);
    assert_true(r.st.early_stops >= 1);
    assert_true(r.events_early_stop >= 1);
    assert_true(r.st.best_speedup == 1.3);
    /* The second iteration's prompt carries the best kernel and the feedback. */
    assert_non_null(strstr(LLM->last_user, "SPEED=1.3"));
    assert_non_null(strstr(LLM->last_user, "What happened to the last candidates"));
    assert_non_null(strstr(LLM->last_user, "is correct: speedup 1.30x"));
    /* In iteration 2 the same kernel comes back: a duplicate, not compiled again. */
    assert_true(r.st.duplicates >= 1);
    sg_buf_free(&r.log);
}

/* A slow device (2 s a job, the baseline's too): the fork's 2.4x kernel meets the target
 * at 5.5 s while the final answer's job (5.0 s to 7.0 s) is still running. The task ends then, its
 * pending job cancelled, instead of waiting for a result it no longer needs. */
static void test_target_cancels_pending_jobs(void **state) {
    script sc = demo_script();
    sc.final = "```opencl\n__kernel void k(__global float *y) { y[0] = 5; } // SPEED=2.5\n```\n";
    run r;
    run_task_dev(&sc, "specgen", 0, 3, 2 * SG_SEC, &r);
    if (getenv("TEST_TASK_VERBOSE")) fputs(r.log.data, stderr);
    assert_int_equal(r.st.end_reason, SG_CRIT_TARGET);
    assert_int_equal(r.st.cancelled_jobs, 1);
    assert_non_null(strstr(r.log.data, "\"verdict\":\"dropped\""));
    assert_true(r.st.ended_ns < 6 * SG_SEC); /* not after the final answer's job (7 s) */
    sg_buf_free(&r.log);
}

/* A candidate cancelled by an early stop was never judged: when the next iteration writes
 * it again it runs, it is not a duplicate. (A slow device: fork 1's 1.3x kernel ends the
 * iteration while fork 2's kernel is still running.) */
static void test_cancelled_candidate_runs_again(void **state) {
    script sc = demo_script();
    sc.forks[0].answer =
        "```opencl\n__kernel void k(__global float *y) { y[0] = 3; } // SPEED=1.3\n```\n";
    sc.forks[1].answer =
        "```opencl\n__kernel void k(__global float *y) { y[0] = 7; } // SPEED=1.1\n```\n";
    sc.final = "no kernel here";
    run r;
    run_task_dev(&sc, "specgen", 0, 2, 2 * SG_SEC, &r);
    if (getenv("TEST_TASK_VERBOSE")) fputs(r.log.data, stderr);
    assert_true(r.st.cancelled_jobs >= 1);
    /* fork 2's kernel in iteration 2: submitted (run), not a duplicate */
    const char *it2 = strstr(r.log.data, "\"ev\":\"iteration_start\",\"t_ms\"");
    assert_non_null(it2);
    it2 = strstr(it2 + 1, "\"iteration\":2");
    assert_non_null(it2);
    int submitted_again = 0;
    for (const char *p = it2; (p = strstr(p, "\"rule\":\"transition\"")); p++) {
        const char *line = p;
        while (line > r.log.data && line[-1] != '\n') line--;
        if (strstr(line, "\"ev\":\"candidate\"") && strstr(line, "\"status\":\"submitted\"") &&
            strstr(line, "\"ev\":\"candidate\"") < p)
            submitted_again = 1;
    }
    assert_true(submitted_again);
    sg_buf_free(&r.log);
}

static void test_wrong_and_missing_kernels_are_recorded(void **state) {
    script sc = demo_script();
    sc.forks[0].answer =
        "```opencl\n__kernel void k(__global float *y) { y[0] = 4; } // WRONG\n```\n";
    sc.forks[1].answer = "```opencl\n```\n"; /* an empty block: no kernel */
    sc.final = "I could not finish.";
    run r;
    run_task(&sc, "specgen", 0, 1, &r);
    assert_int_equal(r.st.correct, 0);
    assert_true(r.st.no_kernel >= 1);
    assert_true(r.st.best_speedup == 1.0);
    assert_non_null(strstr(r.log.data, "\"verdict\":\"mismatch\""));
    assert_non_null(strstr(r.log.data, "\"status\":\"no_kernel\""));
    sg_buf_free(&r.log);
}

static void test_broken_baseline_stops_with_a_message(void **state) {
    script sc = demo_script();
    run r;
    run_task(&sc, "specgen", 1, 3, &r);
    assert_non_null(strstr(r.st.error, "the baseline did not validate: wrong at index 3"));
    assert_int_equal(r.st.iteration, 0);
    sg_buf_free(&r.log);
}

static void test_parallel_runs_n_streams_without_forks(void **state) {
    script sc = demo_script();
    run r;
    run_task(&sc, "parallel:3", 0, 1, &r);
    assert_int_equal(LLM->reasoning_started, 3);
    assert_int_equal(LLM->forks_started, 0);
    assert_int_equal(r.st.end_reason, SG_CRIT_TARGET);
    /* Three streams gave the same final kernel: one candidate, two duplicates. */
    assert_int_equal(r.st.duplicates, 2);
    sg_buf_free(&r.log);
}

/* Reasoning with two code blocks: the first closes after word 55, the second after
 * word 55 + gap, then 200 more words. */
static script two_blocks(int gap) {
    sg_buf b = {0};
    for (int i = 0; i < 55; i++) sg_buf_printf(&b, "w%d ", i);
    sg_buf_append_str(&b, "first:\n```\ncode\n```\n");
    for (int i = 0; i < gap; i++) sg_buf_printf(&b, "v%d ", i);
    sg_buf_append_str(&b, "second:\n```\nmore code\n```\n");
    for (int i = 0; i < 200; i++) sg_buf_printf(&b, "u%d ", i);
    snprintf(reasoning_text, sizeof reasoning_text, "%s", b.data);
    sg_buf_free(&b);
    script sc = {.reasoning = reasoning_text,
                 .final = "no kernel here",
                 .word_ns = 10 * SG_MS,
                 .fork_ns = 305 * SG_MS}; /* forks end between two words */
    return sc;
}

/* The fork events of an iteration, in order: their at_tokens, deferred flags, times. */
static int fork_events(const run *r, int iteration, int64_t *at, int *deferred, double *t_ms,
                       int max) {
    int n = 0;
    char *copy = strdup(r->log.data), *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        json_t *ev = json_loads(line, 0, NULL);
        if (ev && !strcmp(json_string_value(json_object_get(ev, "ev")), "fork") &&
            json_integer_value(json_object_get(ev, "iteration")) == iteration && n < max) {
            at[n] = json_integer_value(json_object_get(ev, "at_tokens"));
            t_ms[n] = json_real_value(json_object_get(ev, "t_ms"));
            deferred[n++] = json_is_true(json_object_get(ev, "deferred"));
        }
        json_decref(ev);
    }
    free(copy);
    return n;
}

static void dup_skip_after_one(sg_task_config *cfg) { cfg->trigger.dup_skip_after = 1; }

/* Iteration 1: fork A (first block) gives a new 1.3x kernel and ends the iteration early,
 * which aborts fork B (second block). That abort is no duplicate: in iteration 2 the
 * code-block rule still forks at the first block (counted as one, it would skip it). */
static void test_aborted_fork_is_no_duplicate(void **state) {
    script sc = two_blocks(25);
    sc.forks[0].at = 50;
    sc.forks[0].answer = K("1.3");
    sc.forks[1].at = 75;
    sc.forks[1].answer = K("1.1");
    sc.nforks = 2;
    run r;
    tweak = dup_skip_after_one;
    run_task(&sc, "specgen", 0, 2, &r);
    if (getenv("TEST_TASK_VERBOSE")) fputs(r.log.data, stderr);
    assert_true(r.st.early_stops >= 1);
    assert_non_null(strstr(r.log.data, "\"ev\":\"generation_aborted\",\"t_ms\""));
    int64_t at[8];
    int deferred[8];
    double t_ms[8];
    int n = fork_events(&r, 2, at, deferred, t_ms, 8);
    assert_true(n >= 1);
    assert_true(at[0] < 70); /* the first block's fork, not the second's */
    sg_buf_free(&r.log);
}

static void one_in_flight(sg_task_config *cfg) { cfg->trigger.max_in_flight = 1; }

/* max_in_flight 1: the second block closes while the first block's fork runs. Its cue
 * is kept and forks the moment that fork ends (not at the next word), marked deferred. */
static void test_code_block_cue_waits_for_a_slot(void **state) {
    script sc = two_blocks(15);
    sc.forks[0].at = 0;
    sc.forks[0].answer = "no kernel yet";
    sc.nforks = 1;
    run r;
    tweak = one_in_flight;
    run_task(&sc, "specgen", 0, 1, &r);
    if (getenv("TEST_TASK_VERBOSE")) fputs(r.log.data, stderr);
    int64_t at[8];
    int deferred[8];
    double t_ms[8];
    int n = fork_events(&r, 1, at, deferred, t_ms, 8);
    assert_int_equal(n, 2);
    assert_int_equal(deferred[0], 0);
    assert_int_equal(deferred[1], 1);
    assert_true(t_ms[1] == t_ms[0] + 305); /* the moment the first fork ended */
    sg_buf_free(&r.log);
}

/* The t_ms of the n-th event named ev (0: the first), or -1. */
static double event_ms(const run *r, const char *name, int n) {
    double t = -1;
    char *copy = strdup(r->log.data), *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        json_t *ev = json_loads(line, 0, NULL);
        if (ev && !strcmp(json_string_value(json_object_get(ev, "ev")), name) && n-- == 0)
            t = json_real_value(json_object_get(ev, "t_ms"));
        json_decref(ev);
        if (t >= 0) break;
    }
    free(copy);
    return t;
}

static void no_cut(sg_task_config *cfg) { cfg->crit.early_stop = 0; }

/* workers:2 by hand: worker 1 reasons 10 words (100 ms) and writes a 1.2x kernel, worker 2
 * reasons 300 words (3 s) and writes the 2.5x kernel that meets the target. Without a
 * barrier, worker 1 starts its round 2 as soon as its kernel is judged (100 ms + the 20 ms
 * job), on its own feedback, and again for round 3 (--iterations 3 per worker); the task
 * ends at worker 2's kernel. parallel:2 waits for both streams: its round 2 starts after 3 s. */
static void test_workers_restart_without_barrier(void **state) {
    static char shortr[256], longr[4096];
    sg_buf b = {0};
    for (int i = 0; i < 10; i++) sg_buf_printf(&b, "s%d ", i);
    snprintf(shortr, sizeof shortr, "%s", b.data);
    b.len = 0;
    for (int i = 0; i < 300; i++) sg_buf_printf(&b, "l%d ", i);
    snprintf(longr, sizeof longr, "%s", b.data);
    sg_buf_free(&b);
    script sc = {.word_ns = 10 * SG_MS, .fork_ns = 50 * SG_MS, .nby_start = 4};
    const char *finals[4] = {
        "```opencl\n__kernel void k(__global float *y) { y[0] = 3; } // SPEED=1.2\n```\n",
        "```opencl\n__kernel void k(__global float *y) { y[0] = 4; } // SPEED=2.5\n```\n",
        "```opencl\n__kernel void k(__global float *y) { y[0] = 5; } // SPEED=1.3\n```\n",
        "```opencl\n__kernel void k(__global float *y) { y[0] = 6; } // SPEED=1.4\n```\n"};
    const char *reasonings[4] = {shortr, longr, shortr, shortr};
    for (int i = 0; i < 4; i++)
        sc.reasoning_by_start[i] = reasonings[i], sc.final_by_start[i] = finals[i];
    run r;
    run_task(&sc, "workers:2", 0, 3, &r);
    if (getenv("TEST_TASK_VERBOSE")) fputs(r.log.data, stderr);
    assert_int_equal(LLM->forks_started, 0);
    assert_int_equal(LLM->reasoning_started, 4); /* 2 + worker 1's rounds 2 and 3 */
    assert_int_equal(r.st.end_reason, SG_CRIT_TARGET);
    assert_true(r.st.best_speedup == 2.5);
    assert_int_equal(r.st.candidates, 4);
    /* worker 1's round 2 began right after its first kernel was judged (20 ms jobs) */
    double round2 = event_ms(&r, "iteration_start", 2);
    assert_true(round2 > 100 && round2 < 200);
    assert_true(r.st.ended_ns < 4 * SG_SEC);
    /* its round 3 prompt names its round and carries its own feedback, not worker 2's */
    assert_non_null(strstr(LLM->last_user, "(iteration 3)"));
    assert_non_null(strstr(LLM->last_user, "speedup 1.30x"));
    assert_null(strstr(LLM->last_user, "speedup 2.50x"));
    sg_buf_free(&r.log);
    tweak = no_cut; /* optimize's default: an iteration ends early only at the target */
    run_task(&sc, "parallel:2", 0, 3, &r); /* the barrier: no round 2 before the long stream */
    if (getenv("TEST_TASK_VERBOSE")) fputs(r.log.data, stderr);
    assert_int_equal(LLM->reasoning_started, 2);
    assert_true(event_ms(&r, "iteration_start", 1) < 0); /* its kernel met the target first */
    sg_buf_free(&r.log);
}

/* probe-exit:K's trigger, as sg_run_task_config sets it: a fork every 20 tokens, no cue. */
static void probe_every_20(sg_task_config *cfg) {
    cfg->trigger.code_block = 0;
    cfg->trigger.transition = 0;
    cfg->trigger.interval_tokens = 20;
    cfg->trigger.min_spacing_tokens = 0;
}

/* probe-exit by hand: the probes at 20, 40 and 60 tokens answer kernels A, B and B again
 * (other spaces, another comment: the same after normalising). Probes are not timed; the
 * third agrees with the second, so the reasoning stops there (300 words would run 3 s) and
 * that kernel, its text as the probe wrote it, is the only candidate timed. Then probes A,
 * B, C and no kernel after that: no two consecutive agree, and the final answer is timed. */
static void test_probe_exit_stops_when_two_probes_agree(void **state) {
    script sc = demo_script();
    sc.forks[0].at = 0;
    sc.forks[0].answer =
        "```opencl\n__kernel void k(__global float *y) { y[0] = 7; } // SPEED=1.1\n```\n";
    sc.forks[1].at = 30;
    sc.forks[1].answer =
        "```opencl\n__kernel void k(__global float *y) { y[0] = 8; } // SPEED=1.2\n```\n";
    sc.forks[2].at = 50;
    sc.forks[2].answer = "```opencl\n__kernel void k(__global float *y)\n{\n  y[0]  =  8; /* "
                         "same */\n} // SPEED=1.6\n```\n";
    sc.nforks = 3;
    run r;
    tweak = probe_every_20;
    run_task(&sc, "probe-exit:20", 0, 1, &r);
    if (getenv("TEST_TASK_VERBOSE")) fputs(r.log.data, stderr);
    assert_int_equal(LLM->forks_started, 3);
    assert_int_equal(r.st.early_stops, 1);
    assert_int_equal(r.st.candidates, 1);
    assert_int_equal(DEV->jobs, 2); /* the baseline and the agreed kernel */
    assert_true(r.st.best_speedup == 1.6);
    assert_true(r.st.reasoning_tokens < 80);
    assert_non_null(strstr(r.log.data, "\"origin\":\"probe-exit\""));
    assert_non_null(strstr(r.log.data, "\"why\":\"probes_agree\""));
    sg_buf_free(&r.log);
    /* probes that never agree: the reasoning runs to its end and its final answer is timed */
    sc.forks[2].answer =
        "```opencl\n__kernel void k(__global float *y) { y[0] = 9; } // SPEED=1.6\n```\n";
    sc.forks[3].at = 70;
    sc.forks[3].answer = "no kernel from here on"; /* breaks every run of agreeing probes */
    sc.nforks = 4;
    tweak = probe_every_20;
    run_task(&sc, "probe-exit:20", 0, 1, &r);
    assert_int_equal(r.st.early_stops, 0);
    assert_int_equal(r.st.candidates, 1);
    assert_true(r.st.best_speedup == 2.5); /* the final answer */
    assert_true(r.st.reasoning_tokens >= 290);
    sg_buf_free(&r.log);
}

static void drop_stale_on(sg_task_config *cfg) {
    cfg->drop_stale = 1;
    cfg->crit.early_stop = 0;
}

/* Fork 1 writes a slow kernel (1 s to judge), fork 2 a correct 1.5x one (20 ms). */
static script stale_script(void) {
    script sc = demo_script();
    sc.forks[0].answer =
        "```opencl\n__kernel void k(__global float *y) { y[0] = 1; } // SLOW SPEED=1.1\n```\n";
    sc.forks[1].answer =
        "```opencl\n__kernel void k(__global float *y) { y[0] = 2; } // SPEED=1.5\n```\n";
    return sc;
}

/* Preemption by hand: fork 1 (56 tokens) writes a kernel whose job takes 1 s; fork 2 (147
 * tokens) a correct 1.5x kernel judged in 20 ms, the new best. With drop_stale, fork 1's
 * job (older, not yet judged) is dropped then; without, it runs to its end. */
static void test_drop_stale_validation(void **state) {
    for (int on = 0; on <= 1; on++) {
        script sc = stale_script();
        run r;
        tweak = on ? drop_stale_on : no_cut;
        run_task(&sc, "specgen", 0, 1, &r);
        if (getenv("TEST_TASK_VERBOSE")) fputs(r.log.data, stderr);
        assert_int_equal(r.st.cancelled_jobs, on);
        int dropped = strstr(r.log.data, "\"candidate\":1,\"of_iteration\":1,\"correct\":false,"
                                         "\"verdict\":\"dropped\"") != NULL;
        assert_int_equal(dropped, on);
        sg_buf_free(&r.log);
    }
}

static void preempt_stale_on(sg_task_config *cfg) {
    cfg->preempt_stale = 1;
    cfg->crit.early_stop = 0;
}

/* The same case with preempt_stale (drop_stale off): the port is asked once, for running
 * validations too, when fork 2's kernel becomes the best (the port's part, a running job
 * that yields, is test_pool.c's); fork 1's job is cancelled then as with drop_stale. */
static void test_preempt_stale_asks_for_running(void **state) {
    for (int mode = 0; mode < 3; mode++) { /* off, drop_stale, preempt_stale */
        script sc = stale_script();
        run r;
        tweak = mode == 0 ? no_cut : mode == 1 ? drop_stale_on : preempt_stale_on;
        run_task(&sc, "specgen", 0, 1, &r);
        assert_int_equal(r.st.cancelled_jobs, mode > 0);
        assert_int_equal(DEV->stale_calls, mode > 0);
        assert_int_equal(DEV->stale_running, mode == 2);
        sg_buf_free(&r.log);
    }
}

static void test_policy_parse(void **state) {
    sg_policy p;
    sg_err err;
    assert_int_equal(sg_policy_parse("parallel:4", &p, &err), 0);
    assert_int_equal(p.streams, 4);
    assert_int_equal(sg_policy_parse("parallel:0", &p, &err), -1);
    assert_int_equal(sg_policy_parse("greedy", &p, &err), -1);
    assert_non_null(strstr(err.msg, "'greedy' is not a policy"));
    assert_int_equal(sg_policy_parse("workers:4", &p, &err), 0);
    assert_true(p.kind == SG_POLICY_WORKERS && p.streams == 4 && !p.fork);
    assert_int_equal(sg_policy_parse("probe-exit:500", &p, &err), 0);
    assert_true(p.kind == SG_POLICY_PROBE_EXIT && p.probe == 500 && p.fork);
    assert_int_equal(sg_policy_parse("probe:1000", &p, &err), 0);
    assert_true(p.kind == SG_POLICY_SPECGEN && p.probe == 1000);
    char name[32];
    assert_string_equal(sg_policy_name(&p, name, sizeof name), "probe:1000");
    assert_int_equal(sg_policy_parse("workers:0", &p, &err), -1);
    assert_non_null(strstr(err.msg, "workers:N needs N"));
    assert_int_equal(sg_policy_parse("probe-exit:", &p, &err), -1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_specgen_reaches_target_before_reasoning_ends),
        cmocka_unit_test(test_early_stop_then_next_iteration_with_feedback),
        cmocka_unit_test(test_target_cancels_pending_jobs),
        cmocka_unit_test(test_cancelled_candidate_runs_again),
        cmocka_unit_test(test_wrong_and_missing_kernels_are_recorded),
        cmocka_unit_test(test_broken_baseline_stops_with_a_message),
        cmocka_unit_test(test_parallel_runs_n_streams_without_forks),
        cmocka_unit_test(test_aborted_fork_is_no_duplicate),
        cmocka_unit_test(test_code_block_cue_waits_for_a_slot),
        cmocka_unit_test(test_workers_restart_without_barrier),
        cmocka_unit_test(test_probe_exit_stops_when_two_probes_agree),
        cmocka_unit_test(test_drop_stale_validation),
        cmocka_unit_test(test_preempt_stale_asks_for_running),
        cmocka_unit_test(test_policy_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
