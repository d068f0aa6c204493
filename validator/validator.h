/* validator.h — tasks, launch plans, and sandboxed validation of candidate kernels.
 *
 * Contract:
 *  - sg_val_task_load reads TASK_DIR/task.json (format: docs/task-format.md). Errors name
 *    the file, the field and the bad value. The task owns every string it points to;
 *    sg_val_task_free releases it.
 *  - sg_val_plan_parse reads the `//@launch` and `//@scratch` lines of a kernel source
 *    and checks them against the task (names, expressions); sg_val_plan_free releases.
 *  - Size expressions are integer arithmetic over size names (+ - * / %, parentheses,
 *    ceil_div, min, max); overflow and division by zero are errors.
 *  - A pool (sg_val_pool) owns one worker process per device slot. The worker holds the
 *    device context and a compile cache and is reused across jobs; the parent kills it at
 *    a job's compile or run deadline and respawns it on the next job after a crash, hang
 *    or sticky device error. Candidate code never runs in the caller's process.
 *  - sg_val_pool_validate always fills an sg_val_result (the verdict says what happened,
 *    the message says it in one sentence for a person or a model); it returns -1 only when
 *    the job could not be attempted at all (bad task folder, no worker could start).
 *  - Nothing here reads a clock for policy; deadlines are durations given by the caller.
 *
 * The workers are device.h's process pool; validation is one job kind on it
 * (sg_val_kinds), and the profiler adds its own (profiler.h). Validator never calls the
 * profiler. */
#ifndef SG_VALIDATOR_H
#define SG_VALIDATOR_H

#include "common/buf.h"
#include "common/err.h"
#include "device/device.h"

#include <stddef.h>
#include <stdint.h>

/* f16, bf16 and the OCP FP8 formats are stored in 16 / 8 bits and converted on the host
 * (validator/elem.h); fp8 exists only for CUDA. */
typedef enum {
    SG_VAL_F32,
    SG_VAL_F64,
    SG_VAL_I32,
    SG_VAL_U32,
    SG_VAL_I64,
    SG_VAL_F16,
    SG_VAL_BF16,
    SG_VAL_FP8_E4M3,
    SG_VAL_FP8_E5M2,
    SG_VAL_U8, /* uchar / uint8_t (and bool) */
    SG_VAL_I8  /* char / int8_t */
} sg_val_type;
#define SG_VAL_TYPE_NAMES "f32 f64 i32 u32 i64 f16 bf16 fp8_e4m3 fp8_e5m2 u8 i8"
size_t sg_val_type_size(sg_val_type t);
const char *sg_val_type_name(sg_val_type t);
int sg_val_type_parse(const char *s, sg_val_type *out);
int sg_val_type_is_float(sg_val_type t); /* 1 for f32, f64, f16, bf16 and the fp8 formats */

/* ---- sizes and expressions ---- */
#define SG_VAL_MAX_SIZES 32
typedef struct sg_val_sizes {
    int n;
    char name[SG_VAL_MAX_SIZES][32];
    int64_t value[SG_VAL_MAX_SIZES];
} sg_val_sizes;
int sg_val_sizes_get(const sg_val_sizes *s, const char *name, int64_t *out);
/* "B=3 N=1001" */
void sg_val_sizes_format(const sg_val_sizes *s, char *out, size_t n);
int sg_val_expr_eval(const char *expr, const sg_val_sizes *s, int64_t *out, sg_err *err);

/* ---- task ---- */
/* in: read only; out: written (starts poisoned); inout: initialised like an input before
 * every run (each check, each timed run) and compared like an output afterwards. */
typedef enum { SG_VAL_IN, SG_VAL_OUT, SG_VAL_INOUT } sg_val_role;
typedef enum {
    SG_VAL_INIT_UNIFORM,
    SG_VAL_INIT_NORMAL,
    SG_VAL_INIT_RANDINT,
    SG_VAL_INIT_CONST,
    SG_VAL_INIT_OUTLIERS, /* uniform(a,b) with a fraction `frac` of values times `scale` */
    SG_VAL_INIT_SPECIAL,  /* normal(0,1) mixed with ±0, subnormals, values near the max */
    SG_VAL_INIT_MODEL     /* "model": drawn by a torch task's problem file (its get_inputs,
                           * its module's initialisation) under the check's seed */
} sg_val_init_kind;

