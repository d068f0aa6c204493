/* run.h — the wiring of a run: what `specgen optimize` decides, turned into ports and a task.
 *
 * Contract: a run has four parts, so that a campaign can share the loop, the LLM and the
 * pool among several tasks, and the simulator can put its own ports behind the same task:
 *   - sg_run_prompts: the prompt folder's files (template, prompts, feedback, trigger rules);
 *   - sg_run_task: a task folder (made first from a bare kernel, in OUT/task), its spec,
 *     the device language chosen for it and its baseline; it makes the output folder;
 *   - the real implementations behind the ports, on a loop the caller gives: sg_run_llm
 *     (the endpoints, or the embedded replay server), sg_run_pool (local worker slots on
 *     every device and the scheduler over them, shared by tasks) and sg_run_dev_port_new
 *     (one per task);
 *   - sg_run_exec: one task running on a loop through the ports it is given; it writes
 *     OUT/events.jsonl as events come and, at the end, OUT/best.cl|cu and OUT/summary.json.
 * sg_run_one composes them on the real loop with Ctrl-C/SIGTERM as a graceful stop; it is
 * the only part that blocks signals or reads the real clock. Messages go to stderr,
 * prefixed by the config's log_name. Everything given is borrowed (config strings, the
 * loop, ports, prompts, task) and must outlive what uses it; each _free/_stop releases
 * only what its _new/_load made. Functions return 0 / NULL on success / failure and fill
 * err. */
#ifndef SG_RUN_H
#define SG_RUN_H

#include "common/buf.h"
#include "common/err.h"
#include "common/loop.h"
#include "common/opts.h"
#include "orchestrator/metrics.h"
#include "orchestrator/port_dev.h"
#include "orchestrator/port_llm.h"
#include "orchestrator/task.h"
#include "pool/pool.h"
#include "results/results.h"
#include "profiler/feedback.h"
#include "validator/validator.h"

#define SG_RUN_FIRST_TOKEN_TIMEOUT_S 300 /* --first-token-timeout: a long prompt's prefill */
#define SG_RUN_DEVICE_AUTO (-1) /* cuda when a driver and a cuda baseline exist, else opencl */

