#include "orchestrator/cli.h"
#include "orchestrator/commands.h"

/* Not built yet: the options below are the documented interface; see issue #5. */
int sg_cmd_replay_llm(int argc, char **argv) {
    static const char *s;
    static double d;
    static const sg_opt opts[] = {
        {"trace", SG_OPT_STR, &s, "FILE|DIR", "replay trace(s) to serve", NULL, NULL},
        {"listen", SG_OPT_STR, &s, "HOST:PORT", "address to serve on", "127.0.0.1:8000", NULL},
        {"speed", SG_OPT_DOUBLE, &d, "X", "time scale (2 = twice as fast)", "1", NULL},
        {"dialect", SG_OPT_STR, &s, "D", "vllm|sglang|deepseek|llamacpp", "vllm", NULL},
        {"fault", SG_OPT_STR, &s, "SPEC", "inject a fault", NULL, NULL},
        {NULL, 0, NULL, NULL, NULL, NULL, NULL},
    };
    static const sg_cmd_spec spec = {
        "replay-llm",
        "",
        "Serve scripted reasoning traces as an OpenAI-compatible streaming LLM.",
        NULL,
        opts,
        0,
        -1};
    return sg_cli_not_built(&spec, argc, argv, "tracked in issue #5");
}
