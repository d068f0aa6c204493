/* sim.h — the models that stand behind the seams in virtual time: simulated pool slots,
 * an LLM serving model, and the workload files that set their parameters.
 *
 * Contract
 *  - Simulated slots (sg_sim_slots) implement pool.h's slot seam on an sg_loop (meant for
 *    the virtual clock): a job takes a service time and ends with an outcome, both either
 *    given by the job (sg_pool_work.model pointing to an sg_sim_job) or drawn from the
 *    model with a seeded generator, so a run is reproducible from its seed. kill() cancels
 *    the job's timer: a killed job is never reported. Nothing here reads a real clock. */
#ifndef SG_SIM_H
#define SG_SIM_H

#include "common/loop.h"
#include "pool/pool.h"
#include "replay/replay.h"

#include <jansson.h>
#include <stdint.h>

typedef struct sg_sim_slot_model {
    double service_s[SG_POOL_NROLES]; /* mean service time per job kind */
    double cv;                        /* its coefficient of variation (lognormal); 0: fixed */
    double pass_rate;                 /* validate jobs: chance of a correct candidate */
    double speedup_mean;              /* profile jobs: mean speedup (lognormal, cv 0.3) */
    uint64_t seed;
    /* Candidates written by the LLM model carry "#define SIM_Q Q" and "#define SIM_ID N"
     * (quality and a unique id; code, so that they are not folded away as comments): then the
     * outcome follows the quality Q (0..1) — compile error with p_compile_error * (1 - Q),
     * wrong with p_wrong * (1 - Q), else correct at speedup max_speedup^Q times lognormal
     * noise (cv speedup_cv) — drawn from a generator seeded by (seed, N), so a candidate's
     * validation and timing agree and do not depend on the order jobs run in. */
    double p_compile_error, p_wrong, max_speedup, speedup_cv;
} sg_sim_slot_model;

/* A job's own outcome (sg_pool_work.model): used instead of drawing one. */
typedef struct sg_sim_job {
    double service_s; /* <= 0: drawn */
    int pass;
    double speedup;
} sg_sim_job;

typedef struct sg_sim_slots sg_sim_slots;
sg_sim_slots *sg_sim_slots_new(sg_loop *loop, const sg_sim_slot_model *m, int nslots);
/* The pool the slots report to (set before the first job). */
void sg_sim_slots_bind(sg_sim_slots *s, sg_pool *p);
void sg_sim_slots_free(sg_sim_slots *s);
extern const sg_pool_slot_ops sg_sim_slot_ops;

/* ---- the workload (sim/workloads/NAME.json, docs/eval.md) ---- */
typedef struct sg_sim_workload {
    char name[64];
    /* LLM serving */
    int instances;                       /* serving instances */
    int rate_points;                     /* decode rate per stream by batch size: */
    double rate_batch[8], rate_tok_s[8]; /* (batch, tokens/s) points, interpolated */
    double prefill_tok_s;                /* prompt and uncached prefix tokens per second */
    double first_token_s;                /* fixed latency before a stream's first token */
    double prompt_tokens;                /* an iteration's prompt (task + best kernel + feedback) */
    /* the instance's own prefix cache (its GPU memory, LRU, lost when squeezed), tokens */
    double cache_tokens;
    /* The kvstore: a second tier in the pool GPUs' spare memory, shared by the instances and
     * reached over the network (LMCache's remote backend). kvstore_tokens: its capacity (0: no
     * kvstore); prefixes are stored in whole chunks of kvstore_chunk_tokens as they are
     * decoded; reading n tokens back takes kvstore_latency_s + n * kv_bytes_per_token /
     * (kvstore_gb_s * 1e9) seconds instead of prefilling them. */
    double kvstore_tokens, kvstore_chunk_tokens, kv_bytes_per_token, kvstore_gb_s;
    double kvstore_latency_s;
    /* Where a fork is served (`sim --kv-placement`; a policy, not read from workload files):
     * < 0 (load) the least loaded instance; N >= 0 the instance whose prefix cache holds its
     * prefix unless that one runs and queues more than N more requests than the least loaded
     * one and more than 1.5 times as many; SG_SIM_PLACE_PREFIX: always there. */
    double kv_placement;
    /* KV capacity per instance, tokens; 0: none (the decode curve folds it in). With one,
     * requests past it wait, the prefix cache is squeezed, then the newest are preempted and
     * recomputed later (the LLM model below) */
    double kv_tokens;
    double reasoning_tokens, reasoning_cv; /* reasoning length per iteration (lognormal) */
    double code_every_tokens;              /* mean distance between code blocks in the reasoning */
    double cue_every_tokens;               /* mean distance between transition cues */
    double fork_tokens, final_tokens;      /* answer lengths: a fork's, the final answer's */
    /* what the reasoning is worth: a fork at fraction f of the reasoning writes a kernel
     * of quality q0 + (q1 - q0) * f^q_gamma + normal(0, q_sd); the final answer q_final;
     * every iteration adds q_iter (feedback helps) */
    double q0, q1, q_gamma, q_sd, q_final, q_iter;
    /* 0: an iteration's quality ignores the kernel it was given (the curve above); c > 0: it
     * starts from c times the quality of the best kernel in its prompt, when that is higher,
     * and its end (last fork, final answer) improves on that by q_iter */
    double q_carry;
    /* 0: every answer is a new kernel (its own SIM_ID). s > 0: the same kernel model (what
     * probe-exit:K's "two probes agree" reads): a fork whose quality before noise, q, falls
     * in the same step floor(q / s) as the previous fork of the same reasoning stream writes
     * that fork's kernel again, byte for byte (same SIM_Q and SIM_ID); else a new one.
     * `sim --compare` runs its probe-exit rows (and a specgen row beside them) with s = q_sd
     * when the workload leaves it 0 (docs/eval.md). ASSUMPTION: nothing measured. */
    double kernel_step;
    /* devices */
    sg_sim_slot_model slots;
    /* tasks */
    double target_speedup;
} sg_sim_workload;

