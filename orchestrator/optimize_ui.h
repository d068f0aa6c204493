/* optimize_ui.h — what `specgen optimize` shows while it runs and when it ends.
 *
 * Contract: on a terminal, one status line rewritten in place (at most ten times a
 * second, with an ETA from the budgets) plus a line for each notable event; elsewhere (a
 * pipe, CI, a Slurm log) plain lines for notable events and the same status as a plain
 * "progress:" line every interval_ns (0: none). Notable: a fork, a candidate's verdict, a new best,
 * an early stop, the end. The summary names the best kernel's file, its speedup, the time, the
 * tokens, and how much reasoning the early stop cut. Writes to the FILE given (stderr). */
#ifndef SG_OPTIMIZE_UI_H
#define SG_OPTIMIZE_UI_H

#include "orchestrator/port_dev.h"
#include "orchestrator/task.h"
#include "pool/pool.h"

#include <jansson.h>
#include <stdio.h>

typedef struct sg_ui {
    FILE *out;
    int tty;
    int64_t last_status_ns;
    int status_shown;
    int64_t interval_ns;   /* off a terminal: a progress line this often (0: none) */
    int64_t last_plain_ns; /* when the last one went out (0: not yet started) */
    int64_t budget_ns;     /* the task's budgets, for the ETA (0: none) */
    uint64_t budget_tokens;
} sg_ui;

void sg_ui_init(sg_ui *ui, FILE *out);
void sg_ui_event(sg_ui *ui, const json_t *ev);
void sg_ui_progress(sg_ui *ui, const sg_task_stats *s, int64_t now_ns);
/* full_reasoning_tokens: the whole reasoning's length when known (a replay trace), else 0. */
void sg_ui_summary(sg_ui *ui, const sg_task_stats *s, const char *best_path, const char *policy,
                   uint64_t full_reasoning_tokens);

/* The pools' lines of the summary: the split, each role's utilisation and waits, the
 * feedback count and latency. */
/* "prefix reuse: ..." — the share of the forks' prompt tokens the LLM server served from its
 * prefix cache, or why it is not known (s: fork_prompt_tokens, fork_cached_tokens,
 * forks_cache_reported, forks_done). */
void sg_ui_prefix_reuse(FILE *o, const sg_task_stats *s);
void sg_ui_pools(sg_ui *ui, const sg_pool_stats *st, const sg_port_dev_stats *ds);

/* "ETA 4m10s" (or "ETA ?" for eta_ns < 0), into buf. */
const char *sg_ui_eta(int64_t eta_ns, char *buf, size_t n);

/* The result (stdout): one row per task, as a table or as JSON. */
typedef struct sg_ui_row {
    const char *task;
    double best, target; /* best speedup (0: nothing beat the baseline) and the target */
    int met;             /* the target was met */
    int64_t time_ns;
    uint64_t tokens;
    const char *end; /* target, budget, error, cancelled, skipped, not run, ... */
} sg_ui_row;
void sg_ui_table(FILE *o, const sg_ui_row *rows, int n);
json_t *sg_ui_row_json(const sg_ui_row *r); /* a new reference */

#endif
