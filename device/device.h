/* device.h — running code on a device: the backends, the compile cache, and the sandboxed
 * worker processes that hold a device context and run jobs for their parent.
 *
 * Contract
 *  - Languages: cuda (NVRTC + driver API + CUPTI, all loaded at run time, so specgen runs and
 *    explains itself without them) and opencl (any ICD; PoCL on the CPU). A backend
 *    (sg_be_ops) compiles sources into programs, owns device memory and launches kernels;
 *    one sg_be per worker process holds the device context. Every backend function returns
 *    0 or -1 with err filled; SG_BE_STICKY means the context is unusable and the worker must
 *    exit; open() returns SG_BE_NODEV when the backend cannot run on this machine.
 *  - A worker's device (sg_dev) is its backend plus a compile cache keyed by the normalized
 *    source hash (common/srcnorm.h), options, architecture, kernels and folder.
 *  - A process pool (sg_dev_pool) owns one worker process per slot, forked on first use and
 *    reused across jobs. What a job means is not known here: whoever creates the pool hands
 *    in a table of job kinds (a name and the function that runs it inside the worker); the
 *    request's "type" picks the kind, "ping" is answered by the worker itself. The pool
 *    kills a worker at the job's compile deadline, or at its run deadline (a "phase"
 *    message from the worker restarts the run deadline), and starts a fresh worker on the
 *    next job after it was killed, died, or announced that its context is lost. It
 *    reports what happened to the process (sg_dev_outcome: a reply, a deadline passed, the
 *    worker died with a wait status); the caller maps that to its own verdicts.
 *  - Workers are sandboxed before their first job (Landlock): they read only the system's
 *    toolkits, the job's "task_dir" and opts.read_dirs, and write only the compilers' cache
 *    folders; without Landlock they refuse jobs (SPECGEN_UNSANDBOXED=1 overrides).
 *  - Candidate code never runs in the caller's process. Times are the caller's clock in
 *    ms; nothing here reads a clock for policy (the synchronous call waits on the
 *    monotonic clock, for command-line use).
 *  - Wire format between parent and worker: a 4-byte big-endian length, then JSON. */
#ifndef SG_DEVICE_H
#define SG_DEVICE_H

#include "common/buf.h"
#include "common/err.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* ---- languages (one backend each) ---- */
typedef enum { SG_DEV_CUDA = 0, SG_DEV_OPENCL = 1, SG_DEV_NLANG = 2 } sg_dev_lang;
const char *sg_dev_lang_name(sg_dev_lang l); /* "cuda", "opencl" */
int sg_dev_lang_parse(const char *s, sg_dev_lang *out, sg_err *err);
/* From a file name: .cu/.cuh -> cuda, .cl -> opencl; -1 if unknown. */
int sg_dev_lang_of_path(const char *path, sg_dev_lang *out);

typedef struct sg_dev_kind sg_dev_kind;

/* ---- what a pool of workers runs on ---- */
typedef struct sg_dev_opts {
    sg_dev_lang device;
    int slots;                          /* worker processes (default 1) */
    const char *arch;                   /* CUDA: "sm_90"; NULL: the device's own */
    int compile_only;                   /* compile, never run (CUDA: no GPU needed) */
    int64_t compile_timeout_ms;         /* default 30000 */
    int64_t run_timeout_ms;             /* default 20000 */
    uint64_t mem_limit;                 /* RLIMIT_AS of a worker in bytes; 0: default */
    int opencl_platform, opencl_device; /* indices (default 0, 0) */
    int cuda_device;                    /* index (default 0) */
    /* The job kinds the workers serve, handed in by whoever starts them (validator.h's
     * pool: NULL means validation alone; profiler.h names validation + profiling). */
    const sg_dev_kind *const *kinds;
    int nkinds;
    /* Folders the workers may read besides the first job's "task_dir" (NULL-terminated;
     * NULL: none). Workers are sandboxed (device/sandbox.h): a job naming any other task
     * folder is refused. */
    const char *const *read_dirs;
    /* CUDA: the folder of NVRTC's automatic precompiled headers (--pch --pch-dir), shared
     * by every worker and task; NULL: specgen-nvrtc-pch in CUDA's cache folder
     * ($CUDA_CACHE_PATH, else ~/.nv), which the sandbox lets workers write; "off": none. */
    const char *nvrtc_pch;
} sg_dev_opts;
void sg_dev_opts_default(sg_dev_opts *o);
/* The PCH folder o names (see nvrtc_pch), made if missing; "" when off. */
void sg_dev_pch_dir(const sg_dev_opts *o, char *out, size_t n);

/* ---- the backend interface ---- */
enum { SG_BE_STICKY = -2, SG_BE_NODEV = -3 };

