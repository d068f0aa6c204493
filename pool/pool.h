/* pool.h — validation and profiling pools: slots on devices, the scheduler that feeds
 * them, and `specgen pool`, the node agent that serves its slots to other machines.
 *
 * Contract
 *  - A slot is a share of one device (a GPU, or an OpenCL device: on PoCL, the CPU) with a
 *    role, validate or profile. Slots are implemented behind sg_pool_slot_ops: local
 *    (pool/slot_local.c: one sandboxed worker process per slot, bound to its device),
 *    simulated (sim/: service times and outcomes from a model on the virtual clock), and
 *    remote (pool/slot_remote.c: the slots of `specgen pool` agents over HTTP). An implementation
 * starts a job when asked, kills it at once when asked, and reports every started job it was not
 * told to kill exactly once through sg_pool_slot_done, on the loop's thread, never from inside
 * start() or kill().
 *  - The scheduler (sg_pool) runs on one sg_loop, has no threads and reads time only from
 *    sg_loop_now, so it runs unchanged on the virtual clock. Jobs are validate or profile;
 *    a validate job runs on a validate slot, a profile job on a profile slot, and while a
 *    profile job runs on a device nothing else runs there (a device about to profile
 *    starts nothing new until its running jobs drain). Validate jobs may share a device.
 *  - Order, highest first: the final answer (or baseline) of a live iteration; the newest
 *    fork of a live iteration; older forks (newest first); jobs of ended iterations (kept
 *    only with keep_ended, else dropped when their iteration ends). Within a class profile
 *    jobs go first, and tasks take turns (round-robin) before arrival order counts
 *    (by_distance: the task's distance to its target before the turns).
 *  - Cancel: sg_pool_cancel drops a queued job or kills a running one; sg_pool_preempt
 *    drops a queued job or lets a running one yield its slot once another job waits;
 *    sg_pool_end_iteration drops the iteration's queued jobs and kills its running
 *    validate jobs; its running profile jobs finish (one of them may be timing the
 *    candidate that ended the iteration, and a timing near its end is worth its
 *    feedback). A job's done
 *    callback runs exactly once: finished, dropped, killed or failed (sg_pool_end); never
 *    inside sg_pool_submit, but for dropped and killed jobs inside the cancelling call.
 *  - Split: with SG_POOL_STATIC the roles never change. With SG_POOL_ELASTIC the scheduler
 *    keeps, per role, a decayed arrival rate and a moving average of service times, and
 *    chooses the split that minimises the expected wait of the offered load (M/M/c per
 *    role, Erlang C), at least one slot per role while both have work; a backlog beyond
 *    one job a slot adds to a role's load. A new split must beat the current one by
 *    `hysteresis` and wait `dwell_ns` after the last change (twice as long each time a
 *    split undoes the one before); a role with work and no slot gets one at once. A slot
 *    changes role only between jobs. Every decision is an event with its reason.
 *  - Lost slots: an implementation that loses a slot (sg_pool_slot_offline) gets its running
 *    job re-queued, never ended; the job runs again on another slot.
 *  - Events (job_start, job_end, pool_split, slot_offline, slot_online, job_requeue) go to on_event
 * as JSON objects owned by the receiver, when the pool's state is already consistent; on_event must
 * not call the pool (defer that to the loop); sg_pool_stats gives per-role utilisation (busy /
 * available slot time), mean and p95 wait, and jobs done. */
#ifndef SG_POOL_H
#define SG_POOL_H

#include "common/err.h"
#include "common/loop.h"
#include "profiler/profiler.h"
#include "validator/validator.h"

#include <jansson.h>
#include <stdint.h>

/* The job kinds (a slot's role), one list: X(ID, NAME) gives SG_POOL_ID and its name, the
 * job's "kind" and a slot's "role" on the agent's wire, and the device job kind that runs
 * it (validator.h's "validate", profiler.h's "profile"). */
#define SG_POOL_ROLES(X)                                                                           \
    X(VALIDATE, "validate")                                                                        \
    X(PROFILE, "profile")
