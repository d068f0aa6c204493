/* `specgen calibrate`: what a real model and cluster do, measured for the simulator's
 * workload (calib.h runs it; docs/calibration.md). */
#include "common/buf.h"
#include "common/cli.h"
#include "common/opts.h"
#include "common/redact.h"
#include "orchestrator/calib.h"
#include "orchestrator/commands.h"
#include "orchestrator/run.h"
#include "sim/sim.h"

#include <dirent.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char details[] =
    "For each task of the suite: validates and times its baseline, then lets one reasoning\n"
    "stream run to its end (no early stop) and forks a kernel at every trigger point the\n"
    "trigger rules see in it (every code block and cue, no spacing, no cap) and every\n"
    "--interval-tokens (the control); every fork's kernel and the final answer are validated\n"
    "and, when correct, timed. Then a rate ramp on the endpoint: 1, 2, 4, ... streams at once\n"
    "(up to --ramp-streams, or until the total rate stops growing by 10%), and prefill probes\n"
    "(first-token latency against prompt length, each twice: cold, then maybe cached).\n"
    "Everything goes to the results database (tables calib_*, docs/results.md) as a campaign\n"
    "of kind calibrate: --resume ID continues it (finished tasks are kept). The reasoning\n"
    "traces are written as replay JSONL (--export-traces). Before it starts, it prints an\n"
    "estimate of the tokens and GPU time it will spend; --max-tokens-total and --budget-time\n"
    "stop it (the task running then is left unfinished: a resume runs it again). Then\n"
    "`specgen sim fit --db FILE -o measured.json` fits the workload.\n"
    "\n"
    "Examples:\n"
    "  specgen calibrate suites/demo                       # the scripted traces, PoCL\n"
    "  specgen calibrate suites/builtin --llm http://gpu:8000 --model Qwen/Qwen3-8B \\\n"
    "      --max-tokens-total 5M --budget-time 4h --db calib.db --export-traces traces/\n";

typedef struct cal {
    sg_run_config rc;
    const char *suite, *glob, *traces;
    int64_t resume, interval, max_forks, ramp_streams, ramp_tokens, budget_ns, probe_tokens;
    uint64_t max_tokens;
    char **dirs;
    int n;
    sg_results *db;
    int64_t campaign;
    sg_loop *loop;
    sg_run_prompts p;
    sg_run_pool pool;
    sg_run_llm *llm;
    uint64_t tokens;
    double gpu_s; /* validation and timing jobs' service time */
    int64_t t0;
    int done, budget;
    sg_err err;
    int failed;
} cal;

static int by_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The suite's task folders (holding task.json), by name, filtered by the glob. */
static int list_suite(cal *c, sg_err *err) {
    DIR *d = opendir(c->suite);
    if (!d) return sg_errf(err, "suite %s: cannot open it as a folder", c->suite);
    struct dirent *e;
    int cap = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || (c->glob && fnmatch(c->glob, e->d_name, 0))) continue;
        sg_buf p = {0};
        sg_buf_printf(&p, "%s/%s/task.json", c->suite, e->d_name);
        struct stat st;
        int is = stat(p.data, &st) == 0;
        sg_buf_free(&p);
        if (!is) continue;
        if (c->n == cap)
            c->dirs = sg_xrealloc(c->dirs, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *c->dirs);
        sg_buf dir = {0};
        sg_buf_printf(&dir, "%s/%s", c->suite, e->d_name);
        c->dirs[c->n++] = sg_buf_steal(&dir);
    }
    closedir(d);
    if (c->n > 1) qsort(c->dirs, (size_t)c->n, sizeof *c->dirs, by_str);
    return c->n ? 0 : sg_errf(err, "suite %s has no task%s", c->suite, c->glob ? " matching" : "");
}

