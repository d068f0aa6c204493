/* The shared option table (opts.h): one row per option several commands take. */
#include "common/opts.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEC 1e9

static const sg_opt table[SG_OD_COUNT_] = {
    [SG_OD_LLM] = {.name = "llm",
                   .kind = SG_OPT_STR,
                   .metavar = "URL[,URL]",
                   .help = "OpenAI-compatible endpoint(s)",
                   .def = "$OPENAI_BASE_URL, else the embedded replay",
                   .env = "OPENAI_BASE_URL"},
    [SG_OD_MODEL] = {.name = "model",
                     .kind = SG_OPT_STR,
                     .metavar = "NAME",
                     .help = "model name the server knows",
                     .def = "replay"},
    [SG_OD_TEMPLATE] = {.name = "template",
                        .kind = SG_OPT_STR,
                        .metavar = "NAME",
                        .help = "chat template: qwen3|deepseek-r1|glm|generic",
                        .def = "from --model"},
    [SG_OD_TARGET] = {.name = "target",
                      .kind = SG_OPT_DOUBLE,
                      .metavar = "X",
                      .help = "target speedup over the baseline, overriding each task's",
                      .def = "the task's, else " SG_TARGET_DEFAULT_S,
                      .min = 0.01,
                      .max = 1000,
                      .units = "x baseline"},
    [SG_OD_TASK_BUDGET_TIME] = {.name = "task-budget-time",
                                .kind = SG_OPT_DURATION,
                                .metavar = "T",
                                .help = "each task's wall time (sim: virtual)",
                                .def = "30m (sim: 2h)",
                                .deprecated = "budget-time",
                                .min = SEC,
                                .max = 30 * 24 * 3600 * SEC},
    [SG_OD_TASK_BUDGET_TOKENS] = {.name = "task-budget-tokens",
                                  .kind = SG_OPT_COUNT,
                                  .metavar = "N",
                                  .help = "each task's tokens (reasoning + forks)",
                                  .def = "500k",
                                  .deprecated = "budget-tokens",
                                  .min = 1,
                                  .max = 1e9,
                                  .units = "tokens"},
    [SG_OD_CAMPAIGN_BUDGET_TIME] = {.name = "campaign-budget-time",
                                    .kind = SG_OPT_DURATION,
                                    .metavar = "T",
                                    .help = "the whole campaign's wall time",
                                    .def = "2h",
                                    .deprecated = "budget-time",
                                    .min = SEC,
                                    .max = 365 * 24 * 3600 * SEC},
    [SG_OD_CAMPAIGN_BUDGET_TOKENS] = {.name = "campaign-budget-tokens",
                                      .kind = SG_OPT_COUNT,
                                      .metavar = "N",
                                      .help = "the whole campaign's tokens",
                                      .def = "5M",
                                      .deprecated = "budget-tokens",
                                      .min = 1,
                                      .max = 1e10,
                                      .units = "tokens"},
    [SG_OD_ITERATIONS] = {.name = "iterations",
                          .kind = SG_OPT_INT,
                          .metavar = "N",
                          .help = "most iterations per task",
                          .def = "5",
                          .min = 1,
                          .max = 1000},
    [SG_OD_FIRST_TOKEN_TIMEOUT] = {.name = "first-token-timeout",
                                   .kind = SG_OPT_DURATION,
                                   .metavar = "T",
                                   .help = "a stream with no token after T fails (a stalled "
                                           "server; warned at 10s, then every 30s)",
                                   .def = "300s",
                                   .min = SEC,
                                   .max = 24 * 3600 * SEC},
    [SG_OD_MAX_TOKENS] = {.name = "max-tokens",
                          .kind = SG_OPT_INT,
                          .metavar = "N",
                          .help = "cap on each reasoning stream's tokens (0: the server's)",
                          .def = "the server's",
                          .min = 0,
                          .max = 1e9,
                          .units = "tokens"},
    [SG_OD_DEVICE] = {.name = "device",
                      .kind = SG_OPT_STR,
                      .metavar = "cuda|opencl",
                      .help = "device backend (one for all tasks)",
                      .def = "cuda with a GPU, else opencl"},
    [SG_OD_DEVICES] = {.name = "devices",
                       .kind = SG_OPT_FN,
                       .metavar = "all|N|LANG:I[,I]",
                       .help = "devices to use: all, the first N, or a list (cuda:0,1; opencl:0)",
                       .def = "all",
                       .fn = sg_devsel_parse},
    [SG_OD_SLOTS_PER_DEVICE] = {.name = "slots-per-device",
                                .kind = SG_OPT_INT,
                                .metavar = "N",
                                .help = "worker slots on each device (validate and profile roles)",
                                .def = "1",
                                .aliases = "slots",
                                .deprecated = "slots-per-gpu",
                                .min = 1,
                                .max = SG_SLOTS_PER_DEVICE_MAX,
                                .units = "slots"},
    [SG_OD_POOL] = {.name = "pool",
                    .kind = SG_OPT_STR,
                    .metavar = "URL[,URL]|@FILE",
                    .help = "pool agents (`specgen pool`) whose slots join the local ones"},
    [SG_OD_POOL_TOKEN_FILE] = {.name = "pool-token-file",
                               .kind = SG_OPT_STR,
                               .metavar = "F",
                               .help = "the agents' bearer token"},
    [SG_OD_POOL_CACERT] = {.name = "pool-cacert",
                           .kind = SG_OPT_STR,
                           .metavar = "F",
                           .help = "CA certificate for https agents",
                           .def = "the system's"},
    [SG_OD_POOL_TIMEOUT] = {.name = "pool-timeout",
                            .kind = SG_OPT_DURATION,
                            .metavar = "T",
                            .help = "an agent that has not answered for T is lost: its jobs run "
                                    "elsewhere",
                            .def = "5s",
                            .min = SEC,
                            .max = 600 * SEC},
    [SG_OD_NO_LOCAL] = {.name = "no-local",
                        .kind = SG_OPT_FLAG,
                        .help = "only the --pool agents' slots"},
    [SG_OD_POOLS] = {.name = "pools",
                     .kind = SG_OPT_STR,
                     .metavar = "MODE",
                     .help = "elastic (roles follow the load) or static:V/P (V validate, P "
                             "profile slots)",
                     .def = "elastic"},
    [SG_OD_POLICY] =
        {.name = "policy",
         .kind = SG_OPT_STR,
         .metavar = "P",
         .help = "specgen|sequential|parallel:N|probe:K|workers:N|probe-exit:K (docs/eval.md)",
         .def = "specgen"},
    [SG_OD_NO_FORK] = {.name = "no-fork", .kind = SG_OPT_FLAG, .help = "ablation: never fork"},
    [SG_OD_NO_RACE] = {.name = "no-race",
                       .kind = SG_OPT_FLAG,
                       .help = "time every candidate until its median is stable (no racing: "
                               "stopping once it is clearly slower than the best, clearly "
                               "past the target, or not above the best beyond the noise "
                               "band, docs/profiler.md)"},
    [SG_OD_PREEMPT_STALE] = {.name = "preempt-stale",
                             .kind = SG_OPT_FLAG,
                             .help = "a fork's correct new best drops its iteration's older "
                                     "forks' validations still waiting and lets those running "
                                     "yield their slot to waiting jobs (killed; measured: no "
                                     "gain, docs/eval.md)"},
    [SG_OD_BY_DISTANCE] = {.name = "by-distance",
                           .kind = SG_OPT_STR,
                           .metavar = "far|near|off",
                           .help = "the pool's order within each priority class: tasks furthest "
                                   "from (far) or nearest to (near) their target speedup first, "
                                   "before their turns (measured: no gain, docs/eval.md)",
                           .def = "off"},
    [SG_OD_EARLY_STOP] = {.name = "early-stop",
                          .kind = SG_OPT_FLAG,
                          .help = "also end an iteration when a candidate beats its start by 5% "
                                  "(off: measured slower, docs/eval.md)"},
    [SG_OD_NO_EARLY_STOP] = {.name = "no-early-stop",
                             .kind = SG_OPT_FLAG,
                             .help = "end an iteration early only at the target (the default; "
                                     "kept for scripts)"},
    [SG_OD_FORK_MODE] = {.name = "fork-mode",
                         .kind = SG_OPT_STR,
                         .metavar = "M",
                         .help = "completions (raw prompt) or continue (chat, "
                                 "continue_final_message)",
                         .def = "completions"},
    [SG_OD_FORK_IDS] = {.name = "fork-ids",
                        .kind = SG_OPT_STR,
                        .metavar = "M",
                        .help = "auto (forks as token ids where the server returns and takes "
                                "them: vLLM) or off (forks as text)",
                        .def = "auto"},
    [SG_OD_TRIGGER] = {.name = "trigger",
                       .kind = SG_OPT_STR,
                       .metavar = "FILE",
                       .help = "trigger rules (JSON; sim's probe:K keeps its own)",
                       .def = "prompts/trigger.json"},
    [SG_OD_DB] = {.name = "db",
                  .kind = SG_OPT_STR,
                  .metavar = "FILE",
                  .help = "the results database (when writing, none: record nothing)",
                  .def = SG_DB_DEFAULT},
    [SG_OD_PROMPTS] = {.name = "prompts",
                       .kind = SG_OPT_STR,
                       .metavar = "DIR",
                       .help = "prompt and template folder",
                       .def = "specgen's prompts/"},
    [SG_OD_TRACE] = {.name = "trace",
                     .kind = SG_OPT_STR,
                     .metavar = "FILE|DIR",
                     .help = "replay trace, or a folder of *.jsonl traces",
                     .def = "prompts/traces"},
    [SG_OD_SPEED] = {.name = "speed",
                     .kind = SG_OPT_DOUBLE,
                     .metavar = "X",
                     .help = "replay time scale: 2 streams twice as fast as the trace",
                     .def = "1",
                     .min = 0.001,
                     .max = 1000,
                     .units = "x real time"},
    [SG_OD_JSON] = {.name = "json", .kind = SG_OPT_FLAG, .help = "print JSON (for scripts)"},
    [SG_OD_SEED] = {.name = "seed",
                    .kind = SG_OPT_INT,
                    .metavar = "N",
                    .help = "random seed for the inputs",
                    .def = "fresh each run",
                    .min = 1,
                    .max = 1e15},
    [SG_OD_RUN_TIMEOUT] = {.name = "run-timeout",
                           .kind = SG_OPT_DURATION,
                           .metavar = "T",
                           .help = "deadline of one run of the kernels (profile: of one timing "
                                   "batch); the worker is killed",
                           .def = "20s",
                           .deprecated = "timeout",
                           .min = 1e6,
                           .max = 3600 * SEC},
    [SG_OD_NVRTC_PCH] = {.name = "nvrtc-pch",
                         .kind = SG_OPT_STR,
                         .metavar = "DIR|off",
                         .help = "CUDA: the folder of NVRTC's precompiled headers, shared by "
                                 "every worker and task (the workers may write it); off: none",
                         .def = "specgen-nvrtc-pch in CUDA's cache folder ($CUDA_CACHE_PATH, "
                                "else ~/.nv)"},
    [SG_OD_COMPILE_TIMEOUT] = {.name = "compile-timeout",
                               .kind = SG_OPT_DURATION,
                               .metavar = "T",
                               .help = "compile deadline",
                               .def = "30s",
                               .min = 1e6,
                               .max = 3600 * SEC},
    [SG_OD_API_KEY_FILE] = {.name = "api-key-file",
                            .kind = SG_OPT_STR,
                            .metavar = "F",
                            .help = "the LLM servers' API key: the first line of F (never "
                                    "printed; warned when others may read F)",
                            .def = "$SPECGEN_API_KEY, else $OPENAI_API_KEY",
                            .env = "SPECGEN_API_KEY OPENAI_API_KEY",
                            .env_secret = 1},
    [SG_OD_TEMPERATURE] = {.name = "temperature",
                           .kind = SG_OPT_DOUBLE,
                           .metavar = "X",
                           .help = "sampling temperature of the reasoning streams (0: greedy)",
                           .def = "the server's",
                           .min = 0,
                           .max = 2},
    [SG_OD_TOP_P] = {.name = "top-p",
                     .kind = SG_OPT_DOUBLE,
                     .metavar = "P",
                     .help = "nucleus sampling of the reasoning streams: the top tokens whose "
                             "probabilities sum to P",
                     .def = "the server's",
                     .min = 0.001,
                     .max = 1},
    [SG_OD_FORK_TEMPERATURE] = {.name = "fork-temperature",
                                .kind = SG_OPT_DOUBLE,
                                .metavar = "X",
                                .help = "sampling temperature of the forks (0: greedy)",
                                .def = "prompts/fork.json's temperature: 0.2",
                                .min = 0,
                                .max = 2},
    [SG_OD_FORK_TOP_P] = {.name = "fork-top-p",
                          .kind = SG_OPT_DOUBLE,
                          .metavar = "P",
                          .help = "nucleus sampling of the forks",
                          .def = "prompts/fork.json's top_p, else the server's",
                          .min = 0.001,
                          .max = 1},
    [SG_OD_METRICS_LISTEN] = {.name = "metrics-listen",
                              .kind = SG_OPT_STR,
                              .metavar = "HOST:PORT",
                              .help = "serve Prometheus metrics at /metrics there (port 0: any "
                                      "free one, printed); beyond loopback needs "
                                      "--metrics-token-file",
                              .def = "none"},
    [SG_OD_METRICS_TOKEN_FILE] = {.name = "metrics-token-file",
                                  .kind = SG_OPT_STR,
                                  .metavar = "FILE",
                                  .help = "bearer token every /metrics request must carry (the "
                                          "file's first line)"},
    [SG_OD_PROGRESS_INTERVAL] = {.name = "progress-interval",
                                 .kind = SG_OPT_DURATION,
                                 .metavar = "T",
                                 .help = "off a terminal (a pipe, a Slurm log), a progress line "
                                         "every T on stderr (0: none)",
                                 .def = "30s",
                                 .min = 0,
                                 .max = 24 * 3600 * SEC},
    [SG_OD_WAKE_BATCH] = {.name = "wake-batch",
                          .kind = SG_OPT_DURATION,
                          .metavar = "T",
                          .help = "while streams keep the event loop busy, wake at most once "
                                  "every T and serve every socket ready by then: fewer wakes per "
                                  "token, for up to T more delay to each (0: wake at once; "
                                  "docs/llm-servers.md)",
                          .def = "500us",
                          .min = 0,
                          .max = 100 * SEC / 1000},
    [SG_OD_PRECISION] = {.name = "precision",
                         .kind = SG_OPT_FN,
                         .metavar = "P",
                         .help = "a KernelBench .py problem: fp32, fp16 or bf16 (inputs and "
                                 "weights cast, tolerances per precision; docs/kernelbench.md)",
                         .def = "fp32",
                         .fn = sg_opt_precision},
    [SG_OD_TORCH_BASELINE] = {.name = "baseline",
                              .kind = SG_OPT_FN,
                              .metavar = "B",
                              .help = "a KernelBench .py problem: the baseline, torch-eager or "
                                      "torch-compile (docs/kernelbench.md)",
                              .def = "torch-eager",
                              .fn = sg_opt_torch_baseline},
};

