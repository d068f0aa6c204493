#include "common/cli.h"
#include "pool/pool.h"

/* Not built yet: the options below are the documented interface; see a later issue. */
int sg_cmd_pool(int argc, char **argv) {
    static const char *s;
    static const sg_opt opts[] = {
        {"listen", SG_OPT_STR, &s, "HOST:PORT", "address to serve on", NULL, NULL, 0},
        {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
    };
    static const sg_cmd_spec spec = {
        "pool", "", "Run a pool agent serving validation and profiling jobs over HTTP.", NULL, opts,
        0,      -1};
    return sg_cli_not_built(&spec, argc, argv, "tracked in a later issue");
}
