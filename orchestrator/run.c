/* run.c — a run's configuration, its prompt folder, its task, and sg_run_one. */
#include "orchestrator/run.h"

#include "common/paths.h"
#include "common/json.h"
#include "common/net.h"
#include "common/proc.h"
#include "common/redact.h"
#include "common/wfile.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

void sg_run_config_default(sg_run_config *c) {
    memset(c, 0, sizeof *c);
    c->model = "replay";
    c->fork_mode = SG_FORK_COMPLETIONS;
    c->speed = 1.0;
    c->device = SG_RUN_DEVICE_AUTO;
    c->slots_per_device = 1;
    c->db = SG_RESULTS_DEFAULT_DB;
    sg_pool_config_default(&c->pools);
    c->pool_timeout_ns = (int64_t)(SG_POOL_REMOTE_TIMEOUT_S * SG_SEC);
    c->policy = (sg_policy){.kind = SG_POLICY_SPECGEN, .streams = 1, .fork = 1};
    c->budget_ns = 30LL * 60 * SG_SEC;
    c->budget_tokens = 500000;
    c->first_token_timeout_ns = SG_RUN_FIRST_TOKEN_TIMEOUT_S * SG_SEC;
    c->iterations = 5;
    c->early_stop = 0; /* no cut on a gain: measured (docs/eval.md); --early-stop turns it on */
    c->log_name = "specgen optimize";
    c->temperature = c->top_p = c->fork_temperature = c->fork_top_p = -1; /* the defaults' */
    c->progress_interval_ns = 30 * SG_SEC;
    c->wake_batch_ns = 500 * SG_MS / 1000; /* --wake-batch: bench-llm, docs/llm-servers.md */
}