typedef struct sg_val_dist {
    sg_val_init_kind kind;
    double a, b;        /* uniform(a,b), normal(a,b), randint(a,b), const(a), outliers(a,b,..) */
    double frac, scale; /* outliers */
    char text[64];      /* as written (or the default's text), for messages */
    /* randint(lo,hi) with size expressions (randint(0,V-1): an index buffer's values follow
     * the size they index): evaluated at each shape; "" when lo and hi are numbers */
    char lo[64], hi[64];
} sg_val_dist;

#define SG_VAL_MAX_DISTS 8 /* input distributions of one buffer */
typedef struct sg_val_buffer {
    char *name, *count; /* count: a size expression */
    sg_val_type type;
    sg_val_role role;
    int ndist; /* each check shape runs once per distribution (docs/task-format.md) */
    sg_val_dist dist[SG_VAL_MAX_DISTS];
    double atol, rtol;   /* outputs: |got - ref| <= atol + rtol*|ref| */
    int allow_nonfinite; /* outputs may hold NaN / inf (then at the reference's places) */
} sg_val_buffer;

typedef struct sg_val_scalar {
    char *name, *expr; /* expr: integer size expression, or NULL when literal is used */
    sg_val_type type;
    double literal;
} sg_val_scalar;

/* The arithmetic a task's work is meant for ("compute"), which picks the roofline's peak
 * (profiler/peaks.h). AUTO: not given; the profiler infers it from the input types. */
typedef enum {
    SG_VAL_COMPUTE_AUTO,
    SG_VAL_COMPUTE_FP32,
    SG_VAL_COMPUTE_FP64,
    SG_VAL_COMPUTE_TENSOR_TF32,
    SG_VAL_COMPUTE_TENSOR_F16,
    SG_VAL_COMPUTE_TENSOR_BF16,
    SG_VAL_COMPUTE_TENSOR_FP8,
    SG_VAL_COMPUTE_TENSOR_INT8
} sg_val_compute;
#define SG_VAL_COMPUTE_NAMES "fp32 fp64 tensor_tf32 tensor_f16 tensor_bf16 tensor_fp8 tensor_int8"
const char *sg_val_compute_name(sg_val_compute c); /* "auto" for AUTO */

/* How a torch task's forward runs: not at all (a kernel), the reference engine, torch eager,
 * torch.compile. */
typedef enum {
    SG_VAL_TORCH_NONE,
    SG_VAL_TORCH_REF,
    SG_VAL_TORCH_EAGER,
    SG_VAL_TORCH_COMPILE
} sg_val_torch_mode;

typedef struct sg_val_task {
    char *dir, *name, *description;
    char *source[SG_DEV_NLANG];    /* baseline path per language (NULL if absent) */
    char *reference[SG_DEV_NLANG]; /* reference path per language */
    sg_val_sizes sizes;            /* the main shape */
    int has_cpu_sizes;
    sg_val_sizes cpu_sizes; /* the main shape on CPU devices ("cpu_sizes"; else = sizes) */
    int ncheck;
    sg_val_sizes *check; /* extra shapes checked before the main one */
    int nbuf, nscalar, narg;
    sg_val_buffer *buf;
    sg_val_scalar *scalar;
    char **args; /* default kernel arguments: buffer and scalar names */
    double target_speedup;
    /* One run's bytes moved and flops ("bytes", "flops"): a size expression, or NULL with
     * the number in *_value (-1: not given). bytes_auto: "bytes": "auto", the sum of the
     * buffers' reads (in, inout) and writes (out, inout). */
    char *bytes, *flops;
    double bytes_value, flops_value;
    int bytes_auto;
    sg_val_compute compute; /* "compute"; AUTO when absent */
    /* "guesses": what `task init` guessed and the kernel's body does not prove (shown when
     * the baseline fails its own reference) */
    int nguess;
    char **guesses;
    /* A PyTorch reference ("reference": {"torch": "model.py"}, docs/kernelbench.md): the
     * problem file's path, else NULL; the baseline torch runs ("baseline": {"torch":
     * "eager"|"compile"}); "precision"; "constants" as compact JSON text (or NULL) for the
     * prompt; "origin": the problem's format ("kernelbench"), file and content hash (NULL
     * each when absent). */
    char *torch_ref;
    sg_val_torch_mode torch_baseline;
    char *precision, *constants;
    char *origin_format, *origin_file, *origin_sha256;
} sg_val_task;

