/* ports.h — the two narrow interfaces the task state machine talks through.
 *
 * Contract: the task never touches a socket, a device or a clock except through these
 * and the loop. Each port has a real implementation (an OpenAI-compatible server through
 * llm/llm.h; validation + profiling workers) and a simulated one (virtual-time
 * models in sim/), so the same policy runs live and in the simulation.
 *
 * LLM port: start_reasoning streams a chat request; start_fork a short generation from
 * the fork prompt (raw completions, or a chat request continuing the final message). Events run on
 * the loop thread. Exactly one `done` ends a generation that was not aborted; after abort (which
 * fills *out) no event of it runs again. Texts passed to events are borrowed for the call only.
 * reasoning events carry the reasoning token count so far: the server's running count, or
 * (estimated = 1) an estimate from the text.
 *
 * Device port: submit runs a job (validate the baseline and time it, or validate a
 * candidate and, when correct, time it against the baseline in the same worker) and calls
 * done on the loop thread exactly once, even when the job failed to run (ok = 0). Jobs
 * cannot be cancelled: whoever submits must outlive its jobs. */
#ifndef SG_PORTS_H
#define SG_PORTS_H

#include "common/err.h"
#include "specgen/fork.h"

#include <stddef.h>
#include <stdint.h>

/* ---- LLM ---- */

typedef struct sg_gen sg_gen; /* a running generation, owned by the port */

typedef struct sg_gen_summary {
    uint64_t prompt_tokens, reasoning_tokens, content_tokens;
    int estimated;           /* token counts estimated, not reported by the server */
    uint64_t cached_tokens;  /* of prompt_tokens, served from the server's prefix cache */
    int cached_reported;     /* the server reported cached_tokens for this generation */
    char finish[32];         /* "stop", "length", "abort", "client-abort", "error" */
    char error[512];         /* non-empty when the generation failed */
    int http_status;         /* the server's answer when it refused the request, else 0 or 200 */
    int first_token_timeout; /* failed: no token came within the first-token timeout */
    int64_t first_token_ns;  /* from the request's start to its first token; 0: none/unknown */
    /* A fork's prompt as sent: "ids" (token ids: the reasoning stream's prompt and generated
     * ids, then the fork's suffix), "text", or "" (the port does not say: simulated). */
    char prompt_form[8];
    uint64_t prefix_ids; /* ids: the prompt + reasoning ids the fork shares with the stream */
    char form_why[160];  /* text: why not ids */
} sg_gen_summary;

typedef struct sg_gen_events {
    void (*reasoning)(void *arg, const char *text, size_t len, uint64_t reasoning_tokens,
                      int estimated);
    void (*content)(void *arg, const char *text, size_t len);
    void (*done)(void *arg, const sg_gen_summary *s);
    void *arg;
} sg_gen_events;

/* A fork, as the pieces of both shapes a server may take it in: the raw completions prompt
 * (sg_fork_prompt: the chat template applied by specgen) and a chat request that continues
 * a final assistant message (sg_fork_assistant: the server applies its own template). The
 * port builds the text of the shape it sends, and only that (specgen/fork.h). */
typedef struct sg_fork_request {
    const sg_chat_template *tmpl;
    sg_gen *parent; /* the reasoning generation it forks from, while it runs (else NULL): a
                       port that has its token ids may send the fork as ids */
    const char *system, *user; /* the iteration's messages */
    const char *reasoning;     /* the reasoning so far: reasoning_len bytes */
    size_t reasoning_len;
    const char *answer_prefix; /* opens the answer's code block */
    const char *const *stop;   /* the chat template's stop strings (nstop), sent with it */
    size_t nstop;
    int64_t max_tokens;
    double temperature;
    double top_p; /* <= 0: the server's */
} sg_fork_request;

typedef struct sg_llm_port {
    void *impl;
    sg_gen *(*start_reasoning)(void *impl, const char *system, const char *user,
                               const sg_gen_events *ev, sg_err *err);
    sg_gen *(*start_fork)(void *impl, const sg_fork_request *req, const sg_gen_events *ev,
                          sg_err *err);
    void (*abort)(void *impl, sg_gen *g, sg_gen_summary *out);
    /* Optional (NULL: none): forks this task may have in flight now, set by campaign
     * admission (orchestrator/admit_gate.h); < 0: the trigger rules' own cap. */
    int (*fork_room)(void *impl);
} sg_llm_port;

/* ---- device (validation + profiling) ---- */

typedef enum { SG_JOB_BASELINE = 0, SG_JOB_CANDIDATE = 1 } sg_job_kind;

typedef struct sg_job_request {
    sg_job_kind kind;
    const char *source; /* candidate text (copied by the port); NULL for the baseline */
    size_t len;
    const char *name; /* "candidate 3" — used in messages and feedback */
    int iteration;    /* the task's iteration (0: the baseline): ending it cancels the job */
    int fork;         /* from a fork; else the final answer (or the baseline): goes first */
    /* how far its reasoning had got (reasoning tokens at the fork; the final answer: all of
     * it): the pool's by-value order (sg_pool_config.by_value) runs later forks first */
    uint64_t reasoning_tokens;
} sg_job_request;

typedef struct sg_job_outcome {
    int ok;           /* the job ran; 0: message says why not */
    int cancelled;    /* not ok because its iteration ended (dropped, or killed running) */
    int compiled;     /* the candidate compiled (whatever happened next) */
    int correct;      /* validated against the reference */
    char verdict[32]; /* "pass", "compile_error", "mismatch", ... */
    double base_ns;   /* baseline median (both kinds) */
    double cand_ns;   /* candidate median (candidate, when correct) */
    double speedup;   /* base_ns / cand_ns; 0 when not timed */
    double noise;     /* relative half-width of the speedup's band */
    int runs;
    char race_stop[16];  /* racing stopped its timing: "slower", "past_target", "not_better"; "": no
                          */
    int race_saved_runs; /* then, runs per side saved at least (profiler.h) */
    double race_saved_ms; /* and their device time */
    double compile_ms, validate_ms, profile_ms;
    char message[1024];  /* one sentence for a person */
    char feedback[4096]; /* the paragraph for the model */
    /* A torch task's validation: KernelBench's own check beside ours (its trials and how
     * many passed; 0 trials: not computed), recorded with the candidate (job_done's
     * kb_check), never the verdict. */
    int kb_trials, kb_pass;
} sg_job_outcome;

typedef void (*sg_job_done_fn)(void *arg, const sg_job_outcome *o);

typedef struct sg_dev_port {
    void *impl;
    int (*submit)(void *impl, const sg_job_request *req, sg_job_done_fn done, void *arg,
                  sg_err *err);
    /* The iteration is over (early stop, or the task stops): its queued jobs are dropped
     * and its running validations killed; each of them still gets its done call, with
     * cancelled set. NULL: the port cannot cancel (every job runs). */
    void (*end_iteration)(void *impl, int iteration);
    /* Optional (NULL: unknown): jobs of every task waiting for a slot, and the slots. */
    void (*load)(void *impl, int *queued, int *slots);
    /* Optional (NULL: never): the iteration's fork candidates from before `tokens` reasoning
     * tokens whose validation still waits for a slot are dropped (stale: a newer fork's
     * kernel of the iteration is already correct and the best); with `running`, those whose
     * validation runs yield its slot too: killed once another job waits (sg_pool_preempt).
     * Each still gets its done call, with cancelled set (maybe inside this call). */
    void (*drop_stale)(void *impl, int iteration, uint64_t tokens, int running);
} sg_dev_port;

#endif