#define SG_SIM_PLACE_PREFIX 1e300 /* kv_placement: always where the prefix is */

/* --kv-placement: "prefix", "prefix:N" (N >= 0 requests) or "load" into *out; the error names
 * the value. sg_sim_placement_name writes the same form back. */
int sg_sim_placement_parse(const char *s, double *out, sg_err *err);
void sg_sim_placement_name(double placement, char *out, size_t n);

/* Defaults: the reference workload (sim/workloads/reference.json says where each value
 * comes from). */
void sg_sim_workload_default(sg_sim_workload *w);
/* Overlay a workload file on w; unknown fields are errors naming the file and field. */
int sg_sim_workload_load(const char *path, sg_sim_workload *w, sg_err *err);
/* The decode rate of one stream on an instance running `batch` streams. */
double sg_sim_decode_rate(const sg_sim_workload *w, int batch);

/* ---- the LLM model ----
 * Serving instances with a per-stream decode rate that falls as the batch grows, a
 * prefill rate, a prefix cache per instance (LRU over the reasoning streams' prefixes, in
 * tokens) and a kvstore shared by the instances (kvstore_tokens): a fork is served where
 * kv_placement says; there, a prefix in the instance's own cache costs nothing (the fork
 * prefills only its answer prefix), else the part the kvstore holds is fetched (fetch time)
 * and the rest prefilled. Decoding is a fluid: every stream of an instance decodes at the
 * rate of its current batch, which changes the moment a stream joins or leaves (prefill
 * included). A reasoning stream emits text in chunks: filler words, code blocks
 * (```c ... ```) and transition cues ("Wait,") where a real model would write them, a
 * chunk ending with each (so the real trigger policy sees it at its token) and at most 64
 * tokens long. Forks and final answers emit a fenced ```opencl kernel whose source
 * defines SIM_Q and SIM_ID (its quality and a unique id). Abort stops a generation at once
 * (no callback after it) and counts the tokens decoded up to that moment; a generation is
 * freed after its done callback returns, or by abort. With kv_tokens > 0 an instance holds
 * at most that much KV (admitted prompts, uncached fork prefixes, and every token decoded):
 * requests wait for room in arrival order, the prefix cache is squeezed first, then the
 * newest admitted are preempted and later fetch what the kvstore holds of their context and
 * prefill the rest again; prefills then
 * run one at a time per instance. Everything is drawn from generators seeded
 * by (seed, task, iteration, fork), so a run is reproducible. */
typedef struct sg_sim_llm sg_sim_llm;
typedef struct sg_sim_gen sg_sim_gen;

typedef struct sg_sim_gen_cb {
    /* reasoning text and the stream's reasoning tokens so far */
    void (*reasoning)(void *arg, const char *text, size_t len, uint64_t tokens);
    void (*content)(void *arg, const char *text, size_t len);
    /* the end: tokens generated, prompt tokens, and how many of them came from the cache */
    void (*done)(void *arg, uint64_t reasoning, uint64_t content, uint64_t prompt, uint64_t cached);
    void *arg;
} sg_sim_gen_cb;

sg_sim_llm *sg_sim_llm_new(sg_loop *loop, const sg_sim_workload *w, uint64_t seed);
/* `sim --traces`: every reasoning stream replays a recorded trace's reasoning (task i: the
 * traces' i modulo their count; its tokens as replay-llm cuts them, 8 a chunk) instead of
 * the lognormal length and the filler with its modelled code blocks and cues; forks and
 * final answers keep the quality model (their fraction of the trace). traces is borrowed
 * (it outlives m); traces without reasoning are the caller's to refuse. */