/* value, if it is one of the NULL-terminated names, as that name's static spelling. */
static int one_of(const char *value, const char *const *names, void *out, sg_err *err) {
    for (int i = 0; names[i]; i++)
        if (!strcmp(value, names[i])) {
            *(const char **)out = names[i];
            return 0;
        }
    if (names[2])
        return sg_errf(err, "'%s': expected %s, %s or %s", value, names[0], names[1], names[2]);
    return sg_errf(err, "'%s': expected %s or %s", value, names[0], names[1]);
}

int sg_opt_precision(const char *s, void *out, sg_err *err) {
    static const char *const names[] = {"fp32", "fp16", "bf16", NULL};
    return one_of(s, names, out, err);
}

int sg_opt_torch_baseline(const char *s, void *out, sg_err *err) {
    static const char *const names[] = {"torch-eager", "torch-compile", NULL};
    return one_of(s, names, out, err);
}

const sg_opt *sg_opt_entry(int id) { return id >= 0 && id < SG_OD_COUNT_ ? &table[id] : NULL; }

sg_opt sg_opt_shared(sg_opt_id id, void *out) {
    sg_opt o = table[id];
    o.out = out;
    return o;
}

sg_opt sg_opt_shared_dep(sg_opt_id id, void *out, const char *deprecated) {
    sg_opt o = sg_opt_shared(id, out);
    o.deprecated = deprecated;
    return o;
}