void sg_run_task_config(const sg_run_config *c, const sg_run_prompts *p, double task_target,
                        sg_task_config *cfg) {
    *cfg = (sg_task_config){.policy = c->policy, .feedback_last = 4};
    sg_criterion_default(&cfg->crit);
    if (c->target > 0)
        cfg->crit.target_speedup = c->target;
    else if (task_target > 0)
        cfg->crit.target_speedup = task_target;
    cfg->crit.budget_ns = c->budget_ns;
    cfg->crit.budget_tokens = c->budget_tokens;
    cfg->crit.max_iterations = c->iterations;
    cfg->crit.early_stop = c->early_stop;
    cfg->drop_stale = c->drop_stale;
    cfg->preempt_stale = c->preempt_stale;
    if (c->delta > 0) cfg->crit.delta = c->delta;
    cfg->trigger = p->trigger;
    if (c->spacing_tokens) cfg->trigger.min_spacing_tokens = c->spacing_tokens;
    if (c->in_flight) cfg->trigger.max_in_flight = c->in_flight;
    if (c->in_flight_idle) cfg->trigger.max_in_flight_idle = c->in_flight_idle;
    /* probe:K (sim's probe_tokens, or the policy's) and probe-exit:K's probes */
    uint64_t probe = c->probe_tokens ? c->probe_tokens : c->policy.probe;
    if (probe) { /* fixed-interval probing: no cue, no code block, no spacing rule,
                  * the built-in cap on forks in flight whatever the rules say */
        sg_trigger_config_default(&cfg->trigger);
        cfg->trigger.code_block = 0;
        cfg->trigger.transition = 0;
        cfg->trigger.interval_tokens = probe;
        cfg->trigger.min_spacing_tokens = 0;
        if (c->in_flight) cfg->trigger.max_in_flight = c->in_flight;
    }
    cfg->tmpl = &p->tmpl;
    cfg->prompts = &p->task;
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

int sg_run_prompts_load(const sg_run_config *c, sg_run_prompts *p, sg_err *err) {
    memset(p, 0, sizeof *p);
    if (c->prompts_dir)
        snprintf(p->dir, sizeof p->dir, "%s", c->prompts_dir);
    else if (sg_data_dir("prompts", p->dir, sizeof p->dir, err) < 0)
        return -1;
    sg_trigger_config_default(&p->trigger);
    char trig_path[4200];
    snprintf(trig_path, sizeof trig_path, "%s/trigger.json", p->dir);
    if (sg_trigger_config_load(c->trigger_file ? c->trigger_file : trig_path, &p->trigger, err) <
            0 ||
        sg_template_load(p->dir, c->template_name ? c->template_name : template_for(c->model),
                         &p->tmpl, err) < 0 ||
        sg_task_prompts_load(p->dir, &p->task, err) < 0 ||
        sg_feedback_load(p->dir, &p->fb, err) < 0)
        return -1;
    if (c->fork_temperature >= 0) p->task.fork_temperature = c->fork_temperature;
    if (c->fork_top_p > 0) p->task.fork_top_p = c->fork_top_p;
    return 0;
}

void sg_run_prompts_free(sg_run_prompts *p) {
    sg_feedback_free(&p->fb);
    sg_template_free(&p->tmpl);
    sg_task_prompts_free(&p->task);
}

/* CUDA only where the driver initialises and sees a GPU (asked in a child: CUDA must not
 * start in the process that forks the workers). A toolkit's stub libcuda loads but
 * cannot initialise. 0: why says why not. */
static int cuda_driver_present(sg_err *why);
int sg_run_cuda_usable(void) { return cuda_driver_present(NULL); }

static int cuda_driver_present(sg_err *why) {
    sg_dev_opts o;
    sg_dev_opts_default(&o);
    o.device = SG_DEV_CUDA;
    int n = sg_dev_count(&o, why);
    if (n == 0) sg_errf(why, "the CUDA driver sees no GPU");
    return n > 0;
}

int sg_run_import_state(const sg_val_init_opts *o, const char *task_dir) {
    const char *prec = o && o->precision ? o->precision : "fp32";
    const char *base = o && o->baseline ? o->baseline : "torch-eager";
    char path[4200];
    struct stat st;
    if (stat(task_dir, &st) < 0) return 1;
    snprintf(path, sizeof path, "%s/task.json", task_dir);
    json_t *j = json_load_file(path, 0, NULL);
    const char *had_p = json_string_value(json_object_get(j, "precision"));
    const char *had_b = json_string_value(json_object_get(json_object_get(j, "baseline"), "torch"));
    int again = !had_p || !had_b || strcmp(had_p, prec) || strcmp(had_b, base + 6);
    json_decref(j);
    return again ? 2 : 0;
}

/* A bare kernel becomes a task folder in OUT/task, once: a later run reuses it. A
 * KernelBench problem's too, made again when asked at another --precision or --baseline. */
static int make_task_dir(const sg_run_config *c, sg_run_task *t, sg_err *err) {
    snprintf(t->dir, sizeof t->dir, "%s/task", t->out_dir);
    sg_buf report = {0};
    struct stat ts;
    int rc = 0;
    int force = c->init && c->init->force;
    size_t n = strlen(c->task);
    sg_val_init_opts again = c->init ? *c->init : (sg_val_init_opts){0};
    const sg_val_init_opts *init = c->init;
    if (!force && n > 3 && !strcmp(c->task + n - 3, ".py") &&
        sg_run_import_state(c->init, t->dir) == 2) {
        fprintf(stderr,
                "%s: %s was imported at another --precision or --baseline: importing again\n",
                c->log_name, t->dir);
        again.force = force = 1;
        init = &again;
    }
    if (stat(t->dir, &ts) == 0 && !force) {
        if (!c->quiet) /* a campaign's task: the campaign imported it and said so */
            fprintf(stderr, "%s: using the task folder made earlier: %s%s\n", c->log_name, t->dir,
                    c->init && sg_val_init_hinted(c->init)
                        ? " (the hints given now are not applied to it: pass --force to make it "
                          "again with them)"
                        : "");
    } else if ((rc = sg_val_task_init(c->task, t->dir, init, &report, err)) == 0)
        fprintf(stderr, "%s: made a task from %s in %s; guessed:\n%s", c->log_name, c->task, t->dir,
                report.data ? report.data : "");
    sg_buf_free(&report);
    return rc;
}

/* A CUDA task with only local slots where CUDA cannot run: one message saying what can
 * be done instead (nothing would be validated, so the run would only fail later). */
static int cuda_unusable(const sg_run_task *t, sg_err *err) {
    sg_err why = {{0}};
    if (cuda_driver_present(&why)) return 0;
    sg_errf(err,
            "CUDA cannot run here (%s), and task %s is a CUDA task: optimize validates and "
            "times every candidate on a GPU. Run it on a machine with an NVIDIA GPU and its "
            "driver, or add one with --pool URL (`specgen pool` there)%s; `specgen validate %s "
            "--device cuda --compile-only --arch sm_90a` checks here that the task compiles",
            why.msg[0] ? why.msg : "no reason given", t->spec.name,
            t->spec.source[SG_DEV_OPENCL] ? "; --device opencl runs its OpenCL kernels here" : "",
            t->dir);
    return 1;
}

/* What the run writes in OUT (run_exec.c), refused before it starts when one is a device, a
 * FIFO, a link or a folder (SG_WFILE_REFUSED), rather than at its first write. */
static int out_files_ok(const sg_run_task *t, sg_err *err) {
    const char *const names[] = {"events.jsonl", "summary.json",
                                 t->lang == SG_DEV_CUDA ? "best.cu" : "best.cl"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", t->out_dir, names[i]);
        int rc = sg_wfile_check(path, "--out", err);
        if (rc < 0) return rc;
    }
    return 0;
}

int sg_run_task_load(const sg_run_config *c, sg_run_task *t, sg_err *err) {
    memset(t, 0, sizeof *t);
    const char *arg = c->task;
    struct stat st;
    if (stat(arg, &st) < 0) return sg_errf(err, "'%s': %s", arg, strerror(errno));
    int is_dir = S_ISDIR(st.st_mode);
    if (!is_dir) { /* the file's name up to its first dot */
        const char *base = strrchr(arg, '/') ? strrchr(arg, '/') + 1 : arg;
        snprintf(t->name, sizeof t->name, "%.*s", (int)(strcspn(base, ".")), base);
    } else { /* the folder's last component, trailing slashes ignored */
        size_t l = strlen(arg);
        while (l > 1 && arg[l - 1] == '/') l--;
        const char *b = arg + l;
        while (b > arg && b[-1] != '/') b--;
        snprintf(t->name, sizeof t->name, "%.*s", (int)(arg + l - b), b);
    }
    if (c->out_dir)
        snprintf(t->out_dir, sizeof t->out_dir, "%s", c->out_dir);
    else
        snprintf(t->out_dir, sizeof t->out_dir, "specgen-out/%s", t->name);
    if (sg_mkdir_p(t->out_dir, err) < 0) return sg_err_prefix(err, "output folder");
    snprintf(t->dir, sizeof t->dir, "%s", arg);
    int rc = is_dir ? 0 : make_task_dir(c, t, err);
    if (rc < 0) return rc;
    if (sg_val_task_load(t->dir, &t->spec, err) < 0) return -1;
    if (c->device != SG_RUN_DEVICE_AUTO) {
        t->lang = (sg_dev_lang)c->device;
    } else {
        sg_err why = {{0}};
        int has_cuda = t->spec.source[SG_DEV_CUDA] != NULL;
        t->lang = has_cuda && cuda_driver_present(&why) ? SG_DEV_CUDA : SG_DEV_OPENCL;
        if (has_cuda && t->lang == SG_DEV_OPENCL && t->spec.source[SG_DEV_OPENCL])
            fprintf(stderr, "%s: CUDA cannot run here (%s): running on OpenCL instead\n",
                    c->log_name, why.msg[0] ? why.msg : "no reason given");
        if (!t->spec.source[t->lang] && !t->spec.torch_baseline)
            t->lang = t->lang == SG_DEV_CUDA ? SG_DEV_OPENCL : SG_DEV_CUDA;
        if (t->spec.torch_baseline && !t->spec.source[t->lang]) /* any language will do */
            t->lang = cuda_driver_present(NULL) ? SG_DEV_CUDA : SG_DEV_OPENCL;
    }
    if (t->spec.torch_baseline && !t->spec.source[t->lang])
        return sg_val_torch_prompt(&t->spec, &t->baseline, err) < 0 ? -1 : out_files_ok(t, err);
    if (!t->spec.source[t->lang])
        return sg_errf(err, "task %s has no %s baseline", t->dir, sg_dev_lang_name(t->lang));
    if (t->lang == SG_DEV_CUDA && !c->pool_urls && cuda_unusable(t, err)) return -1;
    if (sg_buf_read_file_max(&t->baseline, t->spec.source[t->lang], SG_SOURCE_MAX) < 0) {
        char why[sizeof err->msg];
        return sg_errf(err, "%s",
                       sg_read_error(why, sizeof why, t->spec.source[t->lang], SG_SOURCE_MAX));
    }
    long bad = sg_utf8_bad_at(t->baseline.data, t->baseline.len); /* it goes into prompts */
    if (bad >= 0)
        return sg_errf(err, "%s: not valid UTF-8 (byte 0x%02x at offset %ld); save it as UTF-8",
                       t->spec.source[t->lang], (unsigned char)t->baseline.data[bad], bad);
    return out_files_ok(t, err);
}

void sg_run_task_free(sg_run_task *t) {
    sg_val_task_free(&t->spec);
    sg_buf_free(&t->baseline);
}

void sg_run_task_spec(const sg_run_task *t, sg_task_spec *out) {
    sg_val_torch_mode m = t->spec.torch_baseline;
    *out = (sg_task_spec){.name = t->spec.name,
                          .lang = sg_dev_lang_name(t->lang),
                          .description = t->spec.description ? t->spec.description : "",
                          .baseline = t->baseline.data,
                          .baseline_kind = m == SG_VAL_TORCH_EAGER     ? "torch-eager"
                                           : m == SG_VAL_TORCH_COMPILE ? "torch-compile"
                                                                       : NULL,
                          .precision = m ? t->spec.precision : NULL,
                          .origin_format = t->spec.origin_format,
                          .origin_file = t->spec.origin_file,
                          .origin_sha256 = t->spec.origin_sha256};
}

typedef struct stopper {
    const sg_run_config *c;
    sg_run_exec *e;
    int signals;
} stopper;

static void on_signal(sg_loop *loop, int fd, unsigned ev, void *arg) {
    stopper *s = arg;
    struct signalfd_siginfo si;
    if (read(fd, &si, sizeof si) != sizeof si) return;
    if (++s->signals > 1) sg_run_force_exit(s->c->log_name, (int)si.ssi_signo);
    fprintf(stderr,
            "\n%s: %s — stopping (waiting for running jobs; send it again to force an exit)...\n",
            s->c->log_name, strsignal((int)si.ssi_signo));
    sg_run_exec_cancel(s->e);
}

/* A second stop signal while a job hangs: the user wants out now. Exiting kills the
 * workers (each has PR_SET_PDEATHSIG SIGKILL); best.EXT was written at each new best and
 * the results database is in WAL mode, so what was recorded survives. */
void sg_run_force_exit(const char *who, int signo) {
    fprintf(stderr, "\n%s: %s again — killing the workers and exiting now (status 130)\n", who,
            strsignal(signo));
    fflush(NULL);
    _exit(130);
}

json_t *sg_run_config_json(const sg_run_config *c) {
    char policy[32], pools[32];
    sg_policy_name(&c->policy, policy, sizeof policy);
    if (c->pools.mode == SG_POOL_STATIC)
        snprintf(pools, sizeof pools, "static:%d/%d", c->pools.static_validate,
                 c->pools.static_profile);
    else
        snprintf(pools, sizeof pools, "elastic");
    char *llm = sg_redact_url(c->llm_urls); /* stored and shown: no credentials */
    json_t *j = json_pack(
        "{s:s?,s:s?,s:s,s:s?,s:s,s:s,s:s,s:i,s:i,s:f,s:f,s:I,s:i,s:b}", "task", c->task, "llm", llm,
        "model", c->model, "template", c->template_name, "fork_mode",
        c->fork_mode == SG_FORK_CONTINUE ? "continue" : "completions", "policy", policy, "pools",
        pools, "slots_per_device", c->slots_per_device, "devices", c->devices, "target", c->target,
        "budget_s", (double)c->budget_ns / 1e9, "budget_tokens", (json_int_t)c->budget_tokens,
        "iterations", c->iterations, "early_stop", c->early_stop);
    free(llm);
    if (c->preempt_stale) json_object_set_new(j, "preempt_stale", json_true()); /* given only */
    if (c->pools.by_distance)
        json_object_set_new(j, "by_distance",
                            json_string(c->pools.by_distance > 0 ? "far" : "near"));
    const struct {
        const char *key;
        double v;
    } sampling[] = {{"temperature", c->temperature},
                    {"top_p", c->top_p},
                    {"fork_temperature", c->fork_temperature},
                    {"fork_top_p", c->fork_top_p}};
    for (size_t i = 0; i < sizeof sampling / sizeof *sampling; i++) /* given ones only */
        if (sampling[i].v >= 0) json_object_set_new(j, sampling[i].key, json_real(sampling[i].v));
    return j;
}

/* The results database of one optimize run: a campaign of one task. */
static int open_results(const sg_run_config *c, const sg_run_task *t, sg_results **db,
                        int64_t *campaign, int64_t *task, sg_err *err) {
    *db = NULL;
    if (!c->db || !*c->db || !strcmp(c->db, "none")) return 0;
    int rc = sg_results_open(c->db, 0, db, err);
    if (rc < 0) return rc;
    json_t *cfg = sg_run_config_json(c);
    *campaign = sg_results_campaign_begin(*db, "optimize", c->task, cfg, err);
    json_decref(cfg);
    if (*campaign < 0) return -1;
    *task = sg_results_task_begin(*db, *campaign, t->spec.name, t->dir, err);
    return *task < 0 ? -1 : 0;
}

int sg_run_metrics_start(sg_loop *loop, const sg_run_config *c, const char *command,
                         const sg_pool *pool, int ntasks, sg_metrics **out, sg_err *err) {
    *out = NULL;
    if (!c->metrics_listen) return 0;
    char *token = NULL;
    if (c->metrics_token_file &&
        !(token = sg_pool_token_read("--metrics-token-file", c->metrics_token_file, err)))
        return -1;
    sg_metrics *m = sg_metrics_new(command);
    sg_metrics_set_tasks(m, ntasks);
    sg_metrics_set_pool(m, pool);
    int rc = sg_metrics_listen(m, loop, c->metrics_listen, token, "--metrics-token-file", err);
    free(token);
    if (rc < 0) {
        sg_metrics_free(m);
        return -1;
    }
    char host[256];
    int port;
    sg_err e;
    if (sg_net_parse_hostport(c->metrics_listen, host, sizeof host, &port, &e) < 0) host[0] = 0;
    fprintf(stderr, "%s: metrics at http://%s%s%s:%d/metrics%s\n", c->log_name,
            strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "", sg_metrics_port(m),
            c->metrics_token_file ? " (token required)" : "");
    *out = m;
    return 0;
}

int sg_run_one(const sg_run_config *c, sg_task_stats *final, sg_err *err) {
    sg_run_prompts p;
    sg_run_task t;
    sg_loop *loop = NULL;
    sg_run_llm *llm = NULL;
    sg_run_pool pool = {0};
    sg_port_dev *pd = NULL;
    sg_run_exec *e = NULL;
    sg_results *db = NULL;
    sg_metrics *mx = NULL;
    int64_t campaign = 0, db_task = 0;
    int rc = -1, sfd = -1;
    memset(&p, 0, sizeof p);
    memset(&t, 0, sizeof t);
    memset(final, 0, sizeof *final);
    if (sg_run_prompts_load(c, &p, err) < 0 || (rc = sg_run_task_load(c, &t, err)) < 0 ||
        (rc = open_results(c, &t, &db, &campaign, &db_task, err)) < 0) {
        rc = rc == SG_WFILE_REFUSED ? rc : -1; /* a refused output path: exit 2 */
        goto done;
    }
    rc = -1;
    /* Ctrl-C and SIGTERM become loop events (a graceful stop). They are blocked before any
     * thread starts (the replay server's, the device port's), so that no thread can take
     * them with the default action and kill the process without a summary. */
    sigset_t sigs;
    sg_proc_block_stop_signals(&sigs);
    /* The pool first: it counts the devices in a child process, which is safest forked
     * before any thread (the replay server's) exists. */
    if (!(loop = sg_loop_new_real(err)) || sg_run_pool_new(loop, c, t.lang, &pool, err) < 0 ||
        !(llm = sg_run_llm_new(loop, c, &p, err)) ||
        sg_run_metrics_start(loop, c, "optimize", pool.sched, 1, &mx, err) < 0)
        goto done;
    uint64_t full_tokens;
    if (sg_run_llm_announce(llm, c, &t, &full_tokens, err) < 0) goto done;
    sg_dev_port dport;
    if (!(pd = sg_run_dev_port_new(loop, &pool, 0, &p, &t, !c->no_race, c->target, &dport, err)) ||
        !(e = sg_run_exec_start(loop, c, &p, &t, sg_run_llm_port(llm), &dport,
                                &(sg_run_links){db, campaign, db_task, pool.sched, pd, mx, 0, 0},
                                err)))
        goto done;
    sg_pool_on_event(pool.sched, sg_run_exec_pool_event, e);
    stopper stop = {c, e, 0};
    sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd >= 0) sg_loop_fd_watch(loop, sfd, SG_EV_READ, on_signal, &stop, NULL);
    while (!sg_run_exec_finished(e, final))
        if (sg_loop_run(loop, err) < 0) goto done;
    if (sfd >= 0) sg_loop_fd_unwatch(loop, sfd);
    rc = sg_run_exec_write(e, full_tokens, err); /* -1: an output file could not be written */
    if (db) {
        const char *status = final->error[0] || rc < 0 ? "error"
                             : final->cancelled        ? "stopped"
                                                       : "done";
        sg_err dbe;
        if (sg_run_exec_db_error(e)) {
            rc = sg_errf(err, "%s", sg_run_exec_db_error(e));
        } else if (sg_results_task_totals(db, db_task, (int64_t) final->reasoning_tokens,
                                          (int64_t) final->tokens_total, &dbe) < 0 ||
                   sg_results_task_prefix(db, db_task, (int64_t) final->fork_prompt_tokens,
                                          (int64_t) final->fork_cached_tokens,
                                          final->forks_cache_reported > 0, &dbe) < 0 ||
                   sg_results_campaign_end(db, campaign, status, &dbe) < 0) {
            if (rc == 0) rc = sg_errf(err, "%s", dbe.msg);
        }
    }
done:
    if (sfd >= 0) close(sfd);
    if (pool.sched) sg_pool_on_event(pool.sched, NULL, NULL); /* e goes first */
    sg_run_exec_free(e);
    sg_metrics_free(mx); /* before the pool it reads */
    if (db && sg_results_close(db, rc == 0 ? err : NULL) < 0) rc = -1;
    sg_port_dev_free(pd);
    sg_run_pool_free(&pool);
    sg_run_llm_free(llm);
    sg_loop_free(loop);
    sg_run_prompts_free(&p);
    sg_run_task_free(&t);
    return rc;
}
