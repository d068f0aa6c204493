#include "orchestrator/cli.h"
#include "orchestrator/commands.h"

/* Not built yet: the options below are the documented interface; see issue #3. */
int sg_cmd_validate(int argc, char **argv) {
    static const char *s;
    static int f;
    static const sg_opt opts[] = {
        {"device", SG_OPT_STR, &s, "cuda|opencl", "device backend", NULL, NULL},
        {"compile-only", SG_OPT_FLAG, &f, NULL, "compile, do not run", NULL, NULL},
        {"arch", SG_OPT_STR, &s, "sm_XX", "CUDA architecture", NULL, NULL},
        {"json", SG_OPT_FLAG, &f, NULL, "print JSON", NULL, NULL},
        {NULL, 0, NULL, NULL, NULL, NULL, NULL},
    };
    static const sg_cmd_spec spec = {"validate",
                                     "TASK_DIR [CANDIDATE]",
                                     "Compile a kernel and check it against the task reference.",
                                     NULL,
                                     opts,
                                     0,
                                     -1};
    return sg_cli_not_built(&spec, argc, argv, "tracked in issue #3");
}