typedef struct sg_run_config {
    const char *task;             /* TASK_DIR, or a kernel file (.cu/.cl) */
    const sg_val_init_opts *init; /* a kernel file's task init hints (NULL: none) */
    const char *out_dir;          /* NULL: specgen-out/NAME */
    const char *prompts_dir;      /* NULL: specgen's prompts/ */
    const char *trigger_file;     /* NULL: PROMPTS/trigger.json */
    const char *llm_urls;         /* comma-separated endpoints; NULL: the embedded replay */
    const char *model;            /* "replay" */
    const char *template_name;    /* NULL: from the model's name */
    sg_fork_mode fork_mode;       /* SG_FORK_COMPLETIONS */
    int fork_ids_off;             /* --fork-ids off: forks as text even where ids would go */
    int64_t max_tokens;           /* cap on each reasoning stream; 0: the server's */
    const char *api_key_file;     /* the API key's file; NULL: $SPECGEN_API_KEY, $OPENAI_API_KEY */
    double temperature, top_p;    /* the reasoning streams' sampling; < 0: the server's */
    double fork_temperature;      /* the forks'; < 0: prompts/fork.json's */
    double fork_top_p;            /* < 0: prompts/fork.json's, else the server's */
    const char *trace;            /* embedded replay traces; NULL: PROMPTS/traces */
    double speed;                 /* embedded replay speed: 1 */
    int device;                   /* an sg_dev_lang, or SG_RUN_DEVICE_AUTO */
    int slots_per_device;         /* worker slots on each device: 1 */
    int devices;                  /* devices to use (the first N); 0: all there are */
    const int *device_ids;        /* or these devices (--devices cuda:0,1), ndevice_ids of them */
    int ndevice_ids;              /* 0: devices decides */
    sg_pool_config pools;         /* elastic */
    sg_policy policy;             /* specgen */
    double target;                /* target speedup; 0: the task's, else 2 */
    int64_t budget_ns;            /* 30 min */
    uint64_t budget_tokens;       /* 500k */
    int iterations;               /* 5 */
    int early_stop;               /* 0: an iteration ends early only at the target */
    const char *log_name;         /* "specgen optimize" */
    const char *db;       /* the results database: SG_RESULTS_DEFAULT_DB; "" or "none": off */
    int max_per_endpoint; /* running streams per LLM endpoint; 0: no cap */
    int64_t first_token_timeout_ns; /* a stream with no token after this fails: 300 s */
    int quiet;                   /* no progress lines or summary on stderr (a campaign's tasks) */
    const char *pool_urls;       /* agents whose slots join the pool (pool.h); NULL: none */
    const char *pool_token_file; /* their bearer token; NULL: none */
    const char *pool_cacert;     /* CA for https agents; NULL: the system's */
    int64_t pool_timeout_ns;     /* an agent silent this long is lost: 5 s */
    int no_local;                /* only the agents' slots */
    /* overrides of the trigger rules and the criterion, 0: the rules' and the criterion's
     * own (sim sets them: --sweep's knobs, probe:K; optimize and campaign leave them 0) */
    uint64_t probe_tokens;   /* > 0: a fork every N reasoning tokens, no cue, no spacing rule */
    uint64_t spacing_tokens; /* trigger min_spacing_tokens */
    int in_flight;           /* trigger max_in_flight (probe:K's too) */
    int in_flight_idle;      /* trigger max_in_flight_idle (sim's ablation row) */
    int drop_stale;          /* the task's drop_stale (sim --drop-stale) */
    int preempt_stale;       /* the task's preempt_stale (--preempt-stale) */
    double delta;            /* the early-stop margin */
    /* what the run shows (progress, result) and serves (/metrics) */
    const char *metrics_listen;     /* --metrics-listen HOST:PORT; NULL: no /metrics */
    const char *metrics_token_file; /* its bearer token's file; NULL: none (loopback only) */
    int64_t progress_interval_ns;   /* off a terminal, a progress line this often; 0: none */
    int64_t wake_batch_ns;          /* the loop's wake batching (sg_loop_set_batch); 0: none */
    int json;                       /* the result on stdout as JSON, not a table */
    int no_race;                    /* --no-race: time every candidate until its median is stable */
    const char *nvrtc_pch;          /* --nvrtc-pch: NVRTC's PCH folder (device.h); NULL: default */
} sg_run_config;

void sg_run_config_default(sg_run_config *c);
/* The options optimize and campaign share, as given on the command line (run_opts.c). */
typedef struct sg_run_opts {
    const char *model, *device, *policy, *pools, *fork_mode,
        *fork_ids;           /* NULL model/device: default */
    const char *by_distance; /* --by-distance: "off" */
    int64_t iterations, slots;
    sg_devsel devices; /* --devices: all, the first N, or a list (common/opts.h) */
    int no_fork, early_stop, no_early_stop, no_local;
} sg_run_opts;
void sg_run_opts_default(sg_run_opts *o, const sg_run_config *c);
/* The option rows optimize and campaign share (common/opts.h's entries, writing into o and
 * c), into rows (room for SG_RUN_NOPTS); returns how many. campaign: the task budgets'
 * old spellings are campaign's --per-task-time/--per-task-tokens (its --budget-time and
 * --budget-tokens were the campaign's, optimize's the task's). */
enum { SG_RUN_NOPTS = 48 };
int sg_run_opts_table(sg_run_opts *o, sg_run_config *c, int campaign, sg_opt *rows);
/* Check them (and c's own fields set by options: max_tokens, speed, llm_urls) and fill c.
 * -1 with a message naming the option and the bad value: a usage error. */
int sg_run_opts_apply(const sg_run_opts *o, sg_run_config *c, sg_err *err);
/* 1 when CUDA can run here (the driver initialises and sees a GPU; asked in a child). */
int sg_run_cuda_usable(void);
/* The options as a JSON object (the campaign row's config; a new reference). */
json_t *sg_run_config_json(const sg_run_config *c);