typedef enum {
#define SG_POOL_ROLE_ENUM(id, name) SG_POOL_##id,
    SG_POOL_ROLES(SG_POOL_ROLE_ENUM)
#undef SG_POOL_ROLE_ENUM
        SG_POOL_NROLES
} sg_pool_role;
const char *sg_pool_role_name(sg_pool_role r); /* "validate", "profile"; "?" outside */
/* 0 with *out, or -1 when name is no role. */
int sg_pool_role_parse(const char *name, sg_pool_role *out);
/* "validate, profile", for messages */
#define SG_POOL_ROLE_SEP(id, name) ", " name
#define SG_POOL_ROLE_NAMES (&(SG_POOL_ROLES(SG_POOL_ROLE_SEP))[2]) /* past the first ", " */

/* Where a job's candidate came from: it decides the priority class. */
typedef enum { SG_POOL_FINAL = 0, SG_POOL_FORK = 1 } sg_pool_origin;

/* How a job ended. */
typedef enum {
    SG_POOL_DONE = 0, /* ran to the end (whatever the verdict) */
    SG_POOL_DROPPED,  /* cancelled while queued */
    SG_POOL_KILLED,   /* cancelled while running: the worker was killed */
    SG_POOL_FAILED,   /* the slot could not run it (message says why) */
} sg_pool_end;
const char *sg_pool_end_name(sg_pool_end e);

/* What a job carries: the scheduler never looks inside `what`; slot implementations do. */
typedef struct sg_pool_work {
    sg_pool_role kind;
    const char *task_dir;  /* the task folder (local slots) */
    const char *candidate; /* source text; NULL: the task's baseline */
    size_t candidate_len;
    const char *name;         /* "candidate 3", for messages */
    const void *model;        /* for simulated slots: the sim's description of the candidate */
    const sg_prof_opts *prof; /* profile jobs: timing options (NULL: defaults) */
    double value;             /* by_value order: larger goes first among forks (reasoning tokens) */
    /* by_distance order: how far the job's task is from its target when it was submitted,
     * the target speedup over the task's best so far (> 1 until met); 0: unknown */
    double distance;
} sg_pool_work;

typedef struct sg_pool_job {
    uint64_t id;
    int task;           /* the submitter's task index: tasks take turns */
    uint64_t iteration; /* unique per pool; its end cancels its jobs */
    sg_pool_origin origin;
    uint64_t seq; /* arrival order in the pool (forks: newer is larger) */
    sg_pool_work work;
    int64_t queued_ns, started_ns, ended_ns;
    int slot;     /* -1 while queued */
    int requeued; /* times its slot was lost while it ran (sg_pool_slot_offline) */
} sg_pool_job;

/* The result of a finished job. val / prof point into the slot implementation's storage
 * (valid during the done callback only). Every implementation fills them for a finished
 * job (the simulated slots derive them from their drawn outcome), so callers need not know
 * which kind of slot ran it; NULL: the slot could not run the job. */
typedef struct sg_pool_result {
    sg_pool_end end;
    int pass;         /* validate: correct; profile: timed and still correct */
    char verdict[32]; /* "pass", "compile_error", "mismatch", ..., "killed" */
    char message[1024];
    double compile_ms, run_ms;
    double base_ns, cand_ns, speedup, noise; /* profile jobs */
    int runs;
    const sg_val_result *val;
    const sg_prof_result *prof;
} sg_pool_result;

typedef void (*sg_pool_done_fn)(void *arg, const sg_pool_job *job, const sg_pool_result *r);

/* ---- the slot seam ---- */
typedef struct sg_pool sg_pool;
typedef struct sg_pool_slot_ops {
    /* Start job on slot i (idle). Returns 0, or -1 with err (the job then ends FAILED). */
    int (*start)(void *impl, int slot, const sg_pool_job *job, sg_err *err);
    /* Stop slot i's job at once (kill its worker); the implementation must not report that
     * job afterwards: the scheduler ends it KILLED itself. */
    void (*kill)(void *impl, int slot);
    /* Optional (NULL: not told): slot i's role changed (between jobs). Remote slots tell
     * their agent, whose status and metrics show it. */
    void (*role)(void *impl, int slot, sg_pool_role role);
} sg_pool_slot_ops;

