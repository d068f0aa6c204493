/* The options optimize and campaign share, checked and turned into a run configuration
 * once, so both commands say the same thing about the same mistake. */
#include "orchestrator/run.h"

#include "common/net.h"
#include "llm/llm.h"

#include <stdlib.h>

#include <string.h>

void sg_run_opts_default(sg_run_opts *o, const sg_run_config *c) {
    memset(o, 0, sizeof *o);
    o->policy = "specgen";
    o->pools = "elastic";
    o->fork_mode = "completions";
    o->fork_ids = "auto";
    o->by_distance = "off";
    o->iterations = c->iterations;
    o->slots = c->slots_per_device;
    o->devices.count = c->devices;
}

/* --device and the backend a --devices list names (cuda:0,1) must agree; the list's
 * devices go to c. The ranges of the counts are the parser's (common/opts.c). */
static int apply_devices(const sg_run_opts *o, sg_run_config *c, sg_err *err) {
    const sg_devsel *d = &o->devices;
    const char *lang = o->device;
    if (d->lang[0] && lang && strcmp(lang, d->lang))
        return sg_errf(err, "--device %s and --devices %s:... name different backends", lang,
                       d->lang);
    if (d->lang[0]) lang = d->lang;
    sg_dev_lang l = SG_DEV_OPENCL;
    sg_err e;
    if (lang && sg_dev_lang_parse(lang, &l, &e) < 0) return sg_errf(err, "--device: %s", e.msg);
    c->device = lang ? (int)l : SG_RUN_DEVICE_AUTO;
    c->devices = d->count;
    c->device_ids = d->n ? d->idx : NULL;
    c->ndevice_ids = d->n;
    return 0;
}

int sg_run_opts_table(sg_run_opts *o, sg_run_config *c, int campaign, sg_opt *rows) {
    int n = 0;
    rows[n++] = sg_opt_shared(SG_OD_LLM, &c->llm_urls);
    rows[n++] = sg_opt_shared(SG_OD_MODEL, &o->model);
    rows[n++] = sg_opt_shared(SG_OD_TEMPLATE, &c->template_name);
    rows[n++] = sg_opt_shared(SG_OD_TARGET, &c->target);
    rows[n++] = sg_opt_shared_dep(SG_OD_TASK_BUDGET_TIME, &c->budget_ns,
                                  campaign ? "per-task-time" : "budget-time");
    rows[n++] = sg_opt_shared_dep(SG_OD_TASK_BUDGET_TOKENS, &c->budget_tokens,
                                  campaign ? "per-task-tokens" : "budget-tokens");
    rows[n++] = sg_opt_shared(SG_OD_ITERATIONS, &o->iterations);
    rows[n++] = sg_opt_shared(SG_OD_FIRST_TOKEN_TIMEOUT, &c->first_token_timeout_ns);
    rows[n++] = sg_opt_shared(SG_OD_MAX_TOKENS, &c->max_tokens);
    rows[n++] = sg_opt_shared(SG_OD_DEVICE, &o->device);
    rows[n++] = sg_opt_shared(SG_OD_DEVICES, &o->devices);
    rows[n++] = sg_opt_shared(SG_OD_SLOTS_PER_DEVICE, &o->slots);
    rows[n++] = sg_opt_shared(SG_OD_POOL, &c->pool_urls);
    rows[n++] = sg_opt_shared(SG_OD_POOL_TOKEN_FILE, &c->pool_token_file);
    rows[n++] = sg_opt_shared(SG_OD_POOL_CACERT, &c->pool_cacert);
    rows[n++] = sg_opt_shared(SG_OD_POOL_TIMEOUT, &c->pool_timeout_ns);
    rows[n++] = sg_opt_shared(SG_OD_NO_LOCAL, &o->no_local);
    rows[n++] = sg_opt_shared(SG_OD_POOLS, &o->pools);
    rows[n++] = sg_opt_shared(SG_OD_POLICY, &o->policy);
    rows[n++] = sg_opt_shared(SG_OD_NO_FORK, &o->no_fork);
    rows[n++] = sg_opt_shared(SG_OD_NO_RACE, &c->no_race);
    rows[n++] = sg_opt_shared(SG_OD_PREEMPT_STALE, &c->preempt_stale);
    rows[n++] = sg_opt_shared(SG_OD_BY_DISTANCE, &o->by_distance);
    rows[n++] = sg_opt_shared(SG_OD_NVRTC_PCH, &c->nvrtc_pch);
    rows[n++] = sg_opt_shared(SG_OD_EARLY_STOP, &o->early_stop);
    rows[n++] = sg_opt_shared(SG_OD_NO_EARLY_STOP, &o->no_early_stop);
    rows[n++] = sg_opt_shared(SG_OD_FORK_MODE, &o->fork_mode);
    rows[n++] = sg_opt_shared(SG_OD_FORK_IDS, &o->fork_ids);
    rows[n++] = sg_opt_shared(SG_OD_TRIGGER, &c->trigger_file);
    rows[n++] = sg_opt_shared(SG_OD_DB, &c->db);
    rows[n++] = sg_opt_shared(SG_OD_PROMPTS, &c->prompts_dir);
    rows[n++] = sg_opt_shared(SG_OD_TRACE, &c->trace);
    rows[n++] = sg_opt_shared(SG_OD_SPEED, &c->speed);
    rows[n++] = sg_opt_shared(SG_OD_API_KEY_FILE, &c->api_key_file);
    rows[n++] = sg_opt_shared(SG_OD_TEMPERATURE, &c->temperature);
    rows[n++] = sg_opt_shared(SG_OD_TOP_P, &c->top_p);
    rows[n++] = sg_opt_shared(SG_OD_FORK_TEMPERATURE, &c->fork_temperature);
    rows[n++] = sg_opt_shared(SG_OD_FORK_TOP_P, &c->fork_top_p);
    rows[n++] = sg_opt_shared(SG_OD_PROGRESS_INTERVAL, &c->progress_interval_ns);
    rows[n++] = sg_opt_shared(SG_OD_WAKE_BATCH, &c->wake_batch_ns);
    rows[n++] = sg_opt_shared(SG_OD_JSON, &c->json);
    rows[n++] = sg_opt_shared(SG_OD_METRICS_LISTEN, &c->metrics_listen);
    rows[n++] = sg_opt_shared(SG_OD_METRICS_TOKEN_FILE, &c->metrics_token_file);
    return n;
}