typedef struct sg_be sg_be;
typedef struct sg_be_prog sg_be_prog;
typedef struct sg_be_mem sg_be_mem;

typedef struct sg_be_arg {
    sg_be_mem *mem; /* a buffer argument (payload starts at `offset`), or NULL */
    size_t offset, bytes;
    unsigned char scalar[8]; /* a scalar argument's bytes (size `bytes`) when mem == NULL */
} sg_be_arg;

typedef struct sg_be_limits {
    uint64_t max_block;   /* threads per block / work-group */
    uint64_t max_grid[3]; /* blocks per dimension */
    uint64_t max_smem;    /* shared / local memory bytes per block */
    size_t align;         /* sub-buffer offset alignment in bytes */
    char arch[16];        /* CUDA: "sm_90" (what NVRTC compiles for); OpenCL: "" */
    int cpu;              /* a CPU device (PoCL): tasks time their "cpu_sizes" there */
} sg_be_limits;

/* ---- for the profiler: static facts of one kernel (0 where the backend cannot tell) ---- */
typedef struct sg_be_facts {
    uint64_t wg_limit;      /* most threads per block / work-group this kernel allows */
    uint64_t private_bytes; /* OpenCL: private memory per work-item */
    uint64_t local_bytes;   /* CUDA: local memory per thread (spills, local arrays) */
    uint64_t shared_bytes;  /* shared / __local memory per block, static + dynamic */
    int registers;          /* CUDA: registers per thread */
    double occupancy;       /* theoretical, 0..1 */
    const char *limiter;    /* a string literal: what limits the occupancy */
} sg_be_facts;

/* ---- for the profiler's roofline: the device as measured or reported ---- */
typedef struct sg_be_peaks {
    double gbs;             /* memory bandwidth, GB/s (CUDA: from attributes; OpenCL: measured) */
    double fp32_gflops;     /* FP32 arithmetic, GFLOP/s (units x clock x lanes x 2) */
    char device[128];       /* the device's name as the driver reports it */
    int cc_major, cc_minor; /* CUDA compute capability; 0 elsewhere */
    int cpu;                /* a CPU device (no tensor cores) */
} sg_be_peaks;

typedef struct sg_be_ops {
    const char *name;
    /* compile_only: no device needed (CUDA: NVRTC for arch). */
    int (*open)(sg_be **be, const sg_dev_opts *o, sg_err *err);
    void (*close)(sg_be *be);
    void (*limits)(sg_be *be, sg_be_limits *l);
    /* Returns 0, or -1 with a one-line reason in err and the compiler log in log. */
    int (*compile)(sg_be *be, const char *src, const char *include_dir, const char *const *kernels,
                   int nkernels, sg_be_prog **prog, sg_buf *log, sg_err *err);
    void (*free_prog)(sg_be *be, sg_be_prog *prog);
    int (*alloc)(sg_be *be, size_t bytes, sg_be_mem **mem, sg_err *err);
    void (*free_mem)(sg_be *be, sg_be_mem *mem);
    int (*write)(sg_be *be, sg_be_mem *mem, size_t off, const void *src, size_t n, sg_err *err);
    int (*read)(sg_be *be, sg_be_mem *mem, size_t off, void *dst, size_t n, sg_err *err);
    int (*launch)(sg_be *be, sg_be_prog *prog, int kernel, const sg_be_arg *args, int nargs,
                  const uint64_t grid[3], const uint64_t block[3], uint64_t smem, sg_err *err);
    int (*finish)(sg_be *be, sg_err *err);
    /* ---- for the profiler (NULL where a backend lacks them) ---- */
    /* A timed region: launches between begin and end are recorded; end waits for them and
     * gives device time in ns from the first kernel's start to the last kernel's end. */
    int (*time_begin)(sg_be *be, sg_err *err);
    int (*time_end)(sg_be *be, double *ns, sg_err *err);
    /* Write n bytes on the device (the cache flush between timed runs). */
    int (*fill)(sg_be *be, sg_be_mem *mem, size_t n, sg_err *err);
    uint64_t (*llc_bytes)(sg_be *be); /* last-level cache size; 0: unknown */
    int (*facts)(sg_be *be, sg_be_prog *prog, int kernel, const uint64_t block[3], uint64_t smem,
                 sg_be_facts *f, sg_err *err);
    /* Hardware metrics of the launches between begin and end, as one line; begin returns
     * -1 with "metrics unavailable: why" in err when the device cannot collect them. */
    int (*metrics_begin)(sg_be *be, sg_err *err);
    int (*metrics_end)(sg_be *be, char *out, size_t n, sg_err *err);
    /* What the roofline needs to know of the device (sg_be_peaks). */
    int (*peaks)(sg_be *be, sg_be_peaks *p, sg_err *err);
    /* How many devices there are (this initialises the runtime in the calling process:
     * use sg_dev_count, which asks in a child, from a process that forks workers). */
    int (*count)(const sg_dev_opts *o, int *n, sg_err *err);
    /* Optional: several runs in one timed region with one wait at the end (on PoCL each
     * wait is a hand-over to the device's threads, milliseconds on a loaded machine).
     * time_cut closes the current run (at most 16 per region); time_end_runs waits once
     * and gives each run's span (n must equal the cuts made). */
    int (*time_cut)(sg_be *be, sg_err *err);
    int (*time_end_runs)(sg_be *be, double *ns, int n, sg_err *err);
} sg_be_ops;