/* What it will cost, from the reference workload's figures (docs/calibration.md). */
static void estimate(const cal *c) {
    sg_sim_workload w;
    sg_sim_workload_default(&w);
    double r = w.reasoning_tokens, forks = r / w.code_every_tokens + r / w.cue_every_tokens +
                                           (c->interval ? r / (double)c->interval : 0);
    if (c->max_forks > 0 && forks > c->max_forks) forks = (double)c->max_forks;
    double per = r + forks * w.fork_tokens + w.final_tokens, ramp = 0;
    for (int64_t s = 1; s <= c->ramp_streams; s *= 2) ramp += (double)(s * c->ramp_tokens) + 200;
    double kernels = (forks + 1) * c->n, pass = 0.5;
    double gpu = kernels * (w.slots.service_s[0] + pass * w.slots.service_s[1]);
    fprintf(stderr,
            "calibrate: estimate for %d task%s: about %.0fk tokens (%.0fk reasoning, %.0f forks a "
            "task of ~%.0f tokens, %.0fk for the rate ramp), %.0f kernels, about %.1f GPU-hours "
            "of validation and timing (at %.0f s and %.0f s a job, half of them correct); "
            "figures of the reference workload: a model that thinks longer costs more. Caps: "
            "%s tokens, %s.\n",
            c->n, c->n == 1 ? "" : "s", (per * c->n + ramp) / 1e3, r * c->n / 1e3, forks,
            w.fork_tokens, ramp / 1e3, kernels, gpu / 3600, w.slots.service_s[0],
            w.slots.service_s[1], c->max_tokens ? "--max-tokens-total" : "no cap on",
            c->budget_ns ? "--budget-time" : "no time cap");
}

static void on_pool_event(void *arg, json_t *ev) {
    cal *c = arg;
    if (!c->failed && sg_calib_service_event(c->db, c->campaign, ev, &c->err) < 0) c->failed = 1;
    const char *name = json_string_value(json_object_get(ev, "ev"));
    if (name && !strcmp(name, "job_end"))
        c->gpu_s += json_number_value(json_object_get(ev, "service_s"));
    json_decref(ev);
}

typedef struct ctask {
    cal *c;
    int64_t id;
    const char *name;
    sg_calib_task *ct;
    uint64_t tick; /* the budget check's timer, re-armed each second: cancelled at the end */
} ctask;

static void on_task_done(void *arg, const sg_calib_out *o) {
    ctask *t = arg;
    cal *c = t->c;
    sg_err *e = &c->err;
    json_object_set_new(o->trace, "task", json_integer((json_int_t)t->id));
    json_object_set_new(o->trace, "campaign", json_integer((json_int_t)c->campaign));
    if (sg_results_calib_row(c->db, "calib_trace", o->trace, e) < 0 ||
        sg_calib_write_rows(c->db, "calib_point", o->points, "task", t->id, e) < 0 ||
        sg_calib_write_rows(c->db, "calib_fork", o->forks, "task", t->id, e) < 0 ||
        sg_results_calib_task_end(c->db, t->id, o->error[0] ? "error" : "done", o->error, e) < 0 ||
        sg_results_flush(c->db, e) < 0 ||
        (c->traces && o->replay && sg_calib_write_trace(c->traces, t->name, o->replay, e) < 0))
        c->failed = 1;
    size_t nf = json_array_size(o->forks);
    fprintf(stderr, "calibrate: %s: %lld reasoning tokens, %zu kernels judged%s%s\n", t->name,
            (long long)json_integer_value(json_object_get(o->trace, "reasoning_tokens")), nf,
            o->error[0] ? "; error: " : "", o->error);
    c->done = 1;
    sg_loop_stop(c->loop);
}

/* Every second: the budgets. */
static void on_tick(sg_loop *loop, void *arg) {
    ctask *t = arg;
    cal *c = t->c;
    uint64_t used = c->tokens + (t->ct ? sg_calib_task_tokens(t->ct) : 0);
    if ((c->max_tokens && used >= c->max_tokens) ||
        (c->budget_ns && sg_loop_now(loop) - c->t0 >= c->budget_ns)) {
        c->budget = 1;
        sg_loop_stop(loop);
        return;
    }
    t->tick = sg_loop_timer(loop, SG_SEC, on_tick, t);
}

