/* `specgen optimize TASK_DIR|KERNEL.cu`: the main job. Parses the options into a run
 * configuration and hands it to run.h, which sets up the ports (an LLM endpoint or the
 * embedded replay of the demo trace; the validator's workers with the profiler), runs one
 * task on the real loop, shows progress and writes the results. */
#include "common/cli.h"
#include "common/wfile.h"
#include "orchestrator/commands.h"
#include "orchestrator/run.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char details[] =
    "TASK_DIR holds task.json, a baseline and a reference (suites/builtin/*, suites/demo/*).\n"
    "A kernel file (.cu or .cl) works too: a task folder is made from its signature first\n"
    "(as `specgen task init` does) in OUT/task, with the same hints: --kernel, --size,\n"
    "--count, --launch (see `specgen task init --help`). A later run reuses OUT/task;\n"
    "--force makes it again (with the hints given now).\n"
    "\n"
    "Without --llm, specgen serves a scripted reasoning trace itself (prompts/traces/, as\n"
    "`specgen replay-llm` would), so the whole mechanism runs on any machine: reasoning\n"
    "streams, forks fire, kernels are validated and timed for real. The traces are for the\n"
    "demo tasks (vector_scale, relu_bias, row_sum); any other task needs --llm (or --trace\n"
    "FILE, a trace of your own).\n"
    "With --llm (default: $OPENAI_BASE_URL), any OpenAI-compatible server (vLLM, SGLang,\n"
    "llama.cpp) is used; several URLs may be given, comma-separated. The API key comes from\n"
    "--api-key-file, else $SPECGEN_API_KEY or $OPENAI_API_KEY. --temperature and --top-p set\n"
    "the reasoning's sampling, --fork-temperature and --fork-top-p the forks'. Every option\n"
    "may come from a JSON config file too (--config; --show-config: docs/config.md).\n"
    "\n"
    "Policies: specgen (fork short generations from the reasoning, stop it at the target),\n"
    "sequential (one reasoning stream per iteration, its final kernel only), parallel:N\n"
    "(N reasoning streams per iteration, the next after all N), and the fair baselines of\n"
    "docs/eval.md: probe:K (a fork every K reasoning tokens, no cue rules), workers:N (N\n"
    "streams without a barrier, each restarting on its own feedback), probe-exit:K (a probe\n"
    "answer every K tokens, untimed; the reasoning stops when two in a row write the same\n"
    "kernel, which is then the only one timed). --no-fork is an ablation; --early-stop also cuts "
    "an\n"
    "iteration on a 5% gain (measured slower in the simulation: docs/eval.md).\n"
    "\n"
    "Candidates are validated, and correct ones timed, on worker slots: --slots-per-device on\n"
    "each device (a GPU; with OpenCL on PoCL, the CPU). A slot validates or profiles; with\n"
    "--pools elastic (the default) the split follows the arrival of each kind of job, and a\n"
    "profile job always has its device to itself. The summary gives each role's utilisation\n"
    "and waits, and the feedback latency (candidate extracted -> its timing).\n"
    "\n"
    "Writes OUT/best.cl (or .cu), OUT/events.jsonl (every event) and OUT/summary.json.\n"
    "stdout gets the result (a table; --json: summary.json's object), stderr the log, with a\n"
    "status line on a terminal, else a progress line every --progress-interval.\n"
    "--metrics-listen serves Prometheus metrics (docs/deployment.md).\n"
    "Ctrl-C (or SIGTERM) stops gracefully: generations are aborted, running jobs finish,\n"
    "and the results so far are written. Exit status: 0 when the task ran (target met or\n"
    "not), 1 on an error, 2 on bad usage, 130 when it was stopped.\n"
    "\n"
    "Examples:\n"
    "  specgen optimize suites/demo/vector_scale\n"
    "  specgen optimize suites/builtin/softmax --llm http://127.0.0.1:8000 --model Qwen/Qwen3-8B\n"
    "  specgen optimize my_kernel.cu --llm http://gpu-node:8000 --model deepseek-r1 --target 1.5\n"
    "  specgen optimize layernorm.cu --kernel layernorm_forward --size N=8192 --llm URL --model "
    "M\n";

/* --precision or --baseline given with a task folder not imported at them: a usage error
 * that says what to run instead (they shape an import; a folder is used as it is). */
static int import_mismatch(const sg_cmd_spec *spec, const char *dir) {
    char path[4200];
    snprintf(path, sizeof path, "%s/task.json", dir);
    json_t *j = json_load_file(path, 0, NULL);
    const char *file = json_string_value(json_object_get(json_object_get(j, "origin"), "file"));
    int rc = file ? sg_cli_fail(spec, 2,
                                "--precision and --baseline shape a KernelBench problem's import; "
                                "%s was imported from %s at others (its task.json says which): "
                                "give the problem file instead, or import it again with `specgen "
                                "task init %s -o %s --force` and those options",
                                dir, file, file, dir)
                  : sg_cli_fail(spec, 2,
                                "--precision and --baseline are for a KernelBench problem (they "
                                "shape its import); %s is a kernel task, not imported from one",
                                dir);
    json_decref(j);
    return rc;
}

int sg_cmd_optimize(int argc, char **argv) {
    sg_run_config rc;
    sg_run_config_default(&rc);
    sg_run_opts ro;
    sg_run_opts_default(&ro, &rc);
    sg_val_init_opts io;
    memset(&io, 0, sizeof io);
    sg_opt opts[64] = {
        {.name = "out",
         .kind = SG_OPT_STR,
         .out = &rc.out_dir,
         .metavar = "DIR",
         .help = "output folder",
         .def = "specgen-out/TASK",
         .short_name = 'o'},
    };
    int nopts = 1 + sg_run_opts_table(&ro, &rc, 0, opts + 1);
    sg_val_init_cli_opts(&io, opts + nopts); /* a kernel file's hints, as for `task init` */
    const sg_cmd_spec spec = {
        "optimize",
        "TASK_DIR|KERNEL",
        "Make one kernel faster: the reasoning model's thinking is forked into short generations "
        "whose kernels are validated and timed while it thinks.",
        details,
        opts,
        1,
        1};
    char **pos;
    int npos;
    int rcode = sg_cli_parse(&spec, argc, argv, &pos, &npos);
    if (rcode == SG_CLI_HELP) return 0;
    if (rcode) return 2;
    sg_err err;
    if (sg_run_opts_apply(&ro, &rc, &err) < 0) return sg_cli_fail(&spec, 2, "%s", err.msg);
    rc.task = pos[0];
    rc.init = &io;
    struct stat st;
    if ((sg_val_init_hinted(&io) || io.force) && stat(rc.task, &st) == 0 && S_ISDIR(st.st_mode))
        return sg_cli_fail(&spec, 2,
                           "--kernel, --size, --count, --launch and --force are for a kernel file "
                           "(they shape the task made from it); %s is a task folder: edit its "
                           "task.json",
                           rc.task);
    if ((io.precision || io.baseline) && stat(rc.task, &st) == 0 && S_ISDIR(st.st_mode) &&
        sg_run_import_state(&io, rc.task) == 2)
        return import_mismatch(&spec, rc.task);

    sg_task_stats final;
    int orc = sg_run_one(&rc, &final, &err);
    if (orc < 0) return sg_cli_fail(&spec, orc == SG_WFILE_REFUSED ? 2 : 1, "%s", err.msg);
    return final.error[0] ? 1 : final.cancelled ? 130 : 0;
}
