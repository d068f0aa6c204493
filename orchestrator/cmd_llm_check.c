#include "orchestrator/cli.h"
#include "orchestrator/commands.h"

/* Not built yet: the options below are the documented interface; see issue #5. */
int sg_cmd_llm_check(int argc, char **argv) {
    static const char *s;
    static int f;
    static const sg_opt opts[] = {
        {"llm", SG_OPT_STR, &s, "URL", "endpoint base URL", NULL, NULL},
        {"model", SG_OPT_STR, &s, "NAME", "model name", NULL, NULL},
        {"completions", SG_OPT_FLAG, &f, NULL, "use /v1/completions instead of chat", NULL, NULL},
        {"json", SG_OPT_FLAG, &f, NULL, "print JSON", NULL, NULL},
        {NULL, 0, NULL, NULL, NULL, NULL, NULL},
    };
    static const sg_cmd_spec spec = {
        "llm-check", "",   "Probe an OpenAI-compatible endpoint: dialect, speed, usage, abort.",
        NULL,        opts, 0,
        -1};
    return sg_cli_not_built(&spec, argc, argv, "tracked in issue #5");
}