typedef struct sg_pool_slot_desc {
    int device;    /* slots with the same device share it */
    char name[64]; /* "opencl:0/1", "cuda:3/0", "node7:9000/cuda:1/0" */
} sg_pool_slot_desc;

/* Called by slot implementations, on the loop thread, once per started job. r->end is
 * ignored (the scheduler sets it). */
void sg_pool_slot_done(sg_pool *p, int slot, sg_pool_result *r);
/* A slot its implementation lost (a remote agent that died or stopped answering): it takes
 * no job until sg_pool_slot_online. Its running job, if any, goes back to the queue at its
 * place by arrival (a `job_requeue` event) and runs again elsewhere: its done callback still
 * runs exactly once, its wait is one sample (the whole wait, updated when it starts again),
 * its lost run counts as busy slot time but neither as a finished job nor in the service
 * average; the implementation must not report that job afterwards. Offline slots are not
 * available slot time and (elastic) not part of the split; a static split keeps its roles,
 * so a role whose slots are all offline waits for one to return. Events: slot_offline
 * (with the reason), slot_online. Call on the loop thread, never inside start() or kill(). */
void sg_pool_slot_offline(sg_pool *p, int slot, const char *why);
void sg_pool_slot_online(sg_pool *p, int slot);
int sg_pool_slot_is_online(const sg_pool *p, int slot);
sg_pool_role sg_pool_slot_role(const sg_pool *p, int slot);

/* ---- the scheduler ---- */
typedef enum { SG_POOL_ELASTIC = 0, SG_POOL_STATIC = 1 } sg_pool_mode;

typedef struct sg_pool_config {
    sg_pool_mode mode;
    int static_validate, static_profile; /* SG_POOL_STATIC: V/P (sum = the slots) */
    int keep_ended;                      /* run jobs of ended iterations (default: drop) */
    int fifo;                            /* no priorities: arrival order (for comparison) */
    /* forks by value (work.value: how far the reasoning had got) across tasks, instead of
     * each iteration's newest fork first with tasks taking turns; finals still first */
    int by_value;
    /* within each class, tasks by their distance to the target (work.distance) before
     * their turns: 1 the furthest first, -1 the nearest first, 0 off (turns only) */
    int by_distance;
    int64_t dwell_ns;                      /* least time between splits (default 5 s) */
    double hysteresis;                     /* a new split must cut the cost by this (0.2) */
    int64_t rate_window_ns;                /* arrival rates decay with this time (60 s) */
    double service_init_s[SG_POOL_NROLES]; /* service time before any job ended (1, 3) */
} sg_pool_config;
void sg_pool_config_default(sg_pool_config *c);
/* "elastic" or "static:V/P". */
int sg_pool_config_parse(const char *s, sg_pool_config *c, sg_err *err);
/* --by-distance: "far" (1), "near" (-1) or "off" (0) into c->by_distance. */
int sg_pool_by_distance_parse(const char *s, sg_pool_config *c, sg_err *err);

/* The slot descriptions are copied; ops/impl must outlive the pool. */
int sg_pool_new(sg_loop *loop, const sg_pool_config *cfg, const sg_pool_slot_desc *slots,
                int nslots, const sg_pool_slot_ops *ops, void *impl, sg_pool **out, sg_err *err);
/* Jobs still queued or running are ended (dropped / killed) first, their callbacks run. */
void sg_pool_free(sg_pool *p);
void sg_pool_on_event(sg_pool *p, void (*fn)(void *arg, json_t *ev), void *arg);

/* Queue a job; its done callback runs exactly once, never from inside this call. The
 * strings in work are borrowed until then. Returns the job id (> 0). */
uint64_t sg_pool_submit(sg_pool *p, int task, uint64_t iteration, sg_pool_origin origin,
                        const sg_pool_work *work, sg_pool_done_fn done, void *arg);
void sg_pool_cancel(sg_pool *p, uint64_t job);
/* The job if it is still queued (it ends DROPPED, its callback maybe inside this call): 1,
 * else 0 (running, or gone) and nothing changes. */
