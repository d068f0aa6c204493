#include "orchestrator/cli.h"
#include "orchestrator/commands.h"

/* Not built yet: the options below are the documented interface; see issue #6. */
int sg_cmd_optimize(int argc, char **argv) {
    static const char *s;
    static double d;
    static int64_t t;
    static uint64_t c;
    static const sg_opt opts[] = {
        {"llm", SG_OPT_STR, &s, "URL", "OpenAI-compatible endpoint", NULL, NULL},
        {"model", SG_OPT_STR, &s, "NAME", "model name", NULL, NULL},
        {"template", SG_OPT_STR, &s, "NAME", "chat template: qwen3|deepseek-r1|glm|generic", NULL,
         NULL},
        {"target", SG_OPT_DOUBLE, &d, "X", "target speedup", "2.0", NULL},
        {"budget-time", SG_OPT_DURATION, &t, "T", "wall-time budget", "30m", NULL},
        {"budget-tokens", SG_OPT_COUNT, &c, "N", "token budget", "500k", NULL},
        {"device", SG_OPT_STR, &s, "cuda|opencl", "device backend", NULL, NULL},
        {"policy", SG_OPT_STR, &s, "P", "specgen|sequential|parallel:N", "specgen", NULL},
        {"out", SG_OPT_STR, &s, "DIR", "output folder", NULL, NULL},
        {NULL, 0, NULL, NULL, NULL, NULL, NULL},
    };
    static const sg_cmd_spec spec = {
        "optimize", "TASK_DIR|KERNEL.cu", "Make one kernel faster.", NULL, opts, 0, -1};
    return sg_cli_not_built(&spec, argc, argv, "tracked in issue #6");
}
