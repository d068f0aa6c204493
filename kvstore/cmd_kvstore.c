#include "orchestrator/cli.h"
#include "orchestrator/commands.h"

/* Not built yet: the options below are the documented interface; see issue #7. */
int sg_cmd_kvstore(int argc, char **argv) {
    static const char *s;
    static int64_t n;
    static const sg_opt opts[] = {
        {"listen", SG_OPT_STR, &s, "HOST:PORT", "address to serve on", "127.0.0.1:6380", NULL},
        {"memory", SG_OPT_STR, &s, "SIZE|auto", "memory budget", NULL, NULL},
        {"backend", SG_OPT_STR, &s, "host|cuda:N", "where values live", "host", NULL},
        {"requirepass-file", SG_OPT_STR, &s, "F", "password file", NULL, NULL},
        {"io-threads", SG_OPT_INT, &n, "N", "I/O threads", NULL, NULL},
        {NULL, 0, NULL, NULL, NULL, NULL, NULL},
    };
    static const sg_cmd_spec spec = {
        "kvstore", "", "Serve a KV cache store over the Redis protocol.", NULL, opts, 0, -1};
    return sg_cli_not_built(&spec, argc, argv, "tracked in issue #7");
}