/* One task to its end (or the budget): 0, 1 when it was already done (resume), -1 (err). */
static int run_task(cal *c, int i, sg_err *err) {
    sg_run_config rc = c->rc;
    rc.task = c->dirs[i];
    sg_run_task rt;
    char status[32] = "";
    const char *name = strrchr(c->dirs[i], '/') + 1;
    int64_t id =
        c->resume ? sg_results_task_find(c->db, c->campaign, name, status, sizeof status, err) : 0;
    if (id < 0) return -1;
    if (id > 0 && !strcmp(status, "done")) return 1;
    if (id > 0 &&
        (sg_results_calib_reset(c->db, id, err) < 0 || sg_results_task_reset(c->db, id, err) < 0))
        return -1;
    if (sg_run_task_load(&rc, &rt, err) < 0) return -1;
    int rcode = -1;
    sg_dev_port dp;
    sg_port_dev *pd = NULL;
    ctask t = {.c = c, .name = rt.name, .id = id};
    if ((!t.id && (t.id = sg_results_task_begin(c->db, c->campaign, rt.name, rt.dir, err)) < 0) ||
        /* no racing: calibration wants every kernel's full timing, not a verdict against a best */
        !(pd = sg_run_dev_port_new(c->loop, &c->pool, i, &c->p, &rt, 0, 0, &dp, err)))
        goto done;
    sg_task_config tc;
    sg_run_task_config(&rc, &c->p, rt.spec.target_speedup, &tc);
    sg_task_spec spec;
    sg_run_task_spec(&rt, &spec);
    spec.name = rt.name;
    sg_calib_task_config cc = {.loop = c->loop,
                               .llm = sg_run_llm_port(c->llm),
                               .dev = &dp,
                               .tc = &tc,
                               .spec = &spec,
                               .interval_tokens = (uint64_t)c->interval,
                               .max_forks = (int)c->max_forks,
                               .done = on_task_done,
                               .arg = &t};
    c->done = 0;
    if (!(t.ct = sg_calib_task_start(&cc, err))) goto done;
    t.tick = sg_loop_timer(c->loop, SG_SEC, on_tick, &t);
    while (!c->done && !c->budget && !c->failed)
        if (sg_loop_run(c->loop, err) < 0) break;
    sg_loop_timer_cancel(c->loop, t.tick); /* t is this frame's: no tick may outlive it */
    c->tokens += sg_calib_task_tokens(t.ct);
    if (c->failed) *err = c->err;
    rcode = c->done && !c->failed ? 0 : c->budget ? 0 : -1;
    if (!c->done) sg_calib_task_cancel(t.ct);
done:
    sg_port_dev_free(pd); /* its jobs cancelled, no callback */
    sg_calib_task_free(t.ct);
    sg_run_task_free(&rt);
    return rcode;
}

static void on_ramp(void *arg, json_t *rows, const char *error) {
    cal *c = arg;
    if (error) {
        sg_errf(&c->err, "calibrate: the rate ramp failed: %s", error);
        c->failed = 1;
    } else if (sg_calib_write_rows(c->db, "calib_rate", rows, "campaign", c->campaign, &c->err) <
               0) {
        c->failed = 1;
    }
    c->done = 1;
    sg_loop_stop(c->loop);
}

/* The decode ramp and prefill probes on the endpoint. */
static int run_ramp(cal *c, sg_err *err) {
    uint64_t p = (uint64_t)c->probe_tokens;
    const uint64_t probes[] = {p / 12 > 0 ? p / 12 : 1, p / 3 > 0 ? p / 3 : 1, p};
    sg_fork_request fork = {.tmpl = &c->p.tmpl,
                            .system = "You write GPU kernels.",
                            .user = "Say OK.",
                            .answer_prefix = "OK",
                            .stop = (const char *const *)c->p.tmpl.stop,
                            .nstop = c->p.tmpl.nstop,
                            .temperature = 0};
    sg_calib_ramp_config rc = {
        .loop = c->loop,
        .llm = sg_run_llm_port(c->llm),
        .system = "You write GPU kernels.",
        .user = "Think step by step, at length, about how to make a softmax kernel fast on a GPU.",
        .fork = &fork,
        .max_streams = (int)c->ramp_streams,
        .tokens = (uint64_t)c->ramp_tokens,
        .probe_tokens = probes,
        .nprobe = 3,
        .done = on_ramp,
        .arg = c};
    c->done = 0;
    sg_calib_ramp *r = sg_calib_ramp_start(&rc, err);
    if (!r) return -1;
    while (!c->done && !c->failed)
        if (sg_loop_run(c->loop, err) < 0) break;
    sg_calib_ramp_free(r);
    if (c->failed) *err = c->err;
    return c->done && !c->failed ? 0 : -1;
}

