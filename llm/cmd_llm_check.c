/* `specgen llm-check`: what a user runs first against an endpoint. One short stream
 * to the end (dialect, token counts, time to first token, speed, usage), then one
 * stream aborted after a few tokens, and the server's /metrics read to see whether
 * it really stopped generating. */
#include "common/buf.h"
#include "common/json.h"
#include "common/units.h"
#include "common/cli.h"
#include "common/redact.h"
#include "llm/llm.h"
#include "llm/llm_metrics.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct check {
    sg_loop *loop;
    sg_llm_stream *abort_me;
    int64_t seen, abort_after;
    sg_llm_result res;
    int ended, failed, aborted;
    char err[1400];
} check;

static void on_delta(void *arg, const char *t, size_t n) {
    check *c = arg;
    if (!c->abort_me || ++c->seen < c->abort_after) return;
    sg_llm_abort(c->abort_me, &c->res);
    c->abort_me = NULL;
    c->aborted = c->ended = 1;
    sg_loop_stop(c->loop);
}

static void on_finish(void *arg, const sg_llm_result *r) {
    check *c = arg;
    c->res = *r;
    c->ended = 1;
    c->abort_me = NULL;
    sg_loop_stop(c->loop);
}

static void on_error(void *arg, const char *msg, const sg_llm_result *r) {
    check *c = arg;
    c->res = *r;
    c->ended = c->failed = 1;
    c->abort_me = NULL;
    snprintf(c->err, sizeof c->err, "%s", msg);
    sg_loop_stop(c->loop);
}

static int run_stream(sg_llm *llm, sg_loop *loop, const sg_llm_request *req, int64_t abort_after,
                      check *c) {
    memset(c, 0, sizeof *c);
    c->loop = loop;
    c->abort_after = abort_after;
    sg_llm_callbacks cb = {on_delta, on_delta, NULL, on_finish, on_error, c};
    sg_err err;
    sg_llm_stream *s = sg_llm_start(llm, req, &cb, &err);
    if (!s) {
        snprintf(c->err, sizeof c->err, "%s", err.msg);
        return c->failed = 1, -1;
    }
    if (abort_after > 0) c->abort_me = s;
    if (sg_loop_run(loop, &err) < 0) {
        snprintf(c->err, sizeof c->err, "%s", err.msg);
        return c->failed = 1, -1;
    }
    return c->failed ? -1 : 0;
}

static size_t collect(char *p, size_t sz, size_t nm, void *arg) {
    sg_buf_append(arg, p, sz * nm);
    return sz * nm;
}

/* The first model the server lists, when the user named none. */
static char *first_model(const char *url, sg_err *err) {
    sg_buf u = {0}, body = {0};
    sg_buf_append_str(&u, url);
    while (u.len && u.data[u.len - 1] == '/') u.data[--u.len] = '\0';
    if (!(u.len >= 3 && !strcmp(u.data + u.len - 3, "/v1"))) sg_buf_append_str(&u, "/v1");
    sg_buf_append_str(&u, "/models");
    CURL *e = curl_easy_init();
    curl_easy_setopt(e, CURLOPT_URL, u.data);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 10000L);
    CURLcode rc = curl_easy_perform(e);
    curl_easy_cleanup(e);
    char *model = NULL;
    json_t *root =
        rc == CURLE_OK ? json_loadb(body.data ? body.data : "", body.len, 0, NULL) : NULL;
    json_t *id = json_object_get(json_array_get(json_object_get(root, "data"), 0), "id");
    char shown[512];
    sg_redact_url_fit(shown, sizeof shown, u.data);
    if (json_is_string(id))
        model = sg_xstrdup(json_string_value(id));
    else if (rc != CURLE_OK)
        sg_errf(err, "%s: %s", shown, curl_easy_strerror(rc));
    else
        sg_errf(err, "%s lists no model; name one with --model", shown);
    json_decref(root);
    sg_buf_free(&u);
    sg_buf_free(&body);
    return model;
}

