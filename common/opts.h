/* opts.h — the options several `specgen` commands share, each defined once.
 *
 * Contract: one named entry per shared option (sg_opt_id) holds its name, aliases, deprecated
 * spellings, kind, metavar, help, default, range and units (opts.c); a command takes one
 * with sg_opt_shared(ID, &slot) in its option table, so --help, the parser's range check,
 * `specgen completion`, `specgen options` and docs/options.md all read the same row. The
 * constants a lower layer checks again (the slots on one device, the devices of a list) are
 * here too, so every check uses the same bound. An option whose meaning differs between
 * commands (--out, --concurrency, --campaign) stays in each command's table, under the same
 * name where the concept is the same.
 *
 * --devices has one syntax everywhere: `all`, a count N (the first N devices), or a list
 * LANG:I[,I...] (cuda:0,1 or opencl:0); sg_devsel_parse reads it (an SG_OPT_FN). */
#ifndef SG_OPTS_H
#define SG_OPTS_H

#include "common/cli.h"

#define SG_SLOTS_PER_DEVICE_MAX 64 /* worker slots on one device: every layer's bound */
#define SG_DEVICES_MAX 64          /* devices in a --devices list or count */
#define SG_TARGET_DEFAULT 2.0      /* target speedup when neither the task nor --target sets one */
#define SG_TARGET_DEFAULT_S "2"    /* the same, as --help shows it */
#define SG_DB_DEFAULT "specgen-out/results.db" /* --db: the results database */

typedef enum {
    SG_OD_LLM,
    SG_OD_MODEL,
    SG_OD_TEMPLATE,
    SG_OD_TARGET,
    SG_OD_TASK_BUDGET_TIME,
    SG_OD_TASK_BUDGET_TOKENS,
    SG_OD_CAMPAIGN_BUDGET_TIME,
    SG_OD_CAMPAIGN_BUDGET_TOKENS,
    SG_OD_ITERATIONS,
    SG_OD_FIRST_TOKEN_TIMEOUT,
    SG_OD_MAX_TOKENS,
    SG_OD_DEVICE,
    SG_OD_DEVICES,
    SG_OD_SLOTS_PER_DEVICE,
    SG_OD_POOL,
    SG_OD_POOL_TOKEN_FILE,
    SG_OD_POOL_CACERT,
    SG_OD_POOL_TIMEOUT,
    SG_OD_NO_LOCAL,
    SG_OD_POOLS,
    SG_OD_POLICY,
    SG_OD_NO_FORK,
    SG_OD_NO_RACE,
    SG_OD_PREEMPT_STALE,
    SG_OD_BY_DISTANCE,
    SG_OD_EARLY_STOP,
    SG_OD_NO_EARLY_STOP,
    SG_OD_FORK_MODE,
    SG_OD_FORK_IDS,
    SG_OD_TRIGGER,
    SG_OD_DB,
    SG_OD_PROMPTS,
    SG_OD_TRACE,
    SG_OD_SPEED,
    SG_OD_JSON,
    SG_OD_SEED,
    SG_OD_RUN_TIMEOUT,
    SG_OD_COMPILE_TIMEOUT,
    SG_OD_NVRTC_PCH,
    SG_OD_API_KEY_FILE,
    SG_OD_TEMPERATURE,
    SG_OD_TOP_P,
    SG_OD_FORK_TEMPERATURE,
    SG_OD_FORK_TOP_P,
    SG_OD_METRICS_LISTEN,
    SG_OD_METRICS_TOKEN_FILE,
    SG_OD_PROGRESS_INTERVAL,
    SG_OD_WAKE_BATCH,
    SG_OD_PRECISION,
    SG_OD_TORCH_BASELINE,
    SG_OD_COUNT_ /* the number of entries */
} sg_opt_id;

/* The shared option id, writing into out (of the kind's type: cli.h). */
sg_opt sg_opt_shared(sg_opt_id id, void *out);
/* The same, where this command accepted other old spellings (they warn, as any deprecated
 * name): campaign's --per-task-time is its --task-budget-time. Replaces the entry's list. */
sg_opt sg_opt_shared_dep(sg_opt_id id, void *out, const char *deprecated);
/* The entry itself (tests walk the table); NULL past the end. */
const sg_opt *sg_opt_entry(int id);

/* A --devices value. */
typedef struct sg_devsel {
    char lang[8];            /* "cuda", "opencl", or "": the default backend */
    int count;               /* the first count devices; 0: all of them (when n == 0) */
    int n;                   /* a list: idx[0..n), in the order given */
    int idx[SG_DEVICES_MAX]; /* device numbers, each 0..255 and given once */
} sg_devsel;
/* Parse `all`, `N` or `LANG:I[,I...]` into *(sg_devsel *)out; an SG_OPT_FN. */
int sg_devsel_parse(const char *s, void *out, sg_err *err);
/* `all`, "4" or "cuda:0,1" (for messages), into buf. */
const char *sg_devsel_str(const sg_devsel *d, char *buf, size_t n);

/* --precision (a KernelBench problem's import: fp32, fp16 or bf16) and --baseline (its
 * baseline: torch-eager or torch-compile), SG_OPT_FNs: *(const char **)out is set to the value's
 * static spelling; any other value is an error naming the allowed values (the parser puts the
 * option's name before it). */
int sg_opt_precision(const char *s, void *out, sg_err *err);
int sg_opt_torch_baseline(const char *s, void *out, sg_err *err);

#endif
