#include "orchestrator/commands.h"

#include "kvstore/kvstore.h"
#include "llm/llm.h"
#include "pool/pool.h"
#include "profiler/profiler.h"
#include "replay/replay.h"
#include "results/results.h"
#include "validator/validator.h"

#include <stddef.h>

/* `results` with the validator's ModelNew writer for `export --kernelbench`. */
static int results_cmd(int argc, char **argv) {
    return sg_cmd_results_with(argc, argv, sg_val_kb_export);
}

const sg_command sg_commands[] = {
    {"optimize", "make one kernel faster: reasoning LLM + speculative forks + validation",
     sg_cmd_optimize},
    {"campaign", "optimize a whole kernel suite under time and token budgets", sg_cmd_campaign},
    {"results", "query the results database", results_cmd},
    {"report", "write an HTML report of a campaign", sg_cmd_report},
    {"task", "inspect tasks, or make one from a kernel file (task init)", sg_cmd_task},
    {"validate", "compile a kernel and check it against the task's reference", sg_cmd_validate},
    {"profile", "time a kernel against the baseline and explain the result", sg_cmd_profile},
    {"pool", "run a pool agent that serves validation/profiling jobs over HTTP", sg_cmd_pool},
    {"kvstore", "serve a KV cache store over the Redis protocol (RESP)", sg_cmd_kvstore},
    {"replay-llm", "serve scripted reasoning traces as an OpenAI-compatible LLM",
     sg_cmd_replay_llm},
    {"llm-check", "probe an OpenAI-compatible endpoint: dialect, speed, abort", sg_cmd_llm_check},
    {"sim", "compare policies in a virtual-time simulation", sg_cmd_sim},
    {"calibrate", "measure a model and cluster for the simulator (sim fit)", sg_cmd_calibrate},
    {"options", "list every command's options (docs/options.md)", sg_cmd_options},
    {"completion", "print a bash or zsh completion script", sg_cmd_completion},
    {NULL, NULL, NULL},
};
