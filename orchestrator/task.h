/* task.h — the state machine of one optimization task.
 *
 * Contract: sg_task runs on one loop and talks to the world only through an LLM port and
 * a device port (ports.h), so it runs the same live and in the simulation. Steps:
 * baseline job -> iterations: build the prompt (best kernel so far + feedback from the
 * last candidates), start the reasoning stream(s), fork at trigger points (policy
 * specgen), extract candidates from every finished generation, drop duplicates by
 * normalized hash, validate + profile the rest, and end the iteration early when the
 * criterion says so (aborting the reasoning and forks still running). The task ends at
 * its target, on a budget, or on an error; `finished` is then called once, after every
 * job it submitted has reported. Every event is handed to `record` as a JSON object (the
 * caller writes it: JSON lines, later the results database); the task keeps no file.
 * Strings in the config and spec are borrowed and must outlive the task. */
#ifndef SG_TASK_H
#define SG_TASK_H

#include "common/buf.h"
#include "common/err.h"
#include "common/loop.h"
#include "orchestrator/ports.h"
#include "specgen/criterion.h"
#include "specgen/fork.h"
#include "specgen/trigger.h"

#include <jansson.h>

/* The fair baselines beside specgen (docs/eval.md):
 *  - sequential: one reasoning stream per iteration, its final kernel only;
 *  - parallel:N: N streams per iteration, the next iteration after all N and their jobs end;
 *  - probe:K (kind SPECGEN, probe = K): a fork every K reasoning tokens, no cue rules;
 *  - workers:N: N independent streams without a barrier: each worker restarts on its own
 *    feedback and best kernel as soon as its own final answer is judged (KernelAgent's
 *    workers); the task ends at the first kernel that meets the target;
 *  - probe-exit:K: certainty-based early exit (Dynasor): a probe answer is forked every K
 *    reasoning tokens and not timed; when two consecutive probes write the same kernel (the
 *    same source after normalising whitespace and comments, common/srcnorm.h) the reasoning
 *    stops and that kernel is the iteration's final answer, the only one timed. */
typedef enum {
    SG_POLICY_SPECGEN = 0,
    SG_POLICY_SEQUENTIAL,
    SG_POLICY_PARALLEL,
    SG_POLICY_WORKERS,
    SG_POLICY_PROBE_EXIT
} sg_policy_kind;

typedef struct sg_policy {
    sg_policy_kind kind;
    int streams;    /* reasoning streams per iteration (parallel:N, workers:N), else 1 */
    int fork;       /* 0: --no-fork (specgen without forks) */
    uint64_t probe; /* probe:K and probe-exit:K: K, the reasoning tokens between forks; else 0 */
} sg_policy;

/* "specgen", "sequential", "parallel:N", "probe:K", "workers:N", "probe-exit:K". */
int sg_policy_parse(const char *s, sg_policy *out, sg_err *err);
const char *sg_policy_name(const sg_policy *p, char *buf, size_t n);

typedef struct sg_task_spec {
    const char *name, *lang, *description; /* lang: "cuda" or "opencl" */
    const char *baseline;                  /* baseline kernel source */
    /* A problem from another suite (a torch task): what the speedups are over
     * ("torch-eager" | "torch-compile") and its precision ("fp32" ...); NULL for a kernel
     * task. task_start carries them (the results database's task.baseline_kind, precision),
     * and where the problem came from (format, file, sha256: task.origin_*; NULL: none). */
    const char *baseline_kind, *precision;
    const char *origin_format, *origin_file, *origin_sha256;
} sg_task_spec;

typedef struct sg_task_prompts {
    char *system, *user, *feedback_header; /* from prompts/optimize.json */
    char *answer_prefix;                   /* from prompts/fork.json, {lang} unfilled */
    int64_t fork_max_tokens;
    double fork_temperature;
    double fork_top_p; /* <= 0: the server's */
} sg_task_prompts;