extern const sg_be_ops sg_be_opencl_ops;
extern const sg_be_ops sg_be_cuda_ops;
const sg_be_ops *sg_be_ops_for(sg_dev_lang lang);

/* ---- NVRTC's extra headers (nvrtc_std.c) ----
 * The prelude every CUDA compile pre-includes (INFINITY, FLT_MAX, M_PI, INT_MAX, uint8_t:
 * what nvcc's implicit host headers give), and headers served in memory: the C / C++
 * standard headers kernels name and the device-side parts of <cub/cub.cuh>. */
extern const char sg_nvrtc_prelude_name[];
int sg_nvrtc_headers(const char ***names, const char ***texts); /* returns how many */
int sg_nvrtc_serves(const char *name); /* 1: an #include <name> specgen serves itself */
/* 1: src needs the prelude pre-included (it includes a header served above, names std::,
 * or uses a name the prelude defines: INFINITY, FLT_MAX, M_PI, INT_MAX, uint8_t, ...). */
int sg_nvrtc_needs_prelude(const char *src);

/* ---- compile cache: normalized-source hash -> compiled program (LRU) ---- */
typedef struct sg_dev_cache sg_dev_cache;
sg_dev_cache *sg_dev_cache_new(const sg_be_ops *ops, sg_be *be, int capacity);
void sg_dev_cache_free(sg_dev_cache *c);
/* Compile (or find) src with kernels; *hit tells which. The program stays owned by the
 * cache. On failure the compiler's log is in log. */
int sg_dev_cache_get(sg_dev_cache *c, const char *src, const char *dir, const char *const *kernels,
                     int nk, const char *opts, sg_be_prog **prog, int *hit, char hash[33],
                     sg_buf *log, sg_err *err);

/* Hide the text of compiler diagnostics located in files other than the candidate (their
 * message and snippet lines would quote an included file) in log from offset `from` on.
 * The compile cache applies it to every compile log. */
void sg_dev_log_scrub(sg_buf *log, size_t from);

/* ---- the device side of one worker ---- */
typedef struct sg_dev {
    const sg_be_ops *ops;
    sg_be *be;
    sg_dev_cache *cache;
    sg_dev_opts opts;
    sg_dev_lang lang;
    char arch[16];
    /* Opening the device: 0 open; -1 or SG_BE_NODEV: failed, open_err says why. The worker
     * opens it before the first job that is not a ping; a job kind checks open_rc. */
    int open_rc;
    sg_err open_err;
    /* Called between compile and run (and between batches of runs), so the parent can
     * switch to the run deadline; "starting" (a kind's helper process is still starting)
     * and "compile" (a torch.compile forward, which compiles at its first call) restart the
     * compile deadline instead. */
    void (*phase)(void *arg, const char *phase);
    void *phase_arg;
    /* State a job kind keeps for the worker's life (the validator's reference engine for a
     * torch task), made by its kind's before_sandbox; aux_free releases it when the worker
     * ends. */
    void *aux;
    void (*aux_free)(void *aux);
} sg_dev;

/* How many devices of o->device there are (OpenCL: on o->opencl_platform), asked in a
 * short-lived child so that this process never initialises a runtime it will fork. -1
 * (or SG_BE_NODEV: none can run here) with err saying why. */
int sg_dev_count(const sg_dev_opts *o, sg_err *err);

/* Open the backend (0, -1, or SG_BE_NODEV with the explanation in err). */
int sg_dev_open(sg_dev *d, const sg_dev_opts *o, sg_err *err);
void sg_dev_close(sg_dev *d);

/* The environment a worker keeps (no LLM key or token), as an envp to start a program
 * with: a worker, or a helper that runs user code (free() the array alone). */
char **sg_dev_sandbox_env_list(void);