void sg_sim_llm_traces(sg_sim_llm *m, const sg_replay_traces *traces);
void sg_sim_llm_free(sg_sim_llm *m);
/* Iteration `iteration` of task `task` (both small integers the caller keeps). */
sg_sim_gen *sg_sim_llm_reason(sg_sim_llm *m, int task, int iteration, int stream,
                              const sg_sim_gen_cb *cb);
/* The quality of the best kernel in that iteration's prompt (read by the port from its
 * SIM_Q; q_carry uses it). Call before the iteration's first reasoning stream. */
void sg_sim_llm_prompt_quality(sg_sim_llm *m, int task, int iteration, double q_best);
/* A fork from reasoning stream `stream` of that iteration, after `prefix_tokens` of its
 * reasoning (the stream may have ended; its prefix may since have left the cache). */
sg_sim_gen *sg_sim_llm_fork(sg_sim_llm *m, int task, int iteration, int stream,
                            uint64_t prefix_tokens, const sg_sim_gen_cb *cb);
/* Stop it now; *reasoning / *content: what it had generated. The generation is freed. */
void sg_sim_llm_abort(sg_sim_llm *m, sg_sim_gen *g, uint64_t *reasoning, uint64_t *content);
/* What a serving instance's /metrics would say, summed over the instances (kv_usage: the
 * fullest instance's admitted KV over its capacity, 0 without one); counters since the start. */
typedef struct sg_sim_llm_signals {
    int instances, running, waiting;
    double kv_usage;
    uint64_t preemptions, recomputed_tokens; /* recomputed: prefill the preempted pay again */
    uint64_t decoded;
    uint64_t fork_queries, fork_hits; /* forks, and those whose prefix was cached */
    /* forks that read their prefix from the kvstore; tokens read from it (forks and the
     * preempted) */
    uint64_t fork_fetches, fetched_tokens;
} sg_sim_llm_signals;
void sg_sim_llm_signals_get(const sg_sim_llm *m, sg_sim_llm_signals *s);
/* Tokens decoded so far, and prefill tokens saved by the cache (for the report). */
void sg_sim_llm_counts(const sg_sim_llm *m, uint64_t *decoded, uint64_t *prefilled,
                       uint64_t *cached);

/* ---- fitting a workload to calibration data (`specgen sim fit`; docs/calibration.md) ----
 * sg_sim_fit reads the rows `specgen calibrate` (or `sim --calibration-run`) recorded and
 * fits every workload parameter they can give, each by maximum likelihood with its sample
 * count and a 95% interval: the reasoning length (lognormal), the code-block and cue
 * spacing (Poisson processes with the model's dead time after each: SG_SIM_CODE_TOKENS
 * tokens after a code block, 1 after a cue), the decode rate at each measured batch, the
 * prefill rate (first-token latency against uncached prompt tokens) and first-token
 * latency, validation and profiling times (lognormal, one cv), and jointly the quality
 * curve and the outcome model (q0, q1, q_gamma, q_sd, q_final, p_compile_error, p_wrong,
 * max_speedup, speedup_cv) over every kernel's verdict and speedup, integrating over the
 * quality noise. A parameter whose data are too few (fewer samples than it needs, or an
 * interval the data cannot narrow) is not fitted: `why` says so and its value stays the
 * base workload's (an ASSUMPTION). */
#define SG_SIM_CODE_TOKENS 41 /* a code block's tokens in the model (its text, then 1) */
#define SG_FIT_MAXP 10
typedef double (*sg_fit_fn)(void *arg, const double *x);
/* Nelder-Mead from x (n <= SG_FIT_MAXP, first steps step[]): x becomes the minimum found. */
double sg_fit_minimize(sg_fit_fn f, void *arg, double *x, const double *step, int n, int iters);
/* Newton steps from x (numerical gradient and Hessian, backtracking): polishes a minimum. */
int sg_fit_newton(sg_fit_fn f, void *arg, double *x, int n, int steps);
/* Standard deviations from the inverse of f's numerical Hessian at x (f: a negative log
 * likelihood); -1 when it is not positive definite. */
int sg_fit_covariance(sg_fit_fn f, void *arg, const double *x, int n, double *sd);

typedef struct sg_fit_param {
    char name[24];
    double value, lo, hi; /* the estimate and its 95% interval */
    int n;                /* samples it rests on */
    int fitted;           /* 0: not (why), value the base workload's */
    char why[200];
} sg_fit_param;

#define SG_FIT_NPARAMS 40
typedef struct sg_fit {
    sg_sim_workload w; /* the base workload with the fitted values */
    sg_fit_param p[SG_FIT_NPARAMS];
    int np;
} sg_fit;

struct sg_calib_data;
int sg_sim_fit(const struct sg_calib_data *d, const sg_sim_workload *base, sg_fit *out,
               sg_err *err);
/* The fitted workload as a workload file (sg_sim_workload_load reads it): every field, its
 * source (the fit's figures, or ASSUMPTION and why), and "fit": each parameter's estimate,
 * interval and samples. */
json_t *sg_sim_fit_json(const sg_fit *f);

#endif