int sg_task_prompts_load(const char *prompts_dir, sg_task_prompts *p, sg_err *err);
void sg_task_prompts_free(sg_task_prompts *p);

typedef struct sg_task_stats {
    int iteration;
    uint64_t reasoning_tokens, fork_tokens, tokens_total;
    int forks_started, forks_done;
    int forks_failed;  /* of forks_done: ended with an error (fork_error: the last one) */
    int forks_refused; /* the endpoint refuses forks (404, 405, 501): no more were started */
    /* Generations (reasoning or fork) that failed with no token within the first-token
     * timeout: a stalled server (first_token_error: the last one's message). */
    int first_token_timeouts;
    char first_token_error[512];
    /* Prefix reuse of the forks whose usage the server reported: their prompt tokens, those
     * the server served from its prefix cache, and how many forks said so (a fork without
     * prompt_tokens_details counts as 0 cached: vLLM and SGLang omit it then). */
    uint64_t fork_prompt_tokens, fork_cached_tokens;
    int forks_cache_reported;
    char fork_error[512];
    int candidates, duplicates, no_kernel, compiled, correct, profiled;
    double best_speedup;
    int best_candidate;            /* 0: the baseline */
    int early_stops;               /* reasoning streams cut by a good candidate or the target */
    uint64_t tokens_at_early_stop; /* reasoning tokens when they were cut */
    int64_t started_ns, first_candidate_ns, best_ns, ended_ns; /* loop times */
    /* since started_ns: when the first correct candidate's verdict came (0: none yet) */
    int64_t first_correct_ns;
    int64_t baseline_ns_median;
    sg_crit end_reason;
    int cancelled;      /* sg_task_cancel ended it */
    int cancelled_jobs; /* dropped or killed because their iteration ended */
    char error[512];
} sg_task_stats;

typedef struct sg_task_hooks {
    void (*record)(void *arg, json_t *event);            /* borrowed: copy what you keep */
    void (*progress)(void *arg, const sg_task_stats *s); /* after each change */
    void (*finished)(void *arg, const sg_task_stats *s);
    void *arg;
} sg_task_hooks;

typedef struct sg_task_config {
    sg_policy policy;
    sg_criterion crit;
    sg_trigger_config trigger;
    const sg_chat_template *tmpl;
    const sg_task_prompts *prompts;
    int feedback_last; /* feedback of how many recent candidates goes into the prompt */
    /* preemption of stale validations: when a fork's kernel is correct and the new best, the
     * iteration's candidates of older forks still waiting for validation are dropped (the
     * device port's drop_stale) and yield their slot to fresher jobs; 0: off */
    int drop_stale;
    /* preemption of running stale validations (implies drop_stale): those of the older forks
     * that already run yield their slot too, killed as soon as another job waits (the device
     * port's drop_stale with `running`; sg_pool_preempt). A task that meets its target
     * kills its running validations and drops its queued ones either way; 0: off */
    int preempt_stale;
} sg_task_config;

typedef struct sg_task sg_task;

/* The share of the forks' prompt tokens that the server took from its prefix cache, or -1
 * when it never said (no fork's usage carried cached_tokens). */
double sg_task_prefix_reuse(const sg_task_stats *s);

sg_task *sg_task_new(sg_loop *loop, const sg_task_config *cfg, const sg_task_spec *spec,
                     const sg_llm_port *llm, const sg_dev_port *dev, const sg_task_hooks *hooks,
                     sg_err *err);
/* Start: submits the baseline job; everything else follows from the loop. */
int sg_task_start(sg_task *t, sg_err *err);
/* Stop early (Ctrl-C): aborts generations; `finished` follows once jobs reported. */
void sg_task_cancel(sg_task *t);
/* The best kernel so far (the baseline when nothing beat it). Borrowed. */
const char *sg_task_best_kernel(const sg_task *t);
void sg_task_free(sg_task *t);

#endif