/* ---- job kinds: what the workers of a pool can run ---- */
struct sg_dev_kind {
    const char *name; /* the request's "type" */
    /* Runs inside the worker: fills *reply (an object the worker sends back, adding "type"
     * and "id") and returns 0, or SG_BE_STICKY when the context is lost (the worker
     * answers, then exits). */
    int (*run)(sg_dev *d, const json_t *req, json_t **reply);
    /* Optional: called once, at the worker's first job of this kind, before the sandbox is
     * applied (the device is not open yet), so that the kind may start a helper process
     * that the sandbox would not let it start (validator: a torch task's reference engine,
     * which runs only the task's own trusted problem file, never a candidate). */
    void (*before_sandbox)(sg_dev *d, const sg_dev_opts *o, const json_t *req);
};

/* ---- the process pool ---- */
typedef enum {
    SG_DEV_REPLY,            /* the worker answered: reply */
    SG_DEV_COMPILE_DEADLINE, /* still compiling at the compile deadline: killed */
    SG_DEV_RUN_DEADLINE,     /* still running at the run deadline: killed */
    SG_DEV_DIED,             /* the worker died (crashed, was killed, or the socket failed) */
} sg_dev_outcome_kind;

typedef struct sg_dev_outcome {
    sg_dev_outcome_kind kind;
    json_t *reply;    /* SG_DEV_REPLY: the worker's reply, the caller's to json_decref */
    int64_t limit_ms; /* the deadline's duration (the *_DEADLINE kinds) */
    int compiling;    /* SG_DEV_DIED: it died before its "phase" message (compiling) */
    int status;       /* SG_DEV_DIED: the wait status */
    char how[128];    /* SG_DEV_DIED: the status in words ("killed by signal 11 (SIGSEGV)") */
} sg_dev_outcome;

/* Workers exec'd afresh. A program that answers `EXE __dev-worker OPTS` by returning
 * sg_dev_worker_exec_main(OPTS, its kinds) sets its own path here once, before any pool
 * starts (orchestrator/main.c: /proc/self/exe); its pools then start every worker as a new
 * program, which maps none of the parent's memory (API keys, an Authorization header, other
 * tasks' text). Unset (a library user, a unit test): workers are forked. */
void sg_dev_worker_exec_set(const char *exe);
int sg_dev_worker_exec_main(const char *opts_json, const sg_dev_kind *const *kinds, int nkinds);

typedef struct sg_dev_pool sg_dev_pool;
/* The kinds table in o must outlive the pool. */
int sg_dev_pool_new(const sg_dev_opts *o, sg_dev_pool **out, sg_err *err);
void sg_dev_pool_free(sg_dev_pool *p);
/* Start req (an object: "type" and the kind's fields; the pool sets "id") on an idle slot,
 * starting its worker if needed. compile_ms / run_ms: this job's deadlines (0: the
 * pool's). 0: running; -1: no such slot, the slot is busy, or no worker could start. */
int sg_dev_pool_submit(sg_dev_pool *p, int slot, json_t *req, int64_t compile_ms, int64_t run_ms,
                       int64_t now_ms, sg_err *err);
/* While a slot is busy: the socket to watch for readability, and when the current phase
 * times out (-1 and INT64_MAX when idle). */
int sg_dev_pool_fd(const sg_dev_pool *p, int slot);
int64_t sg_dev_pool_deadline(const sg_dev_pool *p, int slot);
/* Call when fd is readable or the deadline passed. 1: still running; 0: done, out filled,
 * the slot idle again (a killed or dead worker is started again on the next submit). */
int sg_dev_pool_step(sg_dev_pool *p, int slot, int64_t now_ms, sg_dev_outcome *out);
/* Submit and wait for the outcome (on the monotonic clock). 0, or -1 when submit failed. */
int sg_dev_pool_call(sg_dev_pool *p, int slot, json_t *req, int64_t compile_ms, int64_t run_ms,
                     sg_dev_outcome *out, sg_err *err);
/* How many times the slot's worker was (re)started. */
int sg_dev_pool_spawns(const sg_dev_pool *p, int slot);
/* Cancel the slot's job: its worker is killed now (and started again on the next job);
 * no outcome follows. Nothing happens when the slot is idle. */
void sg_dev_pool_kill(sg_dev_pool *p, int slot);

/* ---- wire format: 4-byte big-endian length, then a JSON object ---- */
#define SG_DEV_MAX_MSG (64u << 20)
int sg_dev_msg_send(int fd, const json_t *msg, sg_err *err);
/* timeout_ms < 0: wait forever. Returns 0, 1 on timeout, -1 on error/EOF (err says). */
int sg_dev_msg_recv(int fd, int timeout_ms, json_t **msg, sg_err *err);

#endif