/* ---- the prompt folder ---- */
typedef struct sg_run_prompts {
    char dir[4096];            /* c->prompts_dir, or sg_data_dir("prompts") */
    sg_chat_template tmpl;     /* c->template_name, or the model's family */
    sg_task_prompts task;      /* optimize.json + fork.json */
    sg_feedback_templates fb;  /* for the device port's feedback paragraphs */
    sg_trigger_config trigger; /* defaults overlaid with c->trigger_file or PROMPTS/trigger.json */
} sg_run_prompts;

/* Tasks of a campaign share one: it depends on the config, not on the task. */
int sg_run_prompts_load(const sg_run_config *c, sg_run_prompts *p, sg_err *err);
void sg_run_prompts_free(sg_run_prompts *p);

/* A task's configuration: the one function optimize, campaign (sg_run_exec_start) and sim
 * build it with. The target is c->target, else task_target (the task's own; 0: none), else
 * the criterion's default; budgets, iterations, early stop and policy from c; the trigger
 * rules and templates from p (borrowed: p outlives cfg), with c's overrides on top. */
void sg_run_task_config(const sg_run_config *c, const sg_run_prompts *p, double task_target,
                        sg_task_config *cfg);

/* ---- the task ---- */
typedef struct sg_run_task {
    char name[256];     /* the folder's or the kernel file's name */
    char dir[4096];     /* the task folder */
    char out_dir[4096]; /* made here */
    sg_val_task spec;
    sg_dev_lang lang;
    sg_buf baseline;
} sg_run_task;

/* SG_WFILE_REFUSED (common/wfile.h) when a file it would write in OUT is not a regular
 * file (a device, a FIFO, a link, a folder). */
int sg_run_task_load(const sg_run_config *c, sg_run_task *t, sg_err *err);
void sg_run_task_free(sg_run_task *t);
/* A KernelBench problem's import in task_dir (OUT/task): 0 when it is there and was made
 * at the --precision and --baseline of init (NULL: fp32, torch-eager); 1 when there is
 * none; 2 when it was made at others, or its task.json does not say (to make again). */
int sg_run_import_state(const sg_val_init_opts *init, const char *task_dir);
/* What the task state machine is told of t (its strings borrowed from t): name, language,
 * description, baseline source, and for a torch task what its speedups are over
 * ("torch-eager" | "torch-compile") and its precision; NULL for a kernel task. */
void sg_run_task_spec(const sg_run_task *t, sg_task_spec *out);

/* ---- the real implementations behind the ports ---- */
typedef struct sg_run_llm sg_run_llm;

/* The LLM port over c->llm_urls, or over a replay server started here. */
sg_run_llm *sg_run_llm_new(sg_loop *loop, const sg_run_config *c, const sg_run_prompts *p,
                           sg_err *err);
const sg_llm_port *sg_run_llm_port(const sg_run_llm *l);
/* With the replay: says which trace serves the task and sets *full_tokens to the length
 * of its reasoning (for the summary's early-stop line); with endpoints: 0, silently.
 * -1 when the replay has no trace for the task (none whose `match` text is in its name or
 * baseline) and no --trace was given: serving another task's trace would be nonsense, so
 * err says to pass --llm. */
int sg_run_llm_announce(const sg_run_llm *l, const sg_run_config *c, const sg_run_task *t,
                        uint64_t *full_tokens, sg_err *err);
void sg_run_llm_free(sg_run_llm *l);

/* Local slots on c->devices devices of lang (all of them when 0: counted in a child) with
 * c->slots_per_device each, and the scheduler over them (c->pools). The pool's events go
 * to on_event when set (sg_pool_on_event). */
/* The second SIGINT/SIGTERM: say so, flush stdio and _exit(130) (the workers die with it). */
_Noreturn void sg_run_force_exit(const char *who, int signo);