int sg_val_task_load(const char *dir, sg_val_task *t, sg_err *err);
/* A torch task's stand-in for a baseline kernel in prompts: a comment block with its
 * PyTorch source, buffers, sizes and constants (appended to out). */
int sg_val_torch_prompt(const sg_val_task *t, sg_buf *out, sg_err *err);
/* The main shape on a device: cpu_sizes on a CPU device when the task gives them. */
const sg_val_sizes *sg_val_main_sizes(const sg_val_task *t, int cpu_device);
/* How many input-distribution runs each shape gets: the most any buffer lists. */
int sg_val_task_ndist(const sg_val_task *t);
/* One run's bytes and flops at shape s; -1 each when the task does not say. */
int sg_val_task_roofline(const sg_val_task *t, const sg_val_sizes *s, double *bytes, double *flops,
                         sg_err *err);
void sg_val_task_free(sg_val_task *t);
/* Loads the task of a command line (validate, profile) before any candidate is judged:
 * a task's own fault is "invalid task: ...", the caller's bad input (exit 2), never a
 * candidate's verdict. */
int sg_val_task_load_cli(const char *dir, sg_val_task *t, sg_err *err);

/* ---- launch plans ---- */
typedef struct sg_val_launch {
    char *kernel;
    char *grid[3], *block[3]; /* expressions; unused dims are NULL (meaning 1) */
    char *smem;               /* dynamic shared / local bytes, or NULL */
    int narg;
    char **args; /* NULL/0: the task's args */
    int line;
} sg_val_launch;

typedef struct sg_val_scratch {
    char *name, *count;
    sg_val_type type;
} sg_val_scratch;

#define SG_VAL_MAX_LAUNCHES 64 /* //@launch lines in one source */
typedef struct sg_val_plan {
    int nlaunch, nscratch;
    sg_val_launch *launch;
    sg_val_scratch *scratch;
} sg_val_plan;

/* `where` names the source in errors. A source without launch lines yields an empty plan
 * (nlaunch 0); the checks then give the candidate the baseline's plan lines. */
int sg_val_plan_parse(const char *src, const sg_val_task *t, const char *where, sg_val_plan *p,
                      sg_err *err);
void sg_val_plan_free(sg_val_plan *p);

/* ---- source checks and hashing ---- */
#define SG_VAL_MAX_SOURCE (256 * 1024)
/* Reject oversize sources and includes outside the allow-list (task folder files, the
 * toolkit's own headers for CUDA); the message names the offending line. */
int sg_val_check_source(const char *src, size_t len, sg_dev_lang lang, const char *task_dir,
                        sg_err *err);
/* A kernel source is text: no NUL byte, valid UTF-8 (it goes into prompts and JSON); the
 * message names the line and the offset of the first bad byte. */
int sg_val_check_text(const char *src, size_t len, sg_err *err);
/* Read a kernel file named on a command line (task init, validate, profile): a FIFO, a
 * socket or a folder is refused before it is opened (a FIFO without a writer would
 * block); a device is read up to the limit. The message names the path. */
int sg_val_read_source(const char *path, sg_buf *out, sg_err *err);
/* The hash of a source: common/srcnorm.h's sg_srcnorm_key. */