/* --llm's comma-separated URLs (at most 16, as run_ports.c takes them), each well formed. */
static int check_urls(const char *urls, sg_err *err) {
    const char *env = getenv("OPENAI_BASE_URL"); /* the parser's value is this very string */
    const char *opt = env && urls == env ? "$OPENAI_BASE_URL (--llm's default)" : "--llm";
    int n = 0;
    for (const char *p = urls;; p++) {
        size_t len = strcspn(p, ",");
        char url[2048];
        if (!len || len >= sizeof url)
            return sg_errf(err, "%s: %s URL in the list (URL[,URL])", opt,
                           len ? "an overlong" : "an empty");
        memcpy(url, p, len);
        url[len] = '\0';
        sg_err e;
        if (sg_llm_url_check(url, &e) < 0) return sg_errf(err, "%s: %s", opt, e.msg);
        if (++n > 16) return sg_errf(err, "%s: more than 16 URLs", opt);
        p += len;
        if (!*p) return 0;
    }
}

/* --metrics-listen: a HOST:PORT; beyond loopback only with a readable token (the pool
 * agent's rule: /metrics names tasks and shows the run's progress). */
static int check_metrics(const sg_run_config *c, sg_err *err) {
    if (!c->metrics_listen) {
        if (c->metrics_token_file)
            return sg_errf(err, "--metrics-token-file is for --metrics-listen (give both)");
        return 0;
    }
    char host[256];
    int port;
    if (sg_net_parse_hostport(c->metrics_listen, host, sizeof host, &port, err) < 0)
        return sg_err_prefix(err, "--metrics-listen");
    if (c->metrics_token_file) {
        char *tok = sg_pool_token_read("--metrics-token-file", c->metrics_token_file, err);
        if (!tok) return -1;
        free(tok);
    } else if (!sg_net_is_loopback(host)) {
        return sg_errf(err,
                       "--metrics-listen %s: refusing to listen beyond loopback without "
                       "--metrics-token-file (give a token, or listen on 127.0.0.1)",
                       c->metrics_listen);
    }
    return 0;
}

int sg_run_opts_apply(const sg_run_opts *o, sg_run_config *c, sg_err *err) {
    sg_err e;
    if (sg_policy_parse(o->policy, &c->policy, &e) < 0) return sg_errf(err, "--policy: %s", e.msg);
    if (o->no_fork) c->policy.fork = 0;
    if (sg_pool_config_parse(o->pools, &c->pools, err) < 0) return -1;
    if (sg_pool_by_distance_parse(o->by_distance, &c->pools, err) < 0) return -1;
    if (strcmp(o->fork_mode, "completions") && strcmp(o->fork_mode, "continue"))
        return sg_errf(err, "--fork-mode: '%s' is not completions or continue", o->fork_mode);
    if (strcmp(o->fork_ids, "auto") && strcmp(o->fork_ids, "off"))
        return sg_errf(err, "--fork-ids: '%s' is not auto or off", o->fork_ids);
    c->fork_ids_off = !strcmp(o->fork_ids, "off");
    if (c->target < 0 || c->target != c->target) /* 0 (the task's) is refused by the parser */
        return sg_errf(err, "--target: '%g' must be a speedup above 0 (2 = twice as fast)",
                       c->target);
    if (c->llm_urls && check_urls(c->llm_urls, err) < 0) return -1;
    if (c->llm_urls && !o->model)
        return sg_errf(err, "--llm (or $OPENAI_BASE_URL, its default) needs --model (the name the "
                            "server serves)");
    if (apply_devices(o, c, err) < 0) return -1;
    if (o->no_local && !c->pool_urls)
        return sg_errf(err, "--no-local needs --pool (some slots must run the jobs)");
    c->no_local = o->no_local;
    if (o->model) c->model = o->model;
    c->fork_mode = strcmp(o->fork_mode, "continue") ? SG_FORK_COMPLETIONS : SG_FORK_CONTINUE;
    c->iterations = (int)o->iterations;
    c->slots_per_device = (int)o->slots;
    if (o->early_stop && o->no_early_stop)
        return sg_errf(err, "--early-stop and --no-early-stop contradict each other");
    c->early_stop = o->early_stop;
    return check_metrics(c, err);
}