/* A whole number 0..max, the whole of [s, end). */
static int whole(const char *s, const char *end, int max, int *out) {
    if (s == end || end - s > 6) return -1;
    int v = 0;
    for (const char *p = s; p < end; p++) {
        if (!isdigit((unsigned char)*p)) return -1;
        v = v * 10 + (*p - '0');
    }
    if (v > max) return -1;
    *out = v;
    return 0;
}

int sg_devsel_parse(const char *s, void *out, sg_err *err) {
    sg_devsel *d = out;
    memset(d, 0, sizeof *d);
    if (!strcmp(s, "all")) return 0;
    if (!strcmp(s, "0")) { /* optimize's and campaign's old spelling of all */
        fprintf(stderr, "specgen: --devices 0 is deprecated; use --devices all\n");
        return 0;
    }
    const char *colon = strchr(s, ':');
    if (!colon) {
        if (whole(s, s + strlen(s), SG_DEVICES_MAX, &d->count) < 0 || d->count < 1)
            return sg_errf(err,
                           "'%s': expected all, a count 1..%d (the first N devices), or a list "
                           "cuda:0,1 / opencl:0",
                           s, SG_DEVICES_MAX);
        return 0;
    }
    size_t ll = (size_t)(colon - s);
    if (!((ll == 4 && !strncmp(s, "cuda", 4)) || (ll == 6 && !strncmp(s, "opencl", 6))))
        return sg_errf(err, "unknown device '%.*s' (expected cuda or opencl) in '%s'", (int)ll, s,
                       s);
    memcpy(d->lang, s, ll);
    for (const char *p = colon + 1;;) {
        const char *e = p + strcspn(p, ",");
        int v;
        if (whole(p, e, 255, &v) < 0)
            return sg_errf(err, "'%s': '%.*s' is not a device number (0..255)", s, (int)(e - p), p);
        for (int i = 0; i < d->n; i++)
            if (d->idx[i] == v) return sg_errf(err, "'%s': device %d twice", s, v);
        if (d->n == SG_DEVICES_MAX)
            return sg_errf(err, "'%s': at most %d devices", s, SG_DEVICES_MAX);
        d->idx[d->n++] = v;
        if (!*e) return 0;
        p = e + 1;
    }
}

const char *sg_devsel_str(const sg_devsel *d, char *buf, size_t n) {
    if (!d->n) {
        if (d->count)
            snprintf(buf, n, "%d", d->count);
        else
            snprintf(buf, n, "all");
        return buf;
    }
    size_t len = (size_t)snprintf(buf, n, "%s:", d->lang);
    for (int i = 0; i < d->n && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%d", i ? "," : "", d->idx[i]);
    return buf;
}