/* ---- KernelBench export (docs/kernelbench.md "Export") ---- */
/* A Python file for KernelBench's harness, appended to out: the task's problem file (its
 * torch reference, unchanged), then ModelNew(Model), whose forward runs the CUDA source's
 * launch plan at the task's main sizes (the problem's own) through a launcher that torch's
 * load_inline compiles with the source on first use. note: lines for its docstring (may
 * be NULL). Refused, with a message: a task without a torch reference, a source without
 * //@launch lines or that includes a file of the task folder, inout buffers, more than one
 * output, a buffer type KernelBench has no dtype for. */
int sg_val_kb_export(const char *task_dir, const char *source, const char *note, sg_buf *out,
                     sg_err *err);
/* The same for a loaded task and the problem file's text (model_src). */
int sg_val_kb_export_task(const sg_val_task *t, const char *model_src, const char *source,
                          const char *note, sg_buf *out, sg_err *err);

/* ---- results ---- */
typedef enum {
    SG_VAL_PASS,          /* every check matched */
    SG_VAL_COMPILED,      /* --compile-only: compiled (and nothing ran) */
    SG_VAL_REJECTED,      /* empty, too large, forbidden include, bad launch plan */
    SG_VAL_COMPILE_ERROR, /* compiler said no (log in detail) */
    SG_VAL_COMPILE_TIMEOUT,
    SG_VAL_LAUNCH_ERROR, /* the device refused the launch (resources, missing kernel) */
    SG_VAL_TIMEOUT,      /* ran past the run deadline; the worker was killed */
    SG_VAL_CRASH,        /* the worker died (segfault, sticky device error) */
    SG_VAL_MISMATCH,     /* wrong values, NaN/Inf, or unwritten outputs */
    SG_VAL_OUT_OF_BOUNDS,
    SG_VAL_INPUT_MODIFIED,
    SG_VAL_NO_DEVICE, /* the backend cannot run here (e.g. CUDA without a GPU) */
    SG_VAL_NVERDICT
} sg_val_verdict;
const char *sg_val_verdict_name(sg_val_verdict v); /* "pass", "mismatch", ... */
/* After a no_device verdict for CUDA: print (stdout) what can be done here instead for this
 * task (compile only; its OpenCL kernels when it has them). from_validate: the options are
 * validate's own, else the line names the validate command. */
void sg_val_say_alternatives(const char *task_dir, int from_validate);
int sg_val_verdict_parse(const char *s, sg_val_verdict *out); /* 0, or -1: not a verdict */

typedef struct sg_val_result {
    sg_val_verdict verdict;
    char message[1024];
    char detail[4096];          /* compile log excerpt etc.; a mismatch: the precision hint */
    char shape[128];            /* sizes of the failing (or last) check */
    char output[32];            /* failing output buffer */
    int64_t first_bad;          /* first mismatching index, -1 if none */
    char got[48], expected[48]; /* a mismatch: the values at first_bad, in the output's type */
    double max_abs, max_rel;
    int checks_run;
    int cache_hit; /* the candidate's compiled program came from the cache */
    double compile_ms, run_ms;
    uint64_t seed;
    char hash[33];
    /* A torch task's candidate that passed: KernelBench's own check beside ours (5 trials of
     * the problem's own inputs at the main shape, atol = rtol = 1e-4 for fp32, 1e-2 for
     * fp16/bf16): trials run and passed (0, 0 when not run). */
    int kb_trials, kb_pass;
} sg_val_result;

/* ---- pool of sandboxed workers ---- */
/* Options: device.h's sg_dev_opts. Its kinds, when NULL, are validation alone
 * (sg_val_kinds); a pool that also profiles is given profiler.h's sg_prof_kinds. */

/* The validation job kind ("validate"), and the table of it alone (the default). */
extern const sg_dev_kind sg_val_kind;
/* The validation kind's before_sandbox (device.h), which the profiler's kind shares: a
 * torch task's reference engine (docs/kernelbench.md) is started into d->aux. */
void sg_val_before_sandbox(sg_dev *d, const sg_dev_opts *o, const json_t *req);
extern const sg_dev_kind *const sg_val_kinds[1];

typedef struct sg_val_pool sg_val_pool;
int sg_val_pool_new(const sg_dev_opts *o, sg_val_pool **out, sg_err *err);
void sg_val_pool_free(sg_val_pool *p);