typedef struct sg_run_pool {
    sg_pool_local *local;   /* NULL with --no-local */
    sg_pool_remote *remote; /* NULL without --pool */
    sg_pool_mux mux;        /* both */
    sg_pool *sched;
    int devices, slots;
} sg_run_pool;
int sg_run_pool_new(sg_loop *loop, const sg_run_config *c, sg_dev_lang lang, sg_run_pool *out,
                    sg_err *err);
void sg_run_pool_free(sg_run_pool *p);
/* The device port for one task (its index among the pool's tasks) on a shared pool; free
 * with sg_port_dev_free before the pool. */
/* race: racing in the profiler (--no-race turns it off); target: c->target (0: the
 * task's, else 2), racing's "clearly past the target" bar. */
sg_port_dev *sg_run_dev_port_new(sg_loop *loop, sg_run_pool *pool, int task_index,
                                 const sg_run_prompts *p, const sg_run_task *t, int race,
                                 double target, sg_dev_port *port, sg_err *err);

/* ---- one task running ---- */
typedef struct sg_run_exec sg_run_exec;

/* What a running task is linked to, from its first event on (all optional: NULL leaves
 * it out). db: every event of the task (and the pool's events handed to it) is recorded
 * under campaign/task, committed at least once a second; a failed write stops the task
 * and sg_run_exec_db_error says why. pool, pd: what the summary says of the pools. */
typedef struct sg_run_links {
    sg_results *db;
    int64_t campaign, task;
    const sg_pool *pool;
    const sg_port_dev *pd;
    sg_metrics *metrics; /* every event of the task counted there, as task number task_index */
    int task_index;
    int64_t t0; /* the campaign's clock zero on the loop (ns); 0: this task's start */
} sg_run_links;

/* Opens OUT/events.jsonl, makes and starts the task. When it finishes, the loop is stopped
 * (sg_loop_stop) so that whoever runs the loop can look. links may be NULL. */
sg_run_exec *sg_run_exec_start(sg_loop *loop, const sg_run_config *c, const sg_run_prompts *p,
                               const sg_run_task *t, const sg_llm_port *llm, const sg_dev_port *dev,
                               const sg_run_links *links, sg_err *err);
/* The pool's events into this task's events.jsonl (one task per pool: optimize). */
void sg_run_exec_pool_event(void *exec, json_t *ev);
const char *sg_run_exec_db_error(const sg_run_exec *e);
/* Tokens used so far (live, or final). */
uint64_t sg_run_exec_tokens(const sg_run_exec *e);
/* The stats so far (live, or final) and the task's target speedup. */
const sg_task_stats *sg_run_exec_stats(const sg_run_exec *e);
double sg_run_exec_target(const sg_run_exec *e);
/* 1 once the task has finished (then *final, when given, holds its last stats). */
int sg_run_exec_finished(const sg_run_exec *e, sg_task_stats *final);
void sg_run_exec_cancel(sg_run_exec *e);
/* After it finished: OUT/best.EXT, the summary on stderr, OUT/summary.json.
 * full_reasoning_tokens: see sg_run_llm_announce. -1 when any output file (events.jsonl
 * included, at any time of the run) could not be written fully: err names it. */
int sg_run_exec_write(sg_run_exec *e, uint64_t full_reasoning_tokens, sg_err *err);
void sg_run_exec_free(sg_run_exec *e);

/* /metrics for c->metrics_listen (none: *out = NULL, 0), counting over pool for a run of
 * ntasks tasks, on loop; says its address on stderr. command: "optimize" or "campaign". */
int sg_run_metrics_start(sg_loop *loop, const sg_run_config *c, const char *command,
                         const sg_pool *pool, int ntasks, sg_metrics **out, sg_err *err);

/* ---- all of it, once ---- */
/* Runs c->task to its end on the real loop and writes its outputs. Returns 0 when it ran
 * (*final says how it ended: error[0], cancelled) and -1 when it could not (err);
 * SG_WFILE_REFUSED when an output path was refused before it started (bad input). */
int sg_run_one(const sg_run_config *c, sg_task_stats *final, sg_err *err);

#endif
