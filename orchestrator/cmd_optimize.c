/* `specgen optimize TASK_DIR|KERNEL.cu`: the main job. Sets up the ports (an LLM
 * endpoint or the embedded replay of the demo trace; the validator's workers with the
 * profiler), runs one task on the real loop, shows progress, writes the results. */
#include "common/cuda.h"
#include "common/json.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/paths.h"
#include "common/cli.h"
#include "orchestrator/commands.h"
#include "common/curl_loop.h"
#include "llm/llm.h"
#include "orchestrator/optimize_ui.h"
#include "orchestrator/port_dev.h"
#include "orchestrator/port_llm.h"
#include "replay/replay.h"
#include "orchestrator/task.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

static const char details[] =
    "TASK_DIR holds task.json, a baseline and a reference (suites/builtin/*, suites/demo/*).\n"
    "A kernel file (.cu or .cl) works too: a task folder is made from its signature first\n"
    "(as `specgen task init` does) in OUT/task.\n"
    "\n"
    "Without --llm, specgen serves the demo's scripted reasoning trace itself\n"
    "(prompts/traces/, as `specgen replay-llm` would), so the whole mechanism runs on any\n"
    "machine: reasoning streams, forks fire, kernels are validated and timed for real.\n"
    "With --llm, any OpenAI-compatible server (vLLM, SGLang, llama.cpp) is used; several\n"
    "URLs may be given, comma-separated. The API key comes from $SPECGEN_API_KEY or\n"
    "$OPENAI_API_KEY.\n"
    "\n"
    "Policies: specgen (fork short generations from the reasoning, stop it early),\n"
    "sequential (one reasoning stream per iteration, its final kernel only), parallel:N\n"
    "(N independent reasoning streams). --no-fork and --no-early-stop are ablations.\n"
    "\n"
    "Writes OUT/best.cl (or .cu), OUT/events.jsonl (every event) and OUT/summary.json.\n"
    "Ctrl-C (or SIGTERM) stops gracefully: generations are aborted, running jobs finish,\n"
    "and the results so far are written. Exit status: 0 when the task ran (target met or\n"
    "not), 1 on an error, 2 on bad usage, 130 when it was stopped.\n"
    "\n"
    "Examples:\n"
    "  specgen optimize suites/demo/vector_scale\n"
    "  specgen optimize suites/builtin/softmax --llm http://127.0.0.1:8000 --model Qwen/Qwen3-8B\n"
    "  specgen optimize my_kernel.cu --llm http://gpu-node:8000 --model deepseek-r1 --target 1.5\n";

typedef struct run {
    sg_loop *loop;
    sg_task *task;
    sg_ui ui;
    FILE *events;
    int finished;
    sg_task_stats final;
} run;

static void on_record(void *arg, json_t *ev) {
    run *r = arg;
    if (r->events) {
        json_dumpf(ev, r->events, JSON_COMPACT);
        fputc('\n', r->events);
        fflush(r->events); /* every event on disk: a killed run keeps its trace */
    }
    sg_ui_event(&r->ui, ev);
}

static void on_progress(void *arg, const sg_task_stats *s) {
    run *r = arg;
    sg_ui_progress(&r->ui, s, sg_loop_now(r->loop));
}

static void on_finished(void *arg, const sg_task_stats *s) {
    run *r = arg;
    r->final = *s;
    r->finished = 1;
    sg_loop_stop(r->loop);
}

static void on_signal(sg_loop *loop, int fd, unsigned ev, void *arg) {
    run *r = arg;
    struct signalfd_siginfo si;
    if (read(fd, &si, sizeof si) != sizeof si) return;
    fprintf(stderr, "\nspecgen optimize: %s — stopping (waiting for running jobs)...\n",
            strsignal((int)si.ssi_signo));
    if (r->task) sg_task_cancel(r->task);
}

static const char *template_for(const char *model) {
    if (!model) return "generic";
    char low[256];
    size_t i = 0;
    for (; model[i] && i < sizeof low - 1; i++) low[i] = (char)(model[i] | 0x20);
    low[i] = '\0';
    if (strstr(low, "deepseek")) return "deepseek-r1";
    if (strstr(low, "glm")) return "glm";
    if (strstr(low, "qwen") || strstr(low, "qwq") || !strcmp(low, "replay")) return "qwen3";
    return "generic";
}