int sg_pool_drop_queued(sg_pool *p, uint64_t job);
/* The job is stale (its result no longer matters; sg_dev_port's drop_stale). Queued, it
 * ends DROPPED at once (its callback inside this call), as sg_pool_drop_queued: returns 1.
 * Running, it yields its slot: the scheduler kills it (it ends KILLED, a `job_preempt`
 * event first) as soon as any job waits for a slot (on a static split: a job of its slot's
 * role), now (on the loop, not inside this call) or later while it still runs, and the slot
 * takes the next job; while nothing waits it runs on and ends as usual. Returns 2. 0: gone,
 * nothing changes. */
int sg_pool_preempt(sg_pool *p, uint64_t job);
/* The iteration is over: drop its queued jobs, kill its running validate jobs; its running
 * profile jobs finish. */
void sg_pool_end_iteration(sg_pool *p, uint64_t iteration);

typedef struct sg_pool_role_stats {
    int slots;     /* now */
    uint64_t jobs; /* finished (DONE) */
    uint64_t dropped, killed;
    uint64_t preempted; /* of the killed: stale jobs that yielded (sg_pool_preempt) */
    double busy_s, available_s, utilisation; /* busy / available slot seconds */
    double wait_mean_s, wait_p95_s;
    double arrival_rate, service_s; /* the estimates the split uses */
} sg_pool_role_stats;
typedef struct sg_pool_stats {
    sg_pool_role_stats role[SG_POOL_NROLES];
    int splits; /* role changes decided */
    int queued, running;
    double busy_s, available_s, utilisation; /* over all slots */
    double utilisation_queued; /* busy share of all slots while some job was waiting */
} sg_pool_stats;
void sg_pool_stats_get(const sg_pool *p, sg_pool_stats *s);
/* Cheap, for policies that ask often: jobs waiting for a slot, and slots online. */
void sg_pool_load(const sg_pool *p, int *queued, int *slots);

/* ---- local slots (pool/slot_local.c) ---- */
/* ndevices x per_device slots (each 1..; per_device at most SG_SLOTS_PER_DEVICE_MAX): device
 * d is ids[d], or (ids NULL) CUDA device base->cuda_device + d or OpenCL
 * device base->opencl_device + d (base->slots and base->kinds are ignored: each device
 * gets per_device workers serving validate and profile jobs). Workers start on first
 * use. Slot names read "opencl:0/1" (device 0, its second worker). */
typedef struct sg_pool_local sg_pool_local;
int sg_pool_local_new(sg_loop *loop, const sg_dev_opts *base, const int *ids, int ndevices,
                      int per_device, sg_pool_local **out, sg_err *err);
/* The slot descriptions to create the scheduler with (owned by l). */
const sg_pool_slot_desc *sg_pool_local_slots(const sg_pool_local *l, int *n);
/* The scheduler to report to (before the first job). */
void sg_pool_local_bind(sg_pool_local *l, sg_pool *p);
/* Or a function to report to instead (the node agent runs its slots without a scheduler):
 * fn runs on the loop thread, once per started job not killed; r is valid during the call. */
void sg_pool_local_on_done(sg_pool_local *l, void (*fn)(void *arg, int slot, sg_pool_result *r),
                           void *arg);
/* Free after the scheduler (which kills what still runs). */
void sg_pool_local_free(sg_pool_local *l);
extern const sg_pool_slot_ops sg_pool_local_ops;

/* ---- remote slots: the slots of `specgen pool` agents (pool/slot_remote.c) ----
 * At the start every agent is asked for its slots (waiting up to connect_wait_s for one
 * that is still starting); an agent that cannot be reached then, or runs another device
 * language, is an error. Afterwards everything runs on the loop: a job is a POST naming its
 * slot (the task by hash; the files once, when the agent asks with 412), its end comes on
 * a long-poll of the agent's events, a kill is a cancel request. An agent whose poll or
 * request fails, times out, answers 429/503/401, or that restarted (a new instance) is
 * lost: its slots go offline (sg_pool_slot_offline: running jobs re-queued elsewhere), and
 * it is asked again with backoff (0.25 s doubling to 10 s) until it answers; then its
 * slots come back and jobs it may still run for us are cancelled. Slot names are
 * "HOST:PORT/<the agent's name>" ("127.0.0.1:9000/opencl:0/1"); devices are numbered
 * from first_device so that they differ from local ones. Messages go to stderr, prefixed by
 * log_name. */
