#include "common/cli.h"
#include "orchestrator/commands.h"

/* Not built yet: the options below are the documented interface; see a later issue. */
int sg_cmd_sim(int argc, char **argv) {
    static const char *s;
    static const sg_opt opts[] = {
        {"policy", SG_OPT_STR, &s, "P", "policy to simulate", NULL, NULL, 0},
        {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
    };
    static const sg_cmd_spec spec = {
        "sim", "WORKLOAD", "Compare policies in a virtual-time simulation.", NULL, opts, 0, -1};
    return sg_cli_not_built(&spec, argc, argv, "tracked in a later issue");
}
