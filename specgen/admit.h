/* admit.h — campaign admission control: how many tasks run their iterations at once, and how
 * many forks a task may have in flight, from the LLM servers' cache pressure.
 *
 * Contract: a pure policy (no clock, no I/O): the caller samples the signals on its event
 * loop's clock (virtual in `specgen sim`, real in `specgen campaign`) every interval_ns and
 * hands them to sg_admit_update, which returns the decision and its reason. The same code
 * runs in both. Counters in the signals are cumulative (the policy takes the differences);
 * a signal the servers do not report is < 0 and is not used.
 *
 * Policy (auto), measured in docs/eval.md (the admission study): additive increase and
 * multiplicative decrease (AIMD) of the active-task limit, from `start`:
 *   - back off (x decrease of the smaller of the limit and the active tasks, at least min) on
 *     more preemptions over the interval than preempt_share x active (or any restarted
 *     stream), on a waiting queue at the servers above queue_share x active that rose, or
 *     when the smoothed token rate fell by more than `drop` after the last increase; then
 *     hold (draining) until the active tasks are down to the limit, since a started iteration
 *     runs to its end and the cache frees only then;
 *   - grow while the limit binds (more tasks want to run than it allows) and the fullest
 *     server's KV cache is below kv_grow: doubling while the cache is below kv_start and
 *     nothing has backed off yet (slow start), then + increase per interval;
 *   - else hold (cache_full, no_demand).
 * Forks follow the same budget: under pressure (the cache above kv_high, a back-off, or
 * draining) each task may keep at most fork_pressure forks in flight, else the trigger
 * rules' own cap applies (fork_cap -1). Fixed (fixed > 0): the limit is that N, always, and
 * forks are not capped. A started iteration is never aborted: the caller lets
 * tasks over the limit finish their iteration and holds them before the next one. */
#ifndef SG_ADMIT_H
#define SG_ADMIT_H

#include <stdint.h>

typedef struct sg_admit_config {
    int fixed;            /* > 0: fixed:N */
    int start, min, max;  /* the first limit, and its bounds */
    int64_t interval_ns;  /* between decisions */
    double increase;      /* additive step, tasks */
    double decrease;      /* multiplicative factor on a back-off (0 < x < 1) */
    double kv_high;       /* KV usage above which forks are capped */
    double kv_grow;       /* KV usage below which the limit may grow */
    double kv_start;      /* below it, before the first back-off, the limit doubles */
    double drop;          /* relative fall of the (smoothed) token rate that counts as a drop */
    double preempt_share; /* back off on more preemptions per interval than this x active */
    double queue_share;   /* ... or a waiting queue above this x active that rose */
    int fork_pressure;    /* forks in flight per task under pressure */
} sg_admit_config;

void sg_admit_config_default(sg_admit_config *c);
/* "auto" or "fixed:N" (N >= 1) into c (the rest of c unchanged); -1 with a message naming
 * the value on anything else. */
int sg_admit_parse(const char *s, sg_admit_config *c, char *msg, int msglen);

typedef struct sg_admit_signals {
    int64_t now_ns;
    int active; /* tasks running an iteration now */
    int demand; /* tasks that would run one if admitted (active ones included) */
    /* from the servers' /metrics, or the model; < 0: not reported */
    double kv_usage;    /* the fullest server's KV cache usage, 0..1 */
    double preemptions; /* cumulative */
    double waiting;     /* requests waiting at the servers now */
    /* what the client sees itself */
    double tokens;   /* cumulative tokens received (all streams) */
    double restarts; /* cumulative streams that failed and were restarted, < 0: unknown */
} sg_admit_signals;

typedef enum {
    SG_ADMIT_START = 0, /* the first decision */
    SG_ADMIT_FIXED,
    SG_ADMIT_GROW,
    SG_ADMIT_HOLD,
    SG_ADMIT_PREEMPTIONS,
    SG_ADMIT_QUEUE,
    SG_ADMIT_THROUGHPUT,
    SG_ADMIT_CACHE_FULL, /* hold: the cache is above kv_high */
    SG_ADMIT_NO_DEMAND,  /* hold: fewer tasks want to run than the limit allows */
    SG_ADMIT_DRAINING,   /* hold: more tasks are active than the last back-off allows */
} sg_admit_reason;

const char *sg_admit_reason_name(sg_admit_reason r);

typedef struct sg_admit_decision {
    int limit;           /* tasks that may run an iteration at once */
    int previous;        /* the limit before this decision */
    int fork_cap;        /* forks in flight per task; -1: the trigger rules' own */
    sg_admit_reason why; /* the reason (sg_admit_reason_name) */
    double tok_s;        /* the token rate over the last interval (-1 on the first) */
    double preempted;    /* preemptions over the last interval */
} sg_admit_decision;

typedef struct sg_admit {
    sg_admit_config c;
    int limit, fork_cap, grew, primed, draining, backed_off_once;
    double rate; /* smoothed token rate */
    sg_admit_signals last;
} sg_admit;

void sg_admit_init(sg_admit *a, const sg_admit_config *c);
/* The limit now (before the first update: start, or fixed). */
int sg_admit_limit(const sg_admit *a);
/* forks in flight per task now; -1: the trigger rules' own */
int sg_admit_fork_cap(const sg_admit *a);
/* One decision from the signals sampled now (call every interval_ns). */
void sg_admit_update(sg_admit *a, const sg_admit_signals *s, sg_admit_decision *d);

#endif