int sg_cmd_optimize(int argc, char **argv) {
    const char *llm_urls = NULL, *model = NULL, *tmpl_name = NULL, *device = NULL,
               *policy_s = "specgen";
    const char *out_dir = NULL, *prompts_opt = NULL, *trace_opt = NULL, *trigger_file = NULL;
    const char *fork_mode = "completions";
    double target = 0, speed = 1.0;
    int64_t budget_time = 30LL * 60 * SG_SEC, iterations = 5, slots = 1, max_tokens = 0;
    uint64_t budget_tokens = 500000;
    int no_fork = 0, no_early_stop = 0;
    const sg_opt opts[] = {
        {"llm", SG_OPT_STR, &llm_urls, "URL[,URL]", "OpenAI-compatible endpoint(s)",
         "the embedded replay", NULL},
        {"model", SG_OPT_STR, &model, "NAME", "model name the server knows", "replay", NULL},
        {"template", SG_OPT_STR, &tmpl_name, "NAME", "chat template: qwen3|deepseek-r1|glm|generic",
         "from --model", NULL},
        {"target", SG_OPT_DOUBLE, &target, "X", "target speedup over the baseline", "the task's",
         NULL},
        {"budget-time", SG_OPT_DURATION, &budget_time, "T", "wall-time budget", "30m", NULL},
        {"budget-tokens", SG_OPT_COUNT, &budget_tokens, "N", "token budget (reasoning + forks)",
         "500k", NULL},
        {"iterations", SG_OPT_INT, &iterations, "N", "most iterations", "5", NULL},
        {"max-tokens", SG_OPT_INT, &max_tokens, "N", "cap on each reasoning stream's tokens",
         "the server's", NULL},
        {"device", SG_OPT_STR, &device, "cuda|opencl", "device backend",
         "cuda with a GPU, else opencl", NULL},
        {"slots", SG_OPT_INT, &slots, "N", "validation/profiling workers", "1", NULL},
        {"policy", SG_OPT_STR, &policy_s, "P", "specgen|sequential|parallel:N", "specgen", NULL},
        {"no-fork", SG_OPT_FLAG, &no_fork, NULL, "ablation: never fork", NULL, NULL},
        {"no-early-stop", SG_OPT_FLAG, &no_early_stop, NULL,
         "ablation: never cut an iteration short", NULL, NULL},
        {"fork-mode", SG_OPT_STR, &fork_mode, "M",
         "completions (raw prompt) or continue (chat, continue_final_message)", "completions",
         NULL},
        {"trigger", SG_OPT_STR, &trigger_file, "FILE", "trigger rules (JSON)",
         "prompts/trigger.json", NULL},
        {"out", SG_OPT_STR, &out_dir, "DIR", "output folder", "specgen-out/TASK", NULL},
        {"prompts", SG_OPT_STR, &prompts_opt, "DIR", "prompt and template folder",
         "specgen's prompts/", NULL},
        {"trace", SG_OPT_STR, &trace_opt, "FILE|DIR", "replay trace(s) for the embedded LLM",
         "prompts/traces", NULL},
        {"speed", SG_OPT_DOUBLE, &speed, "X", "embedded replay speed (2 = twice as fast)", "1",
         NULL},
        {NULL, 0, NULL, NULL, NULL, NULL, NULL},
    };
    const sg_cmd_spec spec = {
        "optimize",
        "TASK_DIR|KERNEL",
        "Make one kernel faster: the reasoning model's thinking is forked into short generations "
        "whose kernels are validated and timed while it thinks.",
        details,
        opts,
        1,
        1};
    char **pos;
    int npos;
    int rc = sg_cli_parse(&spec, argc, argv, &pos, &npos);
    if (rc == SG_CLI_HELP) return 0;
    if (rc) return 2;
    sg_err err;
    sg_policy policy;
    if (sg_policy_parse(policy_s, &policy, &err) < 0)
        return sg_cli_fail(&spec, 2, "--policy: %s", err.msg);
    if (no_fork) policy.fork = 0;
    if (iterations < 1 || iterations > 1000)
        return sg_cli_fail(&spec, 2, "--iterations: '%lld' must be 1..1000", (long long)iterations);
    if (slots < 1 || slots > 64)
        return sg_cli_fail(&spec, 2, "--slots: '%lld' must be 1..64", (long long)slots);
    if (strcmp(fork_mode, "completions") && strcmp(fork_mode, "continue"))
        return sg_cli_fail(&spec, 2, "--fork-mode: '%s' is not completions or continue", fork_mode);
    if (max_tokens < 0)
        return sg_cli_fail(&spec, 2, "--max-tokens: '%lld' must be 0 or more",
                           (long long)max_tokens);
    if (!(speed > 0)) return sg_cli_fail(&spec, 2, "--speed: must be above 0");
    if (llm_urls && !model)
        return sg_cli_fail(&spec, 2, "--llm needs --model (the name the server serves)");

    char prompts[4096];
    if (prompts_opt)
        snprintf(prompts, sizeof prompts, "%s", prompts_opt);
    else if (sg_data_dir("prompts", prompts, sizeof prompts, &err) < 0)
        return sg_cli_fail(&spec, 1, "%s", err.msg);

    /* ---- the task ---- */
    const char *arg = pos[0];
    struct stat st;
    if (stat(arg, &st) < 0) return sg_cli_fail(&spec, 1, "'%s': %s", arg, strerror(errno));
    char name_buf[256], out_buf[4096], task_dir[4096];
    snprintf(task_dir, sizeof task_dir, "%s", arg);
    if (!S_ISDIR(st.st_mode)) {
        const char *base = strrchr(arg, '/') ? strrchr(arg, '/') + 1 : arg;
        snprintf(name_buf, sizeof name_buf, "%.*s", (int)(strcspn(base, ".")), base);
    } else {
        size_t l = strlen(arg);
        while (l > 1 && arg[l - 1] == '/') l--;
        const char *b = arg + l;
        while (b > arg && b[-1] != '/') b--;
        snprintf(name_buf, sizeof name_buf, "%.*s", (int)(arg + l - b), b);
    }
    if (!out_dir) {
        snprintf(out_buf, sizeof out_buf, "specgen-out/%s", name_buf);
        out_dir = out_buf;
    }
    if (sg_mkdir_p(out_dir, &err) < 0) return sg_cli_fail(&spec, 1, "output folder: %s", err.msg);
    if (!S_ISDIR(st.st_mode)) {
        snprintf(task_dir, sizeof task_dir, "%s/task", out_dir);
        sg_buf report = {0};
        struct stat ts;
        if (stat(task_dir, &ts) == 0) {
            fprintf(stderr, "specgen optimize: using the task folder made earlier: %s\n", task_dir);
        } else if (sg_val_task_init(arg, task_dir, NULL, &report, &err) < 0) {
            sg_buf_free(&report);
            return sg_cli_fail(&spec, 1, "%s", err.msg);
        } else {
            fprintf(stderr, "specgen optimize: made a task from %s in %s; guessed:\n%s", arg,
                    task_dir, report.data ? report.data : "");
        }
        sg_buf_free(&report);
    }
    sg_val_task vt;
    if (sg_val_task_load(task_dir, &vt, &err) < 0) return sg_cli_fail(&spec, 1, "%s", err.msg);
    sg_dev_lang lang;
    if (device) {
        if (sg_dev_lang_parse(device, &lang, &err) < 0) {
            sg_val_task_free(&vt);
            return sg_cli_fail(&spec, 2, "--device: %s", err.msg);
        }
    } else {
        /* The symbols only, no cuInit: CUDA must not start in the process that forks workers. */
        lang = sg_cuda_driver_load(NULL) && vt.source[SG_DEV_CUDA] ? SG_DEV_CUDA : SG_DEV_OPENCL;
        if (!vt.source[lang]) lang = lang == SG_DEV_CUDA ? SG_DEV_OPENCL : SG_DEV_CUDA;
    }
    if (!vt.source[lang]) {
        sg_val_task_free(&vt);
        return sg_cli_fail(&spec, 1, "task %s has no %s baseline", task_dir,
                           sg_dev_lang_name(lang));
    }
    sg_buf baseline = {0};
    if (sg_buf_read_file(&baseline, vt.source[lang]) < 0) {
        sg_val_task_free(&vt);
        return sg_cli_fail(&spec, 1, "cannot read %s: %s", vt.source[lang], strerror(errno));
    }

    /* ---- configuration ---- */
    int status = 1;
    run r;
    memset(&r, 0, sizeof r);
    sg_replay_traces traces = {0};
    sg_replay_server *replay = NULL;
    sg_curl_loop *cl = NULL;
    sg_llm *llm = NULL;
    sg_val_pool *pool = NULL;
    sg_port_dev *pd = NULL;
    sg_feedback_templates fb = {0};
    sg_chat_template tmpl = {0};
    sg_task_prompts tp = {0};
    int sfd = -1;
    uint64_t full_tokens = 0;
    char url_buf[128];
    const char *urls[16];
    size_t nurls = 0;
    char *urls_copy = NULL;

    sg_task_config cfg = {.policy = policy, .feedback_last = 4};
    sg_criterion_default(&cfg.crit);
    cfg.crit.target_speedup =
        target > 0 ? target : (vt.target_speedup > 0 ? vt.target_speedup : 2.0);
    cfg.crit.budget_ns = budget_time;
    cfg.crit.budget_tokens = budget_tokens;
    cfg.crit.max_iterations = (int)iterations;
    cfg.crit.early_stop = !no_early_stop;
    sg_trigger_config_default(&cfg.trigger);
    char trig_path[4200];
    snprintf(trig_path, sizeof trig_path, "%s/trigger.json", prompts);
    if (sg_trigger_config_load(trigger_file ? trigger_file : trig_path, &cfg.trigger, &err) < 0)
        goto fail;
    if (!model) model = "replay";
    if (sg_template_load(prompts, tmpl_name ? tmpl_name : template_for(model), &tmpl, &err) < 0)
        goto fail;
    if (sg_task_prompts_load(prompts, &tp, &err) < 0 || sg_feedback_load(prompts, &fb, &err) < 0)
        goto fail;
    cfg.tmpl = &tmpl;
    cfg.prompts = &tp;

    /* Ctrl-C and SIGTERM become loop events (a graceful stop). They are blocked before any
     * thread starts (the replay server's, the device port's), so that no thread can take
     * them with the default action and kill the process without a summary. */
    sigset_t sigs;
    sg_proc_block_stop_signals(&sigs);
    r.loop = sg_loop_new_real(&err);
    if (!r.loop) goto fail;

    /* ---- the LLM: given endpoints, or the embedded replay ---- */
    if (llm_urls) {
        urls_copy = strdup(llm_urls);
        for (char *save = NULL, *u = strtok_r(urls_copy, ",", &save); u && nurls < 16;
             u = strtok_r(NULL, ",", &save))
            urls[nurls++] = u;
    } else {
        char trace_dir[4200];
        snprintf(trace_dir, sizeof trace_dir, "%s/traces", prompts);
        if (sg_replay_load(trace_opt ? trace_opt : trace_dir, &traces, &err) < 0) goto fail;
        sg_replay_config rc2 = {
            .host = "127.0.0.1", .port = 0, .speed = speed, .dialect = SG_REPLAY_VLLM};
        replay = sg_replay_start(&traces, &rc2, &err);
        if (!replay) goto fail;
        snprintf(url_buf, sizeof url_buf, "http://127.0.0.1:%d", sg_replay_port(replay));
        urls[nurls++] = url_buf;
        const sg_replay_trace *tr = sg_replay_select(&traces, model, vt.name);
        if (tr) full_tokens = tr->reasoning.n;
        fprintf(
            stderr,
            "specgen optimize: no --llm given: serving the scripted trace %s at %s (speed %gx)\n",
            tr ? tr->file : "(none matches)", url_buf, speed);
    }
    cl = sg_curl_loop_new(r.loop, &err);
    if (!cl) goto fail;
    sg_llm_config lc = {.urls = urls, .n_urls = nurls};
    llm = sg_llm_new(cl, &lc, &err);
    if (!llm) goto fail;
    sg_port_llm pl = {.llm = llm,
                      .model = model,
                      .reasoning_max_tokens = max_tokens,
                      .reasoning_temperature = -1};
    sg_llm_port lport;
    sg_port_llm_init(&pl, &lport);

    /* ---- the device ---- */
    sg_dev_opts po;
    sg_dev_opts_default(&po);
    po.kinds = sg_prof_kinds; /* validate and profile */
    po.nkinds = 2;
    po.device = lang;
    po.slots = (int)slots;
    if (sg_val_pool_new(&po, &pool, &err) < 0) goto fail;
    sg_port_dev_config dc = {
        .loop = r.loop, .pool = pool, .slots = (int)slots, .task_dir = task_dir, .fb = &fb};
    sg_prof_opts_default(&dc.prof);
    sg_dev_port dport;
    pd = sg_port_dev_new(&dc, &dport, &err);
    if (!pd) goto fail;

    /* ---- run ---- */
    char path[4200];
    snprintf(path, sizeof path, "%s/events.jsonl", out_dir);
    r.events = fopen(path, "w");
    if (!r.events) {
        sg_errf(&err, "cannot write %s: %s", path, strerror(errno));
        goto fail;
    }
    sg_ui_init(&r.ui, stderr);
    sg_task_spec ts = {vt.name, sg_dev_lang_name(lang), vt.description ? vt.description : "",
                       baseline.data};
    sg_task_hooks hooks = {on_record, on_progress, on_finished, &r};
    r.task = sg_task_new(r.loop, &cfg, &ts, &lport, &dport, &hooks, &err);
    if (!r.task) goto fail;
    sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd >= 0) sg_loop_fd_watch(r.loop, sfd, SG_EV_READ, on_signal, &r, NULL);
    char pol[32];
    fprintf(stderr,
            "specgen optimize: task %s (%s), policy %s, target %.2fx, model %s, template %s\n",
            vt.name, ts.lang, sg_policy_name(&policy, pol, sizeof pol), cfg.crit.target_speedup,
            model, tmpl.name);
    if (sg_task_start(r.task, &err) < 0) goto fail;
    while (!r.finished) {
        if (sg_loop_run(r.loop, &err) < 0) goto fail;
    }
    if (sfd >= 0) sg_loop_fd_unwatch(r.loop, sfd);

    /* ---- results ---- */
    const char *ext = lang == SG_DEV_CUDA ? "cu" : "cl";
    snprintf(path, sizeof path, "%s/best.%s", out_dir, ext);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(sg_task_best_kernel(r.task), f);
        fclose(f);
    }
    sg_ui_summary(&r.ui, &r.final, path, pol, full_tokens);
    char spath[4200];
    snprintf(spath, sizeof spath, "%s/summary.json", out_dir);
    json_t *sum = json_pack(
        "{s:s,s:s,s:s,s:s,s:f,s:f,s:i,s:s,s:i,s:i,s:i,s:i,s:I,s:I,s:f,s:f,s:s}", "task", vt.name,
        "lang", ts.lang, "policy", pol, "model", model, "target", cfg.crit.target_speedup,
        "best_speedup", r.final.best_speedup, "iterations", r.final.iteration, "end",
        r.final.error[0]    ? "error"
        : r.final.cancelled ? "cancelled"
                            : sg_crit_name(r.final.end_reason),
        "candidates", r.final.candidates, "correct", r.final.correct, "forks",
        r.final.forks_started, "early_stops", r.final.early_stops, "reasoning_tokens",
        (json_int_t)r.final.reasoning_tokens, "tokens_total", (json_int_t)r.final.tokens_total,
        "elapsed_s", r.final.ended_ns / 1e9, "first_candidate_s", r.final.first_candidate_ns / 1e9,
        "best_kernel", path);
    json_dump_file(sum, spath, JSON_INDENT(2));
    json_decref(sum);
    status = r.final.error[0] ? 1 : r.final.cancelled ? 130 : 0;
    goto done;
fail:
    fprintf(stderr, "specgen optimize: %s\n", err.msg);
    status = 1;
done:
    if (sfd >= 0) close(sfd);
    sg_task_free(r.task);
    sg_port_dev_free(pd);
    sg_val_pool_free(pool);
    sg_llm_free(llm);
    sg_curl_loop_free(cl);
    if (replay) sg_replay_stop(replay);
    sg_replay_traces_free(&traces);
    if (r.events) fclose(r.events);
    sg_loop_free(r.loop);
    sg_feedback_free(&fb);
    sg_template_free(&tmpl);
    sg_task_prompts_free(&tp);
    sg_val_task_free(&vt);
    sg_buf_free(&baseline);
    free(urls_copy);
    return status;
}