#define SG_POOL_REMOTE_TIMEOUT_S 5.0
typedef struct sg_pool_remote_config {
    const char *urls;   /* "URL[,URL...]" or "@FILE" */
    const char *token;  /* bearer token, or NULL */
    const char *cacert; /* CA bundle for https agents, or NULL: the system's */
    const char *log_name;
    int lang;              /* the sg_dev_lang every agent must run */
    int first_slot;        /* the scheduler index of the first remote slot */
    int first_device;      /* device numbers from here on */
    double connect_wait_s; /* at the start (default 10 when 0) */
    /* An agent that has not answered for this long is lost (0: SG_POOL_REMOTE_TIMEOUT_S).
     * Its event long-poll asks for an answer within half of it (at most 10 s), so a live
     * agent answers in time even when it has nothing to say. */
    double timeout_s;
} sg_pool_remote_config;
typedef struct sg_pool_remote sg_pool_remote;
int sg_pool_remote_new(sg_loop *loop, const sg_pool_remote_config *cfg, sg_pool_remote **out,
                       sg_err *err);
const sg_pool_slot_desc *sg_pool_remote_slots(const sg_pool_remote *r, int *n);
/* The scheduler to report to; starts listening to the agents. */
void sg_pool_remote_bind(sg_pool_remote *r, sg_pool *p);
/* Free after the scheduler. */
void sg_pool_remote_free(sg_pool_remote *r);
extern const sg_pool_slot_ops sg_pool_remote_ops;
/* A token file's first line (a new string), or NULL with err naming opt and the file. */
char *sg_pool_token_read(const char *opt, const char *path, sg_err *err);

/* ---- two sets of slots behind one scheduler (pool/slot_mux.c) ----
 * Slots 0..n0-1 go to ops0/impl0, the rest to ops1/impl1, with the scheduler's own index
 * (so the second set is made with its first index n0: remote slots after local ones). */
typedef struct sg_pool_mux {
    const sg_pool_slot_ops *ops[2];
    void *impl[2];
    int n0;
} sg_pool_mux;
extern const sg_pool_slot_ops sg_pool_mux_ops;

/* ---- the split (pure; pool/split.c) ---- */
/* Expected wait (s) of an M/M/c queue with arrival rate lambda (1/s), mean service s
 * (s) and c servers; INFINITY when it cannot keep up (lambda*s >= c), 0 without load. */
double sg_pool_mmc_wait(double lambda, double service_s, int c);
/* The number of validate slots (of n) that minimises the arrival-weighted expected wait;
 * need[r]: role r has work now (then it gets at least one slot). *cost: that wait. */
int sg_pool_best_split(int n, const double lambda[SG_POOL_NROLES],
                       const double service_s[SG_POOL_NROLES], const int need[SG_POOL_NROLES],
                       double *cost);
/* sg_pool_best_split, and in *cur_cost what sg_pool_split_cost(cur_v, n, ...) gives, from the
 * same pass over the slot counts (the split decision needs both). */
int sg_pool_best_split_from(int n, const double lambda[SG_POOL_NROLES],
                            const double service_s[SG_POOL_NROLES], const int need[SG_POOL_NROLES],
                            int cur_v, double *cost, double *cur_cost);
double sg_pool_split_cost(int validate, int n, const double lambda[SG_POOL_NROLES],
                          const double service_s[SG_POOL_NROLES]);