/* After an abort: does the server's running count drop and its token count stop? */
static void probe_stop(const char *url, sg_buf *verdict, json_t *j) {
    sg_llm_metrics m, m2;
    sg_err err;
    struct timespec t0, t1, nap = {0, 20 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = sg_llm_metrics_fetch(url, 2000, &m, &err);
    if (rc != 0) {
        sg_buf_append_str(
            verdict, rc > 0
                         ? "connection closed; the server has no /metrics, so whether it stopped "
                           "generating is unknown"
                         : "connection closed; /metrics could not be read");
        json_object_set_new(j, "server_stopped", json_null());
        return;
    }
    for (int i = 0; i < 100 && m.running > 0; i++) {
        nanosleep(&nap, NULL);
        if (sg_llm_metrics_fetch(url, 2000, &m, &err) != 0) break;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    struct timespec settle = {0, 300 * 1000 * 1000};
    nanosleep(&settle, NULL);
    int again = sg_llm_metrics_fetch(url, 2000, &m2, &err) == 0;
    int stopped = m.running == 0 && again && m2.generated == m.generated;
    sg_buf_printf(verdict,
                  "connection closed; server %s (%s %g after %ld ms; generated tokens %s over the "
                  "next 300 ms)",
                  stopped ? "stopped generating" : "still generating", m.running_name, m.running,
                  ms, again && m2.generated == m.generated ? "unchanged" : "still growing");
    json_object_set_new(j, "server_stopped", json_boolean(stopped));
}

static const char details[] =
    "Streams one short request to the end and reports the dialect detected from the\n"
    "chunks (vllm, vllm-legacy, sglang, deepseek, llamacpp, llama-cpp-python,\n"
    "openai-compatible), reasoning and content tokens, time to first token, tokens per\n"
    "second and whether the server reported usage. Then it streams again, closes the\n"
    "connection after --abort-after tokens, and reads the server's /metrics to see\n"
    "whether the request really stopped (vLLM, SGLang, llama.cpp --metrics).\n"
    "The first stream asks for its token ids (vLLM's return_token_ids); the forks line says\n"
    "whether forks would go as token ids (the ids came back, /tokenize answers, a prompt given\n"
    "as ids streams) or as text, and why.\n"
    "The API key comes from $SPECGEN_API_KEY or $OPENAI_API_KEY and is never printed.\n"
    "Exit status: 0 when the stream worked, 1 when it did not, 2 for usage errors.\n"
    "\nExample:\n  specgen llm-check --llm http://127.0.0.1:8000 --model Qwen/Qwen3-8B\n";

/* The full stream's result into j. */
static void put_stream(json_t *j, const check *full, const char *url, int completions,
                       const char *model) {
    const sg_llm_result *r = &full->res;
    char shown[512];
    json_object_set_new(
        j, "endpoint",
        json_string(r->endpoint ? r->endpoint : sg_redact_url_fit(shown, sizeof shown, url)));
    json_object_set_new(j, "api", json_string(completions ? "completions" : "chat"));
    json_object_set_new(j, "model", json_string(model));
    json_object_set_new(j, "ok", json_boolean(!full->failed));
    if (full->failed) json_object_set_new(j, "error", json_string(full->err));
    if (!full->failed || r->t_first_ns) {
        int64_t reasoning = r->usage.estimated || !r->usage.reasoning_tokens
                                ? r->reasoning_chunks
                                : r->usage.reasoning_tokens;
        double ttft = r->t_first_ns ? (double)(r->t_first_ns - r->t_start_ns) / 1e6 : -1;
        int64_t toks = r->usage.completion_tokens;
        double dur = (double)(r->t_end_ns - r->t_first_ns) / 1e9;
        json_object_set_new(j, "dialect", json_string(r->dialect));
        json_object_set_new(j, "reasoning_tokens", json_integer(reasoning));
        json_object_set_new(j, "reasoning_chunks", json_integer(r->reasoning_chunks));
        json_object_set_new(j, "content_chunks", json_integer(r->content_chunks));
        json_object_set_new(j, "completion_tokens", json_integer(toks));
        json_object_set_new(j, "prompt_tokens", json_integer(r->usage.prompt_tokens));
        json_object_set_new(j, "usage_reported", json_boolean(!r->usage.estimated));
        json_object_set_new(j, "first_token_ms", json_real(ttft));
        json_object_set_new(j, "tokens_per_s",
                            json_real(toks > 1 && dur > 0 ? (double)(toks - 1) / dur : 0));
        json_object_set_new(j, "finish_reason", json_string(r->finish_reason));
    }
}

/* Streams again and closes after abort_after tokens; then asks /metrics whether the
 * server stopped. The verdict goes to j and into verdict. */
static void abort_test(sg_llm *llm, sg_loop *loop, sg_llm_request *req, int64_t abort_after,
                       const char *url, json_t *j, sg_buf *verdict) {
    check ab;
    req->max_tokens = 4096;
    run_stream(llm, loop, req, abort_after, &ab);
    json_object_set_new(j, "abort_tokens_received", json_integer(ab.seen));
    if (ab.failed) {
        sg_buf_printf(verdict, "the abort test failed: %s", ab.err);
    } else if (!ab.aborted) {
        sg_buf_printf(verdict,
                      "not tested: the answer ended after %lld tokens, before --abort-after %lld",
                      (long long)ab.seen, (long long)abort_after);
    } else {
        probe_stop(url, verdict, j);
    }
    json_object_set_new(j, "abort", json_string(verdict->data));
}

/* Forks as token ids: did the stream return its ids (vLLM's return_token_ids), does the
 * server's /tokenize answer, and does a completions prompt given as ids stream? The
 * verdict ("token ids", or "text" and why) goes to j and v. */
static void fork_test(sg_llm *llm, sg_loop *loop, const check *full, const char *url,
                      const char *model, json_t *j, sg_buf *v) {
    const sg_llm_result *r = &full->res;
    json_object_set_new(j, "prompt_token_ids", json_integer(r->prompt_ids));
    json_object_set_new(j, "generated_token_ids", json_integer(r->gen_ids));
    const char *key = getenv("SPECGEN_API_KEY");
    if (!key || !*key) key = getenv("OPENAI_API_KEY");
    int32_t *ids = NULL;
    size_t n = 0;
    sg_err err;
    check f;
    if (r->ids_refused)
        sg_buf_printf(v, "text: the server refused return_token_ids (SGLang does on a streamed "
                         "chat)");
    else if (!r->prompt_ids || !r->gen_ids)
        sg_buf_printf(v, "text: the stream returned no token ids (return_token_ids ignored)");
    else if (sg_llm_tokenize(url, model, key, "\n</think>\n\n", &ids, &n, 5000, &err) < 0)
        sg_buf_printf(v, "text: no /tokenize for the fork's suffix (%s)", err.msg);
    else {
        sg_llm_request q = {.api = SG_LLM_COMPLETIONS,
                            .model = model,
                            .prompt_ids = ids,
                            .n_prompt_ids = n,
                            .max_tokens = 4,
                            .temperature = 0};
        if (run_stream(llm, loop, &q, 0, &f) < 0)
            sg_buf_printf(v, "text: a prompt given as token ids failed (%s)", f.err);
        else
            sg_buf_printf(v,
                          "token ids (the stream returned %lld prompt and %lld generated ids; "
                          "/tokenize and a prompt given as ids work)",
                          (long long)r->prompt_ids, (long long)r->gen_ids);
    }
    free(ids);
    json_object_set_new(j, "fork_prompt",
                        json_string(strncmp(v->data, "text", 4) ? "ids" : "text"));
    json_object_set_new(j, "fork_prompt_detail", json_string(v->data));
}

/* The result as lines for a person (stderr only when nothing streamed). */
static void print_text(json_t *j, const check *full, int completions, const char *model,
                       const sg_buf *verdict, const sg_buf *forks) {
    const sg_llm_result *r = &full->res;
    if (full->failed && !r->t_first_ns) {
        fprintf(stderr, "specgen llm-check: %s\n", full->err);
        return;
    }
    printf("endpoint      %s (%s)\nmodel         %s\n",
           json_string_value(json_object_get(j, "endpoint")), completions ? "completions" : "chat",
           model);
    printf("dialect       %s\n", r->dialect);
    printf("reasoning     %lld tokens%s\n",
           (long long)json_integer_value(json_object_get(j, "reasoning_tokens")),
           r->usage.estimated || !r->usage.reasoning_tokens ? " (counted from chunks)"
                                                            : " (server's count)");
    printf("content       %lld chunks\n", (long long)r->content_chunks);
    if (r->usage.estimated)
        printf("usage         not reported by the server (counts estimated from chunks)\n");
    else
        printf("usage         reported: prompt %lld, completion %lld, reasoning %lld\n",
               (long long)r->usage.prompt_tokens, (long long)r->usage.completion_tokens,
               (long long)r->usage.reasoning_tokens);
    printf("first token   %.1f ms\nspeed         %.1f tokens/s\nfinish        %s\n",
           json_real_value(json_object_get(j, "first_token_ms")),
           json_real_value(json_object_get(j, "tokens_per_s")),
           r->finish_reason[0] ? r->finish_reason : "(none)");
    if (full->failed) printf("error         %s\n", full->err);
    if (verdict->data) printf("abort         %s\n", verdict->data);
    if (forks->data) printf("forks         %s\n", forks->data);
}

int sg_cmd_llm_check(int argc, char **argv) {
    const char *url = NULL, *model_opt = NULL, *prompt = NULL, *extra = NULL;
    int completions = 0, as_json = 0;
    int64_t max_tokens = 64, abort_after = 5, timeout_ns = 60 * SG_SEC, idle_ns = 0;
    const sg_opt opts[] = {
        {.name = "llm",
         .kind = SG_OPT_STR,
         .out = &url,
         .metavar = "URL",
         .help = "endpoint base URL (http://host:port or .../v1)",
         .def = "$OPENAI_BASE_URL",
         .env = "OPENAI_BASE_URL"},
        {.name = "model",
         .kind = SG_OPT_STR,
         .out = &model_opt,
         .metavar = "NAME",
         .help = "model name (default: the first in /v1/models)"},
        {.name = "completions",
         .kind = SG_OPT_FLAG,
         .out = &completions,
         .help = "use /v1/completions instead of chat"},
        {.name = "prompt",
         .kind = SG_OPT_STR,
         .out = &prompt,
         .metavar = "TEXT",
         .help = "prompt to send",
         .def = "a short arithmetic question"},
        {.name = "extra",
         .kind = SG_OPT_STR,
         .out = &extra,
         .metavar = "JSON",
         .help = "object merged into each request body (e.g. logit_bias)"},
        {.name = "max-tokens",
         .kind = SG_OPT_INT,
         .out = &max_tokens,
         .metavar = "N",
         .help = "tokens for the full stream",
         .def = "64",
         .min = 1,
         .max = 1e6,
         .units = "tokens"},
        {.name = "abort-after",
         .kind = SG_OPT_INT,
         .out = &abort_after,
         .metavar = "N",
         .help = "tokens before the abort test closes its stream (0: skip)",
         .def = "5",
         .min = 0,
         .max = 1e6,
         .units = "tokens"},
        {.name = "first-token-timeout",
         .kind = SG_OPT_DURATION,
         .out = &timeout_ns,
         .metavar = "T",
         .help = "a stream with no token after T fails",
         .def = "60s",
         .deprecated = "timeout",
         .min = 1e6,
         .max = 86400e9},
        {.name = "idle-timeout",
         .kind = SG_OPT_DURATION,
         .out = &idle_ns,
         .metavar = "T",
         .help = "a stream with no token for T, once tokens flow, fails",
         .def = "--first-token-timeout",
         .min = 1e6,
         .max = 86400e9},
        {.name = "json",
         .kind = SG_OPT_FLAG,
         .out = &as_json,
         .help = "print one JSON object (for scripts)"},
        {0},
    };
    const sg_cmd_spec spec = {"llm-check",
                              "",
                              "Probe an OpenAI-compatible endpoint: dialect, speed, usage, abort.",
                              details,
                              opts,
                              0,
                              0};
    int rc = sg_cli_parse(&spec, argc, argv, NULL, NULL);
    if (rc) return rc == SG_CLI_HELP ? 0 : rc;
    if (!url) return sg_cli_fail(&spec, 2, "--llm URL is required (or $OPENAI_BASE_URL)");
    sg_err uerr;
    if (sg_llm_url_check(url, &uerr) < 0) return sg_cli_fail(&spec, 2, "--llm: %s", uerr.msg);
    sg_err err;
    if (extra) {
        json_t *x = json_loads(extra, 0, NULL);
        int is_obj = json_is_object(x);
        json_decref(x);
        if (!is_obj) return sg_cli_fail(&spec, 2, "--extra: '%s' is not a JSON object", extra);
    }
    char *model = model_opt ? sg_xstrdup(model_opt) : first_model(url, &err);
    if (!model) return sg_cli_fail(&spec, 1, "%s", err.msg);
    sg_loop *loop = sg_loop_new_real(&err);
    sg_curl_loop *cl = loop ? sg_curl_loop_new(loop, &err) : NULL;
    sg_llm_config cfg = {.urls = &url,
                         .n_urls = 1,
                         .first_token_timeout_ns = timeout_ns,
                         .first_token_option = "--first-token-timeout",
                         .idle_timeout_ns = idle_ns > 0 ? idle_ns : timeout_ns,
                         .max_retries = 2};
    sg_llm *llm = cl ? sg_llm_new(cl, &cfg, &err) : NULL;
    if (!llm) {
        sg_curl_loop_free(cl);
        sg_loop_free(loop);
        free(model);
        return sg_cli_fail(&spec, 1, "%s", err.msg);
    }
    if (!prompt)
        prompt = completions ? "Question: what is 17 * 23? Think step by step.\nAnswer:"
                             : "What is 17 * 23? Think briefly, then answer.";
    sg_llm_request req = {.api = completions ? SG_LLM_COMPLETIONS : SG_LLM_CHAT,
                          .model = model,
                          .user = prompt,
                          .prompt = prompt,
                          .max_tokens = max_tokens,
                          .temperature = 0,
                          .extra_json = extra,
                          .return_ids = 1};
    check full;
    run_stream(llm, loop, &req, 0, &full);
    json_t *j = json_object();
    put_stream(j, &full, url, completions, model);
    sg_buf verdict = {0}, forks = {0};
    if (!full.failed) fork_test(llm, loop, &full, url, model, j, &forks);
    req.return_ids = 0;
    if (!full.failed && abort_after > 0) abort_test(llm, loop, &req, abort_after, url, j, &verdict);
    sg_llm_free(llm);
    sg_curl_loop_free(cl);
    sg_loop_free(loop);
    if (as_json) {
        char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        printf("%s\n", s);
        free(s);
    } else {
        print_text(j, &full, completions, model, &verdict, &forks);
    }
    json_decref(j);
    sg_buf_free(&verdict);
    sg_buf_free(&forks);
    free(model);
    return full.failed ? 1 : 0;
}
