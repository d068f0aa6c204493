#include "orchestrator/cli.h"
#include "orchestrator/commands.h"

/* Not built yet: the options below are the documented interface; see issue #4. */
int sg_cmd_profile(int argc, char **argv) {
    static const char *s;
    static int f;
    static const sg_opt opts[] = {
        {"device", SG_OPT_STR, &s, "cuda|opencl", "device backend", NULL, NULL},
        {"json", SG_OPT_FLAG, &f, NULL, "print JSON", NULL, NULL},
        {NULL, 0, NULL, NULL, NULL, NULL, NULL},
    };
    static const sg_cmd_spec spec = {"profile",
                                     "TASK_DIR CANDIDATE",
                                     "Time a kernel against the baseline and explain the result.",
                                     NULL,
                                     opts,
                                     0,
                                     -1};
    return sg_cli_not_built(&spec, argc, argv, "tracked in issue #4");
}
