/* `specgen validate TASK_DIR [CANDIDATE]`: compile a kernel and check it against the
 * task's reference in a sandboxed worker. */
#include "common/buf.h"
#include "common/cli.h"
#include "common/opts.h"
#include "validator/validator.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char details[] =
    "Without CANDIDATE the task's baseline is validated against its reference. CANDIDATE is\n"
    "a kernel file (.cu or .cl, '-' for stdin) that may carry its own //@launch and\n"
    "//@scratch lines; without them it keeps the baseline's launch plan. Several candidates\n"
    "are validated one after another by the same sandboxed worker (a worker that dies or\n"
    "hangs is replaced before the next one).\n"
    "\n"
    "The device is --device, else the candidate's extension, else cuda when --arch is given,\n"
    "else opencl. CUDA needs an NVIDIA GPU to run; on other machines use --device opencl (the\n"
    "task's OpenCL kernels on PoCL) or --compile-only --arch sm_90 (NVRTC only).\n"
    "\n"
    "Every check uses fresh random inputs (reproducible with --seed), poisoned outputs and\n"
    "guard bytes; see docs/validator.md. Exit status: 0 pass (or compiled), 1 any other\n"
    "verdict, 2 usage error or an invalid task (task.json or its files are wrong).\n"
    "\n"
    "Examples:\n"
    "  specgen validate suites/builtin/softmax --device opencl\n"
    "  specgen validate suites/demo/vector_scale my_kernel.cl --json\n"
    "  specgen validate suites/builtin/matmul --device cuda --compile-only --arch sm_80\n";

static int read_candidate(const char *path, sg_buf *b, sg_err *err) {
    if (strcmp(path, "-")) {
        int rc = sg_val_read_source(path, b, err); /* a FIFO is refused, not waited on */
        sg_buf_append(b, "", 0);
        return rc;
    }
    char chunk[65536];
    size_t n;
    int big = 0;
    while (!big && (n = fread(chunk, 1, sizeof chunk, stdin)) > 0) {
        sg_buf_append(b, chunk, n);
        big = b->len > SG_SOURCE_MAX;
    }
    sg_buf_append(b, "", 0);
    if (!big && !ferror(stdin)) return 0;
    errno = big ? EFBIG : EIO;
    char why[sizeof err->msg];
    return sg_errf(err, "%s", sg_read_error(why, sizeof why, path, SG_SOURCE_MAX));
}

/* One result as one JSON line, naming the candidate's file when there is one. */
static void print_json_line(const char *path, const sg_val_result *r) {
    char *s = sg_val_result_json(r);
    sg_buf line = {0};
    if (path) {
        sg_buf_append_str(&line, "{\"candidate\":");
        sg_buf_append_json_string(&line, path);
        sg_buf_printf(&line, ",%s", s + 1);
    } else {
        sg_buf_append_str(&line, s);
    }
    printf("%s\n", line.data);
    sg_buf_free(&line);
    free(s);
}