typedef struct sg_val_job {
    const char *task_dir;
    const char *candidate; /* source text; NULL: the task's baseline */
    size_t candidate_len;
    const char *candidate_name;                 /* shown in messages */
    uint64_t seed;                              /* 0: derived from the job counter */
    int64_t compile_timeout_ms, run_timeout_ms; /* 0: the pool's */
} sg_val_job;

/* Run one job on slot `slot` (0..slots-1), synchronously. */
int sg_val_pool_validate(sg_val_pool *p, int slot, const sg_val_job *job, sg_val_result *r,
                         sg_err *err);
/* The same from an event loop, without blocking. Times are the caller's clock in ms (for
 * example sg_loop_now()/1000000); this path never reads a clock.
 *  - submit: start a job on an idle slot. 0: running; 1: answered at once (r filled, e.g.
 *    a source over the size limit); -1: the slot is busy or no worker could start.
 *  - fd: watch it for readability while the slot is busy (-1 when idle).
 *  - deadline: when the running phase times out (INT64_MAX when idle).
 *  - step: call when fd is readable or the deadline passed; 1: still running, 0: done
 *    (r filled, the slot is idle again; a killed or dead worker restarts on next submit). */
int sg_val_pool_submit(sg_val_pool *p, int slot, const sg_val_job *job, int64_t now_ms,
                       sg_val_result *r, sg_err *err);
int sg_val_pool_fd(const sg_val_pool *p, int slot);
int64_t sg_val_pool_deadline(const sg_val_pool *p, int slot);
int sg_val_pool_step(sg_val_pool *p, int slot, int64_t now_ms, sg_val_result *r);
/* Cancel the slot's job at once (its worker is killed and restarted on the next job); no
 * step follows. */
void sg_val_pool_kill(sg_val_pool *p, int slot);
/* Another job kind on the same slot, from an event loop (the profiler's, handed in with
 * the pool's kinds): submit req (the pool sets its "id"; job gives the deadlines, or NULL),
 * then step as above: 1 running; 0 done with *reply (the caller's to json_decref), or
 * *reply NULL when the worker was killed at a deadline or died (r says how). */
int sg_val_pool_submit_request(sg_val_pool *p, int slot, json_t *req, const sg_val_job *job,
                               int64_t now_ms, sg_err *err);
int sg_val_pool_step_reply(sg_val_pool *p, int slot, int64_t now_ms, json_t **reply,
                           sg_val_result *r);
/* Round trip of an empty job (for benchmarks): 0 or -1. */
int sg_val_pool_ping(sg_val_pool *p, int slot, sg_err *err);
/* How many times the slot's worker was (re)started. */
int sg_val_pool_spawns(const sg_val_pool *p, int slot);

/* ---- another job kind built on validation (the profiler's: profiler/prof_worker.c) ----
 * Contract: what a job kind running inside a validation worker needs to prepare, fill, run
 * and check a candidate exactly as validation does, and what its parent side needs to call
 * the pool; nothing here reads a clock or keeps state between calls.
 *  - sg_val_prepare_job reads, checks and compiles the job's candidate (the task's baseline
 *    when job->candidate is NULL) into cand and the task's reference into ref. 0, or -1 /
 *    SG_BE_STICKY (device.h) with r saying why; release both with sg_val_source_free.
 *  - sg_val_fill draws an input buffer's values from a seeded generator (splitmix64): the
 *    same seed, buffer, distribution and shape give the same bytes.
 *  - sg_val_launch_dims evaluates one launch line at shape s against the device limits
 *    (errors name the source line, the shape and the limit); sg_val_scalar_arg a scalar.
 *  - sg_val_compare checks an output against the reference within the buffer's tolerance.
 *  - sg_val_pool_call sends req to the slot's worker and waits under the pool's deadlines
 *    (each "phase" message restarts the run deadline): 0 with *reply, 1 when the worker
 *    was killed or died (r says how), -1 (err). */

