/* `specgen replay-llm`: serve replay traces as an OpenAI-compatible streaming server. */
#include "common/log.h"
#include "common/proc.h"
#include "common/net.h"
#include "common/cli.h"
#include "common/opts.h"
#include "replay/replay.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static int parse_dialect(const char *v, void *out, sg_err *err) {
    return sg_replay_dialect_parse(v, out, err);
}
static int parse_fault(const char *v, void *out, sg_err *err) {
    return sg_replay_fault_parse(v, out, err);
}

int sg_cmd_replay_llm(int argc, char **argv) {
    const char *trace = NULL, *listen = "127.0.0.1:8000";
    sg_replay_config cfg = {.speed = 1, .dialect = SG_DIALECT_VLLM};
    const sg_opt opts[] = {
        {.name = "trace",
         .kind = SG_OPT_STR,
         .out = &trace,
         .metavar = "FILE|DIR",
         .help = "replay trace, or a folder of *.jsonl traces"},
        {.name = "listen",
         .kind = SG_OPT_STR,
         .out = &listen,
         .metavar = "HOST:PORT",
         .help = "address to serve on (port 0: any free port)",
         .def = "127.0.0.1:8000"},
        sg_opt_shared(SG_OD_SPEED, &cfg.speed),
        {.name = "dialect",
         .kind = SG_OPT_FN,
         .out = &cfg.dialect,
         .metavar = "D",
         .help = "vllm|sglang|deepseek|llamacpp|raw: whose chunks to imitate",
         .def = "vllm",
         .fn = parse_dialect},
        {.name = "fault",
         .kind = SG_OPT_FN,
         .out = &cfg.fault,
         .metavar = "SPEC",
         .help = "inject a fault (see below)",
         .fn = parse_fault},
        {.name = "log-requests",
         .kind = SG_OPT_STR,
         .out = &cfg.log_requests,
         .metavar = "FILE",
         .help = "append each completion request to FILE as a JSON line (what clients sent)"},
        {.name = "kv-tokens",
         .kind = SG_OPT_INT,
         .out = &cfg.kv_tokens,
         .metavar = "N",
         .help = "test option: model a KV cache of N tokens (prompt bytes / 4 plus every token "
                 "streamed, per running stream); a stream that would overflow it is preempted, "
                 "waits for room and pays a recompute; /metrics adds vllm:kv_cache_usage_perc, "
                 "vllm:num_preemptions_total and vllm:num_requests_waiting (0: none)",
         .def = "no cache model",
         .min = 0,
         .max = 1000000000,
         .units = "tokens"},
        {.name = "cached-prefix",
         .kind = SG_OPT_FLAG,
         .out = &cfg.cached_prefix,
         .help =
             "report cached prompt tokens in usage: the leading tokens a prompt shares with one "
             "served before (as a server's prefix cache)"},
        {0},
    };
    const sg_cmd_spec spec = {
        "replay-llm",
        "",
        "Serve scripted reasoning traces as an OpenAI-compatible streaming LLM.",
        "Serves GET /v1/models, POST /v1/chat/completions and POST /v1/completions (stream: "
        "true),\n"
        "streaming each trace token at the trace's pace divided by --speed, with chunks written\n"
        "exactly as the chosen server writes them:\n"
        "  vllm      delta.reasoning (vLLM >= 0.11), stop_reason, usage chunk with choices []\n"
        "  sglang    delta.reasoning_content, \"usage\": null in every chunk, matched_stop,\n"
        "            usage.reasoning_tokens\n"
        "  deepseek  delta.reasoning_content, \": keep-alive\" comments, system_fingerprint "
        "fp_...,\n"
        "            usage.completion_tokens_details.reasoning_tokens (no /metrics)\n"
        "  llamacpp  delta.reasoning_content, usage and timings on the last chunk\n"
        "  raw       no reasoning parser: <think>...</think> inside content\n"
        "Completions requests get raw text (<think> reasoning </think> answer). A request whose\n"
        "prompt closes the reasoning (`</think>` after the last `<think>`) is a fork: it gets the\n"
        "trace's fork answer recorded at the largest offset <= the prefix's token count.\n"
        "GET /metrics shows running requests and generated tokens under the dialect's metric\n"
        "names; GET /v1/replay/stats shows counts and trigger-to-request latency (from the\n"
        "X-Specgen-Trigger-Ns header). A client that closes its connection stops its stream.\n"
        "With --cached-prefix, usage carries prompt_tokens_details.cached_tokens as vLLM\n"
        "(--enable-prompt-tokens-details), SGLang (--enable-cache-report) and DeepSeek write it:\n"
        "the longest prefix the prompt shares with any of the last 1024 prompts served, in\n"
        "prompt tokens (bytes / 4; at most prompt_tokens - 1). The llamacpp dialect does not\n"
        "report it (its usage has no prompt_tokens_details).\n"
        "\n"
        "Faults (--fault KIND[:KEY=N]...; :times=K affects only the first K requests):\n"
        "  drop:after=N            close the connection after N tokens\n"
        "  429:retry_after=S       answer 429 with Retry-After: S\n"
        "  503                     answer 503\n"
        "  stall:after=N:ms=M      pause M ms after N tokens\n"
        "  malformed:after=N       send a broken JSON chunk after N tokens\n"
        "  abort:after=N           end with finish_reason \"abort\" after N tokens\n"
        "  ignore_max_tokens       stream everything, ignoring the request's max_tokens\n"
        "  no_completions          answer 404 on /v1/completions (a chat-only server)\n"
        "  no_stream               answer one JSON object (application/json), not a stream\n"
        "\n"
        "Trace format: docs/replay-trace.md. Example:\n"
        "  specgen replay-llm --trace prompts/traces --listen 127.0.0.1:8000 --dialect sglang "
        "--speed 4\n",
        opts,
        0,
        0};
    int rc = sg_cli_parse(&spec, argc, argv, NULL, NULL);
    if (rc) return rc == SG_CLI_HELP ? 0 : rc;
    if (!trace)
        return sg_cli_fail(&spec, 2, "--trace is required (a .jsonl file or a folder of them)");
    if (!(cfg.speed > 0)) return sg_cli_fail(&spec, 2, "--speed: '%g' must be > 0", cfg.speed);
    char host[256];
    sg_err err;
    if (sg_net_parse_hostport(listen, host, sizeof host, &cfg.port, &err) < 0)
        return sg_cli_fail(&spec, 2, "--listen: %s", err.msg);
    cfg.host = host;
    sg_replay_traces ts;
    if (sg_replay_load(trace, &ts, &err) < 0) return sg_cli_fail(&spec, 1, "%s", err.msg);
    /* Block the stop signals before MHD's threads start, then wait for one here. */
    sigset_t set;
    sg_proc_block_stop_signals(&set);
    signal(SIGPIPE, SIG_IGN);
    sg_replay_server *srv = sg_replay_start(&ts, &cfg, &err);
    if (!srv) {
        sg_replay_traces_free(&ts);
        return sg_cli_fail(&spec, 1, "%s", err.msg);
    }
    printf("replay-llm: listening on http://%s:%d (%zu trace%s, dialect %s, speed %g)\n", host,
           sg_replay_port(srv), ts.n, ts.n == 1 ? "" : "s", sg_replay_dialect_name(cfg.dialect),
           cfg.speed);
    fflush(stdout);
    int sig = 0;
    sigwait(&set, &sig);
    sg_info("replay", "signal %d: stopping", sig);
    sg_replay_stop(srv);
    sg_replay_traces_free(&ts);
    return 0;
}