int sg_cmd_validate(int argc, char **argv) {
    const char *device = NULL, *arch = NULL, *pch = NULL;
    int compile_only = 0, json = 0;
    int64_t seed = 0, timeout = 20000000000LL, ctimeout = 30000000000LL;
    const sg_opt opts[] = {
        {.name = "device",
         .kind = SG_OPT_STR,
         .out = &device,
         .metavar = "cuda|opencl",
         .help = "device backend",
         .def = "see below"},
        {.name = "compile-only",
         .kind = SG_OPT_FLAG,
         .out = &compile_only,
         .help = "compile, do not run"},
        {.name = "arch",
         .kind = SG_OPT_STR,
         .out = &arch,
         .metavar = "sm_XX",
         .help = "CUDA architecture to compile for",
         .def = "the GPU's"},
        sg_opt_shared(SG_OD_JSON, &json),
        sg_opt_shared(SG_OD_SEED, &seed),
        sg_opt_shared(SG_OD_RUN_TIMEOUT, &timeout),
        sg_opt_shared(SG_OD_COMPILE_TIMEOUT, &ctimeout),
        sg_opt_shared(SG_OD_NVRTC_PCH, &pch),
        {0},
    };
    const sg_cmd_spec spec = {"validate",
                              "TASK_DIR [CANDIDATE...]",
                              "Compile a kernel and check it against the task reference.",
                              details,
                              opts,
                              1,
                              -1};
    char **pos;
    int npos;
    int rc = sg_cli_parse(&spec, argc, argv, &pos, &npos);
    if (rc == SG_CLI_HELP) return 0;
    if (rc != SG_CLI_OK) return 2;
    sg_dev_opts o;
    sg_dev_opts_default(&o);
    sg_err err;
    const char *cand_path = npos > 1 ? pos[1] : NULL;
    if (device) {
        if (sg_dev_lang_parse(device, &o.device, &err) < 0)
            return sg_cli_fail(&spec, 2, "--device: %s", err.msg);
    } else if (cand_path && strcmp(cand_path, "-") &&
               sg_dev_lang_of_path(cand_path, &o.device) == 0) {
    } else if (arch) {
        o.device = SG_DEV_CUDA;
    }
    if (arch && (strncmp(arch, "sm_", 3) || !arch[3]))
        return sg_cli_fail(&spec, 2, "--arch: '%s' is not an architecture like sm_90", arch);
    o.arch = arch;
    o.compile_only = compile_only;
    o.run_timeout_ms = timeout / 1000000;
    o.compile_timeout_ms = ctimeout / 1000000;
    o.nvrtc_pch = pch;
    sg_val_task task; /* a task's own fault is no candidate's verdict */
    if (sg_val_task_load_cli(pos[0], &task, &err) < 0) return sg_cli_fail(&spec, 2, "%s", err.msg);
    sg_val_pool *pool;
    if (sg_val_pool_new(&o, &pool, &err) < 0) {
        sg_val_task_free(&task);
        return sg_cli_fail(&spec, 1, "%s", err.msg);
    }
    int failed = 0, n = npos > 1 ? npos - 1 : 1;
    for (int i = 0; i < n; i++) {
        const char *path = npos > 1 ? pos[1 + i] : NULL;
        sg_buf cand = {0};
        if (path && read_candidate(path, &cand, &err) < 0) {
            sg_buf_free(&cand);
            sg_val_pool_free(pool);
            sg_val_task_free(&task);
            return sg_cli_fail(&spec, 1, "candidate %s", err.msg);
        }
        sg_val_job job = {.task_dir = pos[0],
                          .candidate = path ? cand.data : NULL,
                          .candidate_len = cand.len,
                          .candidate_name = path,
                          .seed = (uint64_t)seed};
        sg_val_result r;
        rc = sg_val_pool_validate(pool, 0, &job, &r, &err);
        sg_buf_free(&cand);
        if (rc < 0) {
            sg_val_pool_free(pool);
            sg_val_task_free(&task);
            return sg_cli_fail(&spec, 1, "%s", err.msg);
        }
        if (json) {
            print_json_line(path, &r);
        } else {
            if (n > 1) printf("== %s\n", path);
            sg_val_result_print(&r, stdout);
            if (r.verdict == SG_VAL_NO_DEVICE && o.device == SG_DEV_CUDA)
                sg_val_say_alternatives(pos[0], 1);
            if (!path && task.nguess && r.verdict != SG_VAL_PASS && r.verdict != SG_VAL_COMPILED &&
                r.verdict != SG_VAL_NO_DEVICE) {
                printf("the baseline failed its own reference; task init guessed these, and any "
                       "of them can cause it (check them in %s/task.json):\n",
                       pos[0]);
                for (int g = 0; g < task.nguess; g++) printf("  - %s\n", task.guesses[g]);
            }
        }
        fflush(stdout);
        failed += r.verdict != SG_VAL_PASS && r.verdict != SG_VAL_COMPILED;
    }
    if (n > 1 && !json)
        printf("%d of %d candidates passed (or compiled); worker started %d time(s)\n", n - failed,
               n, sg_val_pool_spawns(pool, 0));
    sg_val_pool_free(pool);
    sg_val_task_free(&task);
    return failed ? 1 : 0;
}