/* A source ready to run: its text, launch plan and compiled program. */
typedef struct sg_val_source {
    const char *where; /* file name for messages */
    char *src;
    sg_val_plan plan;
    sg_be_prog *prog;
    int baseline_plan;       /* a candidate without //@launch lines: it runs the baseline's plan */
    sg_val_torch_mode torch; /* not NONE: no kernel; the reference engine computes it */
} sg_val_source;
int sg_val_prepare_job(sg_dev *d, const sg_val_task *t, const sg_val_job *job, sg_val_source *cand,
                       sg_val_source *ref, sg_val_result *r);
void sg_val_source_free(sg_val_source *p);
void sg_val_job_from_json(const json_t *req, sg_val_job *job); /* a request's job fields */
int sg_val_pool_call(sg_val_pool *p, int slot, const sg_val_job *job, json_t *req, json_t **reply,
                     sg_val_result *r, sg_err *err);
void sg_val_result_set(sg_val_result *r, sg_val_verdict v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A torch task's reference engine (docs/kernelbench.md), for a job kind in the worker:
 *  - sg_val_torch_run_set: one forward at shape s under seed, in `mode` (the reference, or
 *    the torch baseline). data[b] holds bytes[b] per task buffer: inputs are sent, except
 *    (mode REF) those whose distribution number `dist` is "model", which the problem draws
 *    and the engine writes back into data[b]; the outputs are written into data[b].
 *  - sg_val_torch_time: the forward timed `reps` times after `warmup` runs, each after a
 *    cache flush of flush_bytes, into samples (ns).
 * 0; -1 with err (the problem's own error, or no engine); SG_BE_STICKY: the engine
 * stopped and the worker should be replaced. */
int sg_val_torch_run_set(sg_dev *d, const sg_val_task *t, const sg_val_sizes *s, int dist,
                         uint64_t seed, sg_val_torch_mode mode, unsigned char **data,
                         const size_t *bytes, sg_err *err);
int sg_val_torch_time(sg_dev *d, const sg_val_task *t, const sg_val_sizes *s,
                      sg_val_torch_mode mode, uint64_t seed, int warmup, int reps,
                      size_t flush_bytes, double *samples, int *nsamples, sg_err *err);

/* Seeded random inputs (splitmix64: fast, reproducible from the seed). */
typedef struct sg_val_rng {
    uint64_t s;
} sg_val_rng;
uint64_t sg_val_rng_next(sg_val_rng *r);
/* Fill count elements of b's type with its distribution number `dist` (taken modulo the
 * buffer's count of them) at shape s (randint's size expressions are evaluated there; the
 * task loader checked that they evaluate). */
void sg_val_fill(sg_val_rng *r, const sg_val_buffer *b, int dist, const sg_val_sizes *s, void *dst,
                 size_t count);

/* One launch-plan line evaluated at one shape. */
typedef struct sg_val_dims {
    uint64_t grid[3], block[3], smem;
} sg_val_dims;
int sg_val_launch_dims(const sg_val_launch *l, const sg_val_sizes *s, const sg_be_limits *lim,
                       const char *where, sg_val_dims *out, sg_err *err);
/* A task scalar's bytes at shape s. */
int sg_val_scalar_arg(const sg_val_scalar *sc, const sg_val_sizes *s, sg_be_arg *a, sg_err *err);

/* Comparing one output buffer against the reference. */
typedef struct sg_val_cmp {
    double max_abs, max_rel;
    int64_t first_bad; /* -1 when all match */
    size_t nbad;
    double got, ref; /* values at first_bad */
} sg_val_cmp;
/* 0 when every element matches within the buffer's tolerance, -1 otherwise. */
int sg_val_compare(const sg_val_buffer *b, const void *got, const void *ref, size_t n,
                   sg_val_cmp *c);
/* The first NaN or inf among n elements of type t, or -1 (always -1 for integers). */
int64_t sg_val_first_nonfinite(sg_val_type t, const void *p, size_t n);
void sg_val_format_value(sg_val_type t, double v, char *out, size_t n);

/* ---- task folders from a bare kernel file ----
 * Reads a kernel in KERNEL.cu / KERNEL.cl (the first, or opts->kernel) and its body:
 * const pointers are inputs, pointers the body writes are outputs (inout when it also
 * reads them), integer parameters that index buffers are sizes, other integers and
 * floats scalars; each buffer's count comes from the sizes its indices reach, the launch
 * from the body's shape (one thread per element, a warp or a block per row,
 * extern __shared__). Writes out_dir/{task.json, baseline.EXT, reference.EXT} (the kernel
 * is both; a //@launch line is added when it has none) and appends to `report` one line
 * per guess. Refuses to overwrite a task unless opts->force; even then a file that is not a
 * regular one (a link, a device, a FIFO) is refused: SG_WFILE_REFUSED (common/wfile.h). */
#define SG_VAL_MAX_HINTS 16
typedef struct sg_val_init_opts {
    sg_val_sizes sizes; /* --size NAME=VALUE */
    int ncount;         /* --count BUF=EXPR */
    char count_buf[SG_VAL_MAX_HINTS][64];
    char count_expr[SG_VAL_MAX_HINTS][160];
    const char *kernel; /* --kernel NAME or NAME<targs> (NULL: the first kernel) */
    const char *launch; /* --launch "grid=... block=... [smem=...]" (NULL: inferred) */
    int force;          /* overwrite an existing task folder */
    /* A KernelBench-format PROBLEM.py (docs/kernelbench.md): --precision fp32|fp16|bf16 and
     * --baseline torch-eager|torch-compile (NULL: fp32, torch-eager). */
    const char *precision, *baseline;
} sg_val_init_opts;
/* task init for PROBLEM.py: torchref/kb_import.py in a scrubbed environment; its lines go
 * to report; a problem it cannot import fails with its message (the construct, what to do). */
int sg_val_task_init_torch(const char *problem, const char *out_dir, const sg_val_init_opts *opts,
                           sg_buf *report, sg_err *err);
/* The same in two halves, for a caller that must not wait (the campaign's loop): _start
 * spawns the importer into *p (its stdout, joined by nothing else, in p->out_fd; the caller
 * reads it to EOF and reaps p); _end turns what it printed (out, trimmed in place) and its
 * wait status into the result above (report, err, 0 / -1 / SG_WFILE_REFUSED). */
struct sg_proc;
int sg_val_task_init_torch_start(const char *problem, const char *out_dir,
                                 const sg_val_init_opts *opts, struct sg_proc *p, sg_err *err);
int sg_val_task_init_torch_end(sg_buf *out, int status, sg_buf *report, sg_err *err);
int sg_val_task_init(const char *kernel_path, const char *out_dir, const sg_val_init_opts *opts,
                     sg_buf *report, sg_err *err);
/* Parse one --count BUF=EXPR / --size NAME=VALUE into opts (for the commands). */
int sg_val_init_add_count(sg_val_init_opts *o, const char *text, sg_err *err);
int sg_val_init_add_size(sg_val_init_opts *o, const char *text, sg_err *err);
/* The hints as command-line options (common/cli.h's sg_opt), for `task init` and
 * `optimize KERNEL`: fills out[0..SG_VAL_INIT_NOPTS-1] and returns how many. */
#define SG_VAL_INIT_NOPTS 7
struct sg_opt;
int sg_val_init_cli_opts(sg_val_init_opts *io, struct sg_opt *out);
/* 1 when any hint but --force was given. */
int sg_val_init_hinted(const sg_val_init_opts *io);

/* Results to and from JSON (the worker's reply; a pool agent's answer): a new reference,
 * and r filled from j (fields absent or of another type read as empty / 0). */
json_t *sg_val_result_to_json(const sg_val_result *r);
void sg_val_result_from_json(const json_t *j, sg_val_result *r);
/* Results as JSON text (caller frees) and as a person-readable paragraph. */
char *sg_val_result_json(const sg_val_result *r);
void sg_val_result_print(const sg_val_result *r, void *file /* FILE* */);

/* `specgen validate` and `specgen task` (cmd_validate.c, cmd_task.c). */
int sg_cmd_validate(int argc, char **argv);
int sg_cmd_task(int argc, char **argv);

#endif
