#include "common/cli.h"
#include "results/results.h"

/* Not built yet: the options below are the documented interface; see a later issue. */
int sg_cmd_results(int argc, char **argv) {
    static const char *s;
    static const sg_opt opts[] = {
        {"db", SG_OPT_STR, &s, "FILE", "results database", NULL, NULL, 0},
        {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
    };
    static const sg_cmd_spec spec = {"results", "QUERY", "Query the results database.", NULL, opts,
                                     0,         -1};
    return sg_cli_not_built(&spec, argc, argv, "tracked in a later issue");
}
