#include "orchestrator/cli.h"
#include "orchestrator/commands.h"

/* Not built yet: the options below are the documented interface; see issue #3. */
int sg_cmd_task(int argc, char **argv) {
    static const char *s;
    static const sg_opt opts[] = {
        {"out", SG_OPT_STR, &s, "DIR", "output folder", NULL, NULL},
        {NULL, 0, NULL, NULL, NULL, NULL, NULL},
    };
    static const sg_cmd_spec spec = {"task",
                                     "init KERNEL.cu|KERNEL.cl",
                                     "Make a task folder from a kernel file, or inspect tasks.",
                                     NULL,
                                     opts,
                                     0,
                                     -1};
    return sg_cli_not_built(&spec, argc, argv, "tracked in issue #3");
}
