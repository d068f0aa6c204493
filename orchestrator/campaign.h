/* campaign.h — many tasks of a suite on one loop, sharing the LLM endpoints and the pools,
 * under a time and a token budget, recorded in the results database and resumable.
 *
 * Contract: sg_campaign_run lists the suite (a folder whose subfolders hold task.json, or a
 * suite.json {"tasks": ["path", ...]} with paths relative to it), keeps the ones whose
 * folder name matches the glob, and runs them `concurrency` at a time with the options of
 * `base` (its budget_ns is each task's time; its out_dir the campaign's folder, each task
 * writing OUT/TASK/). One loop, one LLM client (capped per endpoint), one pool scheduler
 * (tasks take turns in it). The campaign's own budgets stop new tasks and cancel running
 * ones. Every event goes to the task's events.jsonl and to the database (required for
 * --resume): a resumed campaign skips the tasks that ended and runs again the ones a killed
 * run left unfinished (their partial rows are removed first), so nothing finished is lost
 * or repeated. A task that cannot run (it does not load; its output folder cannot be
 * written or is in use) is said, recorded as skipped with the reason, counted in not_run,
 * and run again by a resume; a suite.json that lists a task name twice is refused. SIGINT/SIGTERM
 * (watched on the loop) cancel the running tasks, which are recorded as cancelled; the resume
 * command is printed. Progress: a status line on a terminal, one line per task start and end on
 * stderr. */
#ifndef SG_CAMPAIGN_H
#define SG_CAMPAIGN_H

#include "orchestrator/run.h"
#include "specgen/admit.h"

typedef struct sg_campaign_config {
    const char *suite;      /* SUITE_DIR or suite.json */
    const char *glob;       /* task folder names to run (fnmatch); NULL: all */
    int concurrency;        /* tasks at once (2) */
    int64_t budget_ns;      /* the whole campaign's time (2 h); 0: none */
    uint64_t budget_tokens; /* the whole campaign's tokens (5M); 0: none */
    int64_t resume;         /* a campaign id to continue; 0: a new campaign */
    /* admission (specgen/admit.h, orchestrator/admit_gate.h): auto by default; at most
     * `concurrency` tasks run either way. Each decision is an "admission" event of the
     * campaign (task 0) in the database, and on --metrics-listen. */
    sg_admit_config admit;
} sg_campaign_config;

void sg_campaign_config_default(sg_campaign_config *c);

typedef struct sg_campaign_result {
    int64_t id;                       /* the campaign's id in the database (0 without one) */
    int tasks, done, failed, skipped; /* skipped: finished before a resume */
    int not_run;                      /* could not run (not loadable, output folder): skipped */
    int stopped;                      /* Ctrl-C / SIGTERM */
    int budget;                       /* a campaign budget ended it */
    double best_sum;                  /* sum of the best speedups of the tasks that ran */
    /* prefix reuse over the tasks that ran (sg_task_stats' fields, summed) */
    uint64_t fork_prompt_tokens, fork_cached_tokens;
    int forks_cache_reported, forks_done;
    int first_token_timeouts; /* generations a stalled server left without a first token */
    json_t *rows; /* one object per task (sg_ui_row_json's fields): the caller frees it */
} sg_campaign_result;

/* Returns 0 when the campaign ran (to its end, its budget, or a stop), -1 when it could not
 * start or the database failed (err). */
int sg_campaign_run(const sg_campaign_config *cc, const sg_run_config *base,
                    sg_campaign_result *res, sg_err *err);

#endif