static int open_campaign(cal *c, sg_err *err) {
    const char *path = c->rc.db && *c->rc.db ? c->rc.db : SG_RESULTS_DEFAULT_DB;
    if (sg_results_open(path, 0, &c->db, err) < 0) return -1;
    if (c->resume) {
        char suite[4096];
        json_t *cfg = NULL;
        if (sg_results_campaign_get(c->db, c->resume, suite, sizeof suite, &cfg, err) < 0)
            return -1;
        json_decref(cfg);
        c->campaign = c->resume;
        return 0;
    }
    json_t *cfg = sg_run_config_json(&c->rc);
    json_object_set_new(cfg, "interval_tokens", json_integer(c->interval));
    c->campaign = sg_results_campaign_begin(c->db, "calibrate", c->suite, cfg, err);
    json_decref(cfg);
    return c->campaign < 0 ? -1 : 0;
}

static int calibrate(cal *c, sg_err *err) {
    if (list_suite(c, err) < 0 || open_campaign(c, err) < 0) return -1;
    estimate(c);
    sg_dev_lang lang = c->rc.device == SG_RUN_DEVICE_AUTO
                           ? (sg_run_cuda_usable() ? SG_DEV_CUDA : SG_DEV_OPENCL)
                           : (sg_dev_lang)c->rc.device;
    c->rc.device = (int)lang;
    if (sg_run_prompts_load(&c->rc, &c->p, err) < 0 || !(c->loop = sg_loop_new_real(err)) ||
        sg_run_pool_new(c->loop, &c->rc, lang, &c->pool, err) < 0 ||
        !(c->llm = sg_run_llm_new(c->loop, &c->rc, &c->p, err)))
        return -1;
    sg_pool_on_event(c->pool.sched, on_pool_event, c);
    c->t0 = sg_loop_now(c->loop);
    fprintf(stderr, "calibrate: campaign %lld, %d tasks of %s, %s\n", (long long)c->campaign, c->n,
            c->suite, sg_dev_lang_name(lang));
    for (int i = 0; i < c->n && !c->budget; i++) {
        int r = run_task(c, i, err);
        if (r < 0) return -1;
        if (r == 1) fprintf(stderr, "calibrate: %s: done before (resume)\n", c->dirs[i]);
    }
    int64_t rates = c->resume ? sg_results_calib_rates(c->db, c->campaign, err) : 0;
    if (rates < 0) return -1;
    if (rates > 0) fprintf(stderr, "calibrate: the rate ramp ran before (resume)\n");
    if (!c->budget && !rates && c->ramp_streams > 0 && run_ramp(c, err) < 0) return -1;
    sg_pool_on_event(c->pool.sched, NULL, NULL);
    fprintf(stderr,
            "calibrate: spent %.1fk tokens on the tasks and %.1f s of validation and timing "
            "(%.2f GPU-hours) in %.0f s\n",
            (double)c->tokens / 1e3, c->gpu_s, c->gpu_s / 3600,
            (double)(sg_loop_now(c->loop) - c->t0) / 1e9);
    if (c->budget)
        fprintf(stderr, "calibrate: a budget ended it; continue with --resume %lld\n",
                (long long)c->campaign);
    return sg_results_campaign_end(c->db, c->campaign, c->budget ? "budget" : "done", err);
}

static void cal_free(cal *c) {
    if (c->pool.sched) sg_pool_on_event(c->pool.sched, NULL, NULL);
    if (c->db) sg_results_close(c->db, NULL);
    sg_run_pool_free(&c->pool);
    sg_run_llm_free(c->llm);
    sg_loop_free(c->loop);
    sg_run_prompts_free(&c->p);
    for (int i = 0; i < c->n; i++) free(c->dirs[i]);
    free(c->dirs);
}

