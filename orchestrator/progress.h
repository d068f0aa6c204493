/* progress.h — the ETA a run's progress line shows, from its budgets (no I/O).
 *
 * Contract: times in ns, -1 when nothing bounds or predicts the end. A run ends at its time
 * budget at the latest; when tokens flow, the token budget's end is predicted from the rate
 * so far; a campaign's queue is predicted from its tasks: those left run `concurrency` at a
 * time and each takes the mean time of the tasks that ended (the task budget before any
 * ended), the running ones what remains of that. The ETA is the earliest of these. */
#ifndef SG_PROGRESS_H
#define SG_PROGRESS_H

#include <stdint.h>

typedef struct sg_progress {
    int64_t elapsed_ns;
    int64_t budget_ns;      /* 0: none */
    uint64_t tokens;        /* used so far */
    uint64_t budget_tokens; /* 0: none */
    /* a campaign's tasks (all 0 for one task) */
    int left, running, concurrency;
    int64_t task_budget_ns;      /* each task's time budget (0: none) */
    int64_t ended_task_ns;       /* sum of the ended tasks' times */
    int ended;                   /* how many ended (with a time) */
    int64_t running_elapsed_max; /* the longest-running task's time so far */
} sg_progress;

/* The time left, or -1 when unknown. */
int64_t sg_progress_eta(const sg_progress *p);

#endif