/* ---- the kvstore's budget beside the jobs (pure; pool/kv_budget.c, pool/job_memory.c) ----
 * The node agent embeds a kvstore (kvstore.h) in the device memory its jobs leave spare
 * and moves the kvstore's budget around the jobs. No I/O, no clock: the agent measures
 * (free device memory, the task's buffers), asks, applies each new budget with
 * sg_kv_server_set_maxmemory, and reports the change (/metrics, the job's events).
 *
 * Model: `shared` bytes are shared by the kvstore and the jobs — on a GPU its free memory
 * when the agent starts; on PoCL (the host backend stands in) --kv-memory, the memory the
 * kvstore may use, against which the jobs' needs are counted. The kvstore's region,
 * `capacity`, is at most `shared`; the rest is the reserve that jobs use without any
 * shrink. While jobs needing N bytes in all run on the device (jobs that run at once need
 * their memory at once, so their needs add up), the budget is
 *     min(capacity, shared - N), and never below `floor` (1 MiB: the store's least):
 * a job that needs more than is free shrinks the budget by exactly the deficit (the
 * kvstore evicts least-recently-used keys down to it), and when it ends the budget grows
 * back by what it gave. A deficit the kvstore cannot cover (past the floor) is reported as
 * `uncovered`: the job runs anyway and may fail to allocate. */
typedef enum { SG_POOL_KV_GPU, SG_POOL_KV_HOST } sg_pool_kv_mem;

typedef struct sg_pool_kv_opts {
    int is_auto;         /* --kv-memory auto */
    uint64_t size;       /* --kv-memory SIZE (bytes) */
    sg_pool_kv_mem mem;  /* GPU memory (cuda) or host memory (PoCL) */
    uint64_t free_bytes; /* GPU: its free memory now; host: MemAvailable */
    uint64_t reserve;    /* GPU, auto: kept for jobs; 0: 10% of free, at least 1 GiB */
} sg_pool_kv_opts;

typedef struct sg_pool_kv_budget {
    uint64_t shared, capacity, floor;
    uint64_t need;   /* sum of the running jobs' needs */
    uint64_t budget; /* the kvstore's maxmemory now */
    int jobs;        /* jobs running */
} sg_pool_kv_budget;

typedef struct sg_pool_kv_change {
    uint64_t from, to;    /* budget before and after */
    uint64_t need;        /* the job's need */
    uint64_t free_before; /* memory free for jobs before the job started */
    uint64_t deficit;     /* need beyond free_before: what the kvstore gives */
    uint64_t uncovered;   /* deficit the kvstore could not give (at its floor) */
} sg_pool_kv_change;

/* The kvstore's region and the shared memory from --kv-memory; errors name the option. */
int sg_pool_kv_budget_init(sg_pool_kv_budget *b, const sg_pool_kv_opts *o, sg_err *err);
/* The region the kvstore actually got (backends round down to whole chunks). */
void sg_pool_kv_budget_set_capacity(sg_pool_kv_budget *b, uint64_t capacity);
/* Memory free for jobs now: shared - budget - need (0 when over). */
uint64_t sg_pool_kv_budget_free(const sg_pool_kv_budget *b);
/* A job needing `need` bytes starts / ends. Fill *ch; return 1 when the budget moved. */
int sg_pool_kv_job_start(sg_pool_kv_budget *b, uint64_t need, sg_pool_kv_change *ch);
int sg_pool_kv_job_end(sg_pool_kv_budget *b, uint64_t need, sg_pool_kv_change *ch);

/* Device memory a job takes, from the task's buffers at its shapes (the largest shape
 * counts): validate — the reference's and the candidate's sets of the task's buffers at
 * once, each buffer with its guard bytes, plus each plan's //@scratch; profile — the
 * inputs once per input set, the outputs and scratch of both sides timed (baseline and
 * candidate) at the main shape, and the cache-flush buffer. Plans may be NULL (no
 * scratch). input_sets < 1 counts as 1. Errors name the buffer. */
int sg_pool_job_memory(const sg_val_task *t, sg_pool_role kind, const sg_val_plan *candidate,
                       const sg_val_plan *other, int input_sets, uint64_t flush_bytes,
                       uint64_t *out, sg_err *err);

/* `specgen pool`: the node agent (pool/cmd_pool.c; protocol: docs/agent.md). */
int sg_cmd_pool(int argc, char **argv);

#endif
