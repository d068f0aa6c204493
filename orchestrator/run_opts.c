/* The options optimize and campaign share, checked and turned into a run configuration
 * once, so both commands say the same thing about the same mistake. */
#include "orchestrator/run.h"

#include "llm/llm.h"

#include <string.h>

void sg_run_opts_default(sg_run_opts *o, const sg_run_config *c) {
    memset(o, 0, sizeof *o);
    o->policy = "specgen";
    o->pools = "elastic";
    o->fork_mode = "completions";
    o->iterations = c->iterations;
    o->slots = c->slots_per_device;
    o->devices = c->devices;
}

/* --llm's comma-separated URLs (at most 16, as run_ports.c takes them), each well formed. */
static int check_urls(const char *urls, sg_err *err) {
    int n = 0;
    for (const char *p = urls;; p++) {
        size_t len = strcspn(p, ",");
        char url[2048];
        if (!len || len >= sizeof url)
            return sg_errf(err, "--llm: %s URL in the list (URL[,URL])",
                           len ? "an overlong" : "an empty");
        memcpy(url, p, len);
        url[len] = '\0';
        sg_err e;
        if (sg_llm_url_check(url, &e) < 0) return sg_errf(err, "--llm: %s", e.msg);
        if (++n > 16) return sg_errf(err, "--llm: more than 16 URLs");
        p += len;
        if (!*p) return 0;
    }
}

int sg_run_opts_apply(const sg_run_opts *o, sg_run_config *c, sg_err *err) {
    sg_err e;
    if (sg_policy_parse(o->policy, &c->policy, &e) < 0) return sg_errf(err, "--policy: %s", e.msg);
    if (o->no_fork) c->policy.fork = 0;
    if (o->iterations < 1 || o->iterations > 1000)
        return sg_errf(err, "--iterations: '%lld' must be 1..1000", (long long)o->iterations);
    if (o->slots < 1 || o->slots > 64)
        return sg_errf(err, "--slots-per-device: '%lld' must be 1..64", (long long)o->slots);
    if (o->devices < 0 || o->devices > 64)
        return sg_errf(err, "--devices: '%lld' must be 1..64 (0: all)", (long long)o->devices);
    if (sg_pool_config_parse(o->pools, &c->pools, err) < 0) return -1;
    if (strcmp(o->fork_mode, "completions") && strcmp(o->fork_mode, "continue"))
        return sg_errf(err, "--fork-mode: '%s' is not completions or continue", o->fork_mode);
    if (c->max_tokens < 0)
        return sg_errf(err, "--max-tokens: '%lld' must be 0 or more", (long long)c->max_tokens);
    if (!(c->speed > 0)) return sg_errf(err, "--speed: must be above 0");
    if (c->llm_urls && check_urls(c->llm_urls, err) < 0) return -1;
    if (c->llm_urls && !o->model)
        return sg_errf(err, "--llm needs --model (the name the server serves)");
    sg_dev_lang lang = SG_DEV_OPENCL;
    if (o->device && sg_dev_lang_parse(o->device, &lang, &e) < 0)
        return sg_errf(err, "--device: %s", e.msg);
    if (o->no_local && !c->pool_urls)
        return sg_errf(err, "--no-local needs --pool (some slots must run the jobs)");
    if (c->pool_timeout_ns < SG_SEC || c->pool_timeout_ns > 600 * SG_SEC)
        return sg_errf(err, "--pool-timeout: must be between 1s and 10m");
    if (c->first_token_timeout_ns < SG_SEC || c->first_token_timeout_ns > 24 * 3600 * SG_SEC)
        return sg_errf(err, "--first-token-timeout: must be between 1s and 24h");
    c->no_local = o->no_local;
    if (o->model) c->model = o->model;
    c->fork_mode = strcmp(o->fork_mode, "continue") ? SG_FORK_COMPLETIONS : SG_FORK_CONTINUE;
    c->device = o->device ? (int)lang : SG_RUN_DEVICE_AUTO;
    c->iterations = (int)o->iterations;
    c->slots_per_device = (int)o->slots;
    c->devices = (int)o->devices;
    if (o->early_stop && o->no_early_stop)
        return sg_errf(err, "--early-stop and --no-early-stop contradict each other");
    c->early_stop = o->early_stop;
    return 0;
}