/* calibrate's own options, then optimize's (opts: room for SG_RUN_NOPTS + 16). */
static void options(cal *c, sg_run_opts *ro, sg_opt *opts) {
    const sg_opt own[] = {
        {.name = "tasks",
         .kind = SG_OPT_STR,
         .out = &c->glob,
         .metavar = "GLOB",
         .help = "only the task folders whose name matches",
         .def = "all"},
        {.name = "resume",
         .kind = SG_OPT_INT,
         .out = &c->resume,
         .metavar = "ID",
         .help = "continue calibration campaign ID (same suite): finished tasks are kept",
         .min = 1,
         .max = 1e9},
        {.name = "out",
         .kind = SG_OPT_STR,
         .out = &c->rc.out_dir,
         .metavar = "DIR",
         .help = "output folder",
         .def = "specgen-out/TASK",
         .short_name = 'o'},
        {.name = "max-tokens-total",
         .kind = SG_OPT_COUNT,
         .out = &c->max_tokens,
         .metavar = "N",
         .help = "stop once the calibration has generated N tokens",
         .def = "no cap",
         .min = 1,
         .max = 1e12,
         .units = "tokens"},
        {.name = "budget-time",
         .kind = SG_OPT_DURATION,
         .out = &c->budget_ns,
         .metavar = "T",
         .help = "stop after T of wall time",
         .def = "no cap",
         .min = SG_SEC,
         .max = 365 * 24 * 3600 * SG_SEC},
        {.name = "interval-tokens",
         .kind = SG_OPT_INT,
         .out = &c->interval,
         .metavar = "N",
         .help = "the control: also fork every N reasoning tokens (0: not)",
         .def = "1000",
         .min = 0,
         .max = 1000000,
         .units = "tokens"},
        {.name = "max-forks",
         .kind = SG_OPT_INT,
         .out = &c->max_forks,
         .metavar = "N",
         .help = "at most N forks a task (0: every trigger point)",
         .def = "0",
         .min = 0,
         .max = 100000},
        {.name = "ramp-streams",
         .kind = SG_OPT_INT,
         .out = &c->ramp_streams,
         .metavar = "N",
         .help = "the rate ramp's most streams at once (0: no ramp, no prefill probes)",
         .def = "64",
         .min = 0,
         .max = 4096},
        {.name = "ramp-tokens",
         .kind = SG_OPT_INT,
         .out = &c->ramp_tokens,
         .metavar = "N",
         .help = "tokens each ramp stream is measured over",
         .def = "256",
         .min = 8,
         .max = 100000,
         .units = "tokens"},
        {.name = "probe-tokens",
         .kind = SG_OPT_INT,
         .out = &c->probe_tokens,
         .metavar = "N",
         .help = "the largest prefill probe, in words of filler (the others N/12 and N/3; keep "
                 "it within the server's context)",
         .def = "3000",
         .min = 12,
         .max = 10000000,
         .units = "tokens"},
        {.name = "export-traces",
         .kind = SG_OPT_STR,
         .out = &c->traces,
         .metavar = "DIR",
         .help = "write each task's reasoning trace as replay JSONL, DIR/TASK.jsonl "
                 "(replay-llm --trace, sim --traces)"},
    };
    size_t n = sizeof own / sizeof *own;
    memcpy(opts, own, sizeof own);
    sg_run_opts_table(ro, &c->rc, 1, opts + n);
}

int sg_cmd_calibrate(int argc, char **argv) {
    cal c = {.interval = 1000, .ramp_streams = 64, .ramp_tokens = 256, .probe_tokens = 3000};
    sg_run_config_default(&c.rc);
    c.rc.log_name = "specgen calibrate";
    c.rc.quiet = 1;
    sg_run_opts ro;
    sg_run_opts_default(&ro, &c.rc);
    sg_opt opts[SG_RUN_NOPTS + 16];
    memset(opts, 0, sizeof opts);
    options(&c, &ro, opts);
    const sg_cmd_spec spec = {"calibrate",
                              "SUITE_DIR",
                              "Measure a model and cluster for the simulator: every trigger point "
                              "forked, rates, service times.",
                              details,
                              opts,
                              1,
                              1};
    char **pos;
    int npos;
    int rcode = sg_cli_parse(&spec, argc, argv, &pos, &npos);
    if (rcode == SG_CLI_HELP) return 0;
    if (rcode) return 2;
    sg_err err;
    if (sg_run_opts_apply(&ro, &c.rc, &err) < 0) return sg_cli_fail(&spec, 2, "%s", err.msg);
    c.suite = pos[0];
    int rc = calibrate(&c, &err);
    cal_free(&c);
    char shown[1200];
    if (rc < 0) return sg_cli_fail(&spec, 1, "%s", sg_redact_ctrl(shown, sizeof shown, err.msg));
    fprintf(stderr, "calibrate: recorded; fit it with: specgen sim fit --db %s -o measured.json\n",
            c.rc.db && *c.rc.db ? c.rc.db : SG_RESULTS_DEFAULT_DB);
    return 0;
}
