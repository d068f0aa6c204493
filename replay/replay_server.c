/* replay-llm's HTTP side: libmicrohttpd with one thread per connection, so a stream's
 * thread can wait for its next token (ppoll on the socket: a client that hangs up is
 * noticed at once) and write it the moment it is due. */
#include "replay/replay_impl.h"

#include "common/json.h"
#include "common/log.h"
#include "common/net.h"

#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- plain answers ---- */

static enum MHD_Result answer(struct MHD_Connection *c, unsigned code, const char *type,
                              const char *body, const char *retry_after) {
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(resp, "Content-Type", type);
    if (retry_after) MHD_add_response_header(resp, "Retry-After", retry_after);
    enum MHD_Result rc = MHD_queue_response(c, code, resp);
    MHD_destroy_response(resp);
    return rc;
}

static enum MHD_Result error(struct MHD_Connection *c, unsigned code, const char *msg,
                             const char *retry_after) {
    sg_buf b = {0};
    sg_buf_append_str(&b, "{\"error\":{\"message\":");
    sg_buf_append_json_string(&b, msg);
    sg_buf_printf(&b, ",\"type\":\"%s\",\"param\":null,\"code\":%u}}",
                  code == 429   ? "rate_limit_error"
                  : code >= 500 ? "server_error"
                                : "invalid_request_error",
                  code);
    enum MHD_Result rc = answer(c, code, "application/json", b.data, retry_after);
    sg_buf_free(&b);
    return rc;
}

static void models(sg_replay_server *s, sg_buf *b) {
    sg_buf_append_str(b, "{\"object\":\"list\",\"data\":[");
    for (size_t i = 0; i < s->ts->n; i++) {
        sg_buf_append_str(b, i ? ",{\"id\":" : "{\"id\":");
        sg_buf_append_json_string(b, s->ts->t[i].model);
        sg_buf_append_str(
            b, ",\"object\":\"model\",\"created\":1764460800,\"owned_by\":\"specgen-replay\"}");
    }
    sg_buf_append_str(b, "]}");
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void stats(sg_replay_server *s, sg_buf *b, int prometheus) {
    pthread_mutex_lock(&s->mu);
    if (prometheus) {
        const sg_dialect_info *di = &sg_dialects[s->cfg.dialect];
        const char *lab = di->labelled ? "{model_name=\"replay\"}" : "";
        sg_buf_printf(b, "%s%s %lld\n%s%s %lld\n", di->running, lab, (long long)s->running,
                      di->generated, lab, (long long)s->tokens);
        sg_buf_printf(b,
                      "specgen_replay_requests_total %lld\nspecgen_replay_disconnects_total %lld\n",
                      (long long)s->requests, (long long)s->disconnects);
        sg_replay_kv_metrics(s, b);
    } else {
        int64_t *v = sg_xmalloc((s->n_trig + 1) * sizeof *v);
        if (s->n_trig) memcpy(v, s->trig_us, s->n_trig * sizeof *v);
        qsort(v, s->n_trig, sizeof *v, cmp_i64);
        size_t n = s->n_trig;
        sg_buf_printf(
            b,
            "{\"dialect\":\"%s\",\"requests\":%lld,\"forks\":%lld,\"running\":%lld,\"tokens\":%lld,"
            "\"disconnects\":%lld,\"prompt_tokens\":%lld,\"cached_tokens\":%lld,"
            "\"trigger_to_request_us\":{\"n\":%zu,\"p50\":%lld,\"p99\":%lld,\"max\":%lld}}",
            sg_replay_dialect_name(s->cfg.dialect), (long long)s->requests, (long long)s->forks,
            (long long)s->running, (long long)s->tokens, (long long)s->disconnects,
            (long long)s->prompt_tokens, (long long)s->cached_tokens, n,
            (long long)(n ? v[n / 2] : 0), (long long)(n ? v[(n * 99) / 100] : 0),
            (long long)(n ? v[n - 1] : 0));
        free(v);
    }
    pthread_mutex_unlock(&s->mu);
}

/* ---- completions ---- */

static char *prompt_text(json_t *req, int chat) {
    sg_buf b = {0};
    if (!chat) {
        json_t *p = json_object_get(req, "prompt");
        if (json_is_array(p)) p = json_array_get(p, 0);
        sg_buf_append_str(&b, json_is_string(p) ? json_string_value(p) : "");
        return sg_buf_steal(&b);
    }
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(req, "messages"), i, m) {
        json_t *c = json_object_get(m, "content");
        if (json_is_string(c)) sg_buf_append_str(&b, json_string_value(c));
        size_t k;
        json_t *part;
        if (json_is_array(c)) json_array_foreach(c, k, part) {
                json_t *t = json_object_get(part, "text");
                if (json_is_string(t)) sg_buf_append_str(&b, json_string_value(t));
            }
        sg_buf_append_str(&b, "\n");
    }
    return sg_buf_steal(&b);
}

/* One JSON line per request, whole lines under the lock (streams run on many threads). */
static void log_request(sg_replay_server *s, int chat, const json_t *req) {
    if (!s->log) return;
    json_t *line = json_pack("{s:s,s:O}", "path", chat ? "/v1/chat/completions" : "/v1/completions",
                             "request", (json_t *)req);
    char *text = sg_json_dump(line);
    json_decref(line);
    pthread_mutex_lock(&s->mu);
    fprintf(s->log, "%s\n", text);
    fflush(s->log);
    pthread_mutex_unlock(&s->mu);
    free(text);
}

/* The NO_STREAM fault: the whole answer at once, as a server that ignores "stream". */
static enum MHD_Result not_streamed(sg_replay_rq *r, const sg_replay_trace *t, int chat) {
    json_t *choice =
        chat ? json_pack("{s:i, s:{s:s, s:s}, s:s}", "index", 0, "message", "role", "assistant",
                         "content", "(not streamed)", "finish_reason", "stop")
             : json_pack("{s:i, s:s, s:s}", "index", 0, "text", "(not streamed)", "finish_reason",
                         "stop");
    json_t *one = json_pack("{s:s, s:s, s:s, s:[o]}", "id", "replay-no-stream", "object",
                            chat ? "chat.completion" : "text_completion", "model", t->model,
                            "choices", choice);
    char *text = sg_json_dump(one);
    json_decref(one);
    enum MHD_Result rc = answer(r->conn, 200, "application/json", text, NULL);
    free(text);
    return rc;
}

/* --cached-prefix, under s->mu: what an earlier prompt (and what it streamed) already
 * holds of this one, counted by ids when the request has them, else in bytes / 4. */
static void cache_hit(sg_replay_server *s, sg_replay_rq *r, const char *prompt, size_t len) {
    int64_t shared = r->has_ids ? sg_replay_ids_cached(r)
                                : (int64_t)(sg_replay_prefix_seen(&s->seen, prompt, len) / 4);
    /* a server computes the last prompt token even when the whole prompt hits */
    if (shared >= r->fmt.prompt_tokens) shared = r->fmt.prompt_tokens - 1;
    r->fmt.cached_report = 1;
    r->fmt.cached_tokens = shared > 0 ? shared : 0;
}

/* Answer with the event stream that sg_replay_reader writes from r's plan. */
static enum MHD_Result start_stream(sg_replay_rq *r) {
    r->streaming = 1;
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, sg_replay_reader, r, NULL);
    MHD_add_response_header(resp, "Content-Type", "text/event-stream; charset=utf-8");
    MHD_add_response_header(resp, "Cache-Control", "no-cache");
    enum MHD_Result rc = MHD_queue_response(r->conn, 200, resp);
    MHD_destroy_response(resp);
    return rc;
}

static enum MHD_Result completion(sg_replay_server *s, sg_replay_rq *r, int chat) {
    if (s->cfg.fault.kind == SG_FAULT_NO_COMPLETIONS && !chat) /* a chat-only server */
        return error(r->conn, 404, "replay-llm fault: there is no /v1/completions here", NULL);
    sg_err err;
    json_t *req =
        sg_json_parse(r->body.data ? r->body.data : "", r->body.len, "request body", &err);
    if (req && json_is_object(req)) log_request(s, chat, req);
    if (!req || !json_is_object(req)) {
        json_decref(req);
        return error(r->conn, 400, req ? "request body must be a JSON object" : err.msg, NULL);
    }
    const char *model = NULL;
    int stream = 0;
    int64_t max_tokens = 0;
    json_t *so = NULL;
    if (sg_json_get_str(req, "model", 1, &model, "request", &err) < 0 ||
        sg_json_get_bool(req, "stream", 0, &stream, "request", &err) < 0 ||
        sg_json_get_int(req, "max_tokens", 0, &max_tokens, "request", &err) < 0 ||
        sg_json_get_int(req, "max_completion_tokens", 0, &max_tokens, "request", &err) < 0 ||
        sg_json_get_obj(req, "stream_options", 0, &so, "request", &err) < 0 ||
        (chat && !json_is_array(json_object_get(req, "messages")) &&
         sg_errf(&err, "request: \"messages\" must be an array")) ||
        (!chat && !json_object_get(req, "prompt") &&
         sg_errf(&err, "request: \"prompt\" is missing"))) {
        json_decref(req);
        return error(r->conn, 400, err.msg, NULL);
    }
    if (!stream) {
        json_decref(req);
        return error(r->conn, 400, "replay-llm streams only: set \"stream\": true", NULL);
    }
    char *prompt = prompt_text(req, chat);
    if (sg_replay_ids_request(r, req, chat, &prompt, &err) < 0) {
        free(prompt);
        json_decref(req);
        return error(r->conn, 400, err.msg, NULL);
    }
    const sg_replay_trace *t = sg_replay_select(s->ts, model, prompt);
    if (!t) {
        free(prompt);
        json_decref(req);
        return error(r->conn, 404, "no replay trace matches this model and prompt", NULL);
    }
    pthread_mutex_lock(&s->mu);
    int64_t nth = ++s->faulted;
    uint64_t id = ++s->next_id;
    pthread_mutex_unlock(&s->mu);
    const sg_replay_fault *f = &s->cfg.fault;
    r->fault_on = f->kind != SG_FAULT_NONE && (f->times == 0 || nth <= f->times);
    if (r->fault_on && (f->kind == SG_FAULT_429 || f->kind == SG_FAULT_503)) {
        free(prompt);
        json_decref(req);
        char ra[32];
        snprintf(ra, sizeof ra, "%lld", (long long)f->retry_after);
        return f->kind == SG_FAULT_429
                   ? error(r->conn, 429, "replay-llm fault: busy, retry later", ra)
                   : error(r->conn, 503, "replay-llm fault: service unavailable", NULL);
    }
    if (r->fault_on && f->kind == SG_FAULT_NO_STREAM) { /* a server that ignores "stream" */
        free(prompt);
        json_decref(req);
        return not_streamed(r, t, chat);
    }
    r->fmt.d = s->cfg.dialect;
    r->fmt.chat = chat;
    r->fmt.include_usage = json_is_true(json_object_get(so, "include_usage"));
    /* vLLM's running usage in every chunk (the hosted and other dialects have none). */
    r->fmt.continuous_usage =
        r->fmt.include_usage && json_is_true(json_object_get(so, "continuous_usage_stats")) &&
        (s->cfg.dialect == SG_DIALECT_VLLM || s->cfg.dialect == SG_DIALECT_RAW);
    if (r->fault_on && f->kind == SG_FAULT_IGNORE_MAX_TOKENS) max_tokens = 0;
    snprintf(r->fmt.id, sizeof r->fmt.id, "%s-replay%llu", chat ? "chatcmpl" : "cmpl",
             (unsigned long long)id);
    r->fmt.created = (long long)time(NULL);
    r->fmt.model = t->model;
    size_t prompt_len = strlen(prompt);
    r->fmt.prompt_tokens = (int64_t)(prompt_len / 4);
    int fork = sg_replay_plan(r, t, prompt, max_tokens);
    sg_replay_ids_plan(r, prompt);
    pthread_mutex_lock(&s->mu);
    if (s->cfg.cached_prefix) cache_hit(s, r, prompt, prompt_len);
    free(prompt);
    json_decref(req);
    s->prompt_tokens += r->fmt.prompt_tokens;
    s->cached_tokens += r->fmt.cached_tokens;
    s->requests++;
    s->forks += fork;
    s->running++;
    pthread_mutex_unlock(&s->mu);
    return start_stream(r);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls) {
    sg_replay_server *s = cls;
    sg_replay_rq *r = *con_cls;
    if (!r) {
        r = sg_xcalloc(1, sizeof *r);
        r->s = s;
        r->conn = c;
        r->arrival_ns = sg_replay_mono_ns();
        const char *trig = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Specgen-Trigger-Ns");
        if (trig) {
            int64_t t = strtoll(trig, NULL, 10), us = (r->arrival_ns - t) / 1000;
            pthread_mutex_lock(&s->mu);
            if (s->n_trig == s->cap_trig) {
                s->cap_trig = s->cap_trig ? 2 * s->cap_trig : 1024;
                s->trig_us = sg_xrealloc(s->trig_us, s->cap_trig * sizeof *s->trig_us);
            }
            s->trig_us[s->n_trig++] = us;
            pthread_mutex_unlock(&s->mu);
        }
        *con_cls = r;
        return MHD_YES;
    }
    if (*upload_size) {
        if (r->body.len + *upload_size > (8u << 20)) return MHD_NO;
        sg_buf_append(&r->body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    int get = !strcmp(method, "GET"), post = !strcmp(method, "POST");
    if (post && !strcmp(url, "/v1/chat/completions")) return completion(s, r, 1);
    if (post && !strcmp(url, "/v1/completions")) return completion(s, r, 0);
    sg_buf b = {0};
    enum MHD_Result rc;
    sg_err err;
    if (post && !strcmp(url, "/tokenize")) { /* vLLM's and SGLang's route */
        rc = sg_replay_tokenize(s, r->body.data, r->body.len, &b, &err) < 0
                 ? error(c, 400, err.msg, NULL)
                 : answer(c, 200, "application/json", b.data, NULL);
    } else if (get && !strcmp(url, "/v1/models")) {
        models(s, &b);
        rc = answer(c, 200, "application/json", b.data, NULL);
    } else if (get && !strcmp(url, "/v1/replay/stats")) {
        stats(s, &b, 0);
        rc = answer(c, 200, "application/json", b.data, NULL);
    } else if (get && !strcmp(url, "/metrics") && sg_dialects[s->cfg.dialect].running) {
        stats(s, &b, 1);
        rc = answer(c, 200, "text/plain; version=0.0.4", b.data, NULL);
    } else if (get && !strcmp(url, "/health")) {
        rc = answer(c, 200, "text/plain", "ok\n", NULL);
    } else {
        sg_buf_printf(&b, "replay-llm has no %s %s", method, url);
        rc = error(c, 404, b.data, NULL);
    }
    sg_buf_free(&b);
    return rc;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe) {
    sg_replay_server *s = cls;
    sg_replay_rq *r = *con_cls;
    if (!r) return;
    if (r->streaming) {
        int hung_up = r->gone || (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK &&
                                  !(r->fault_fired && s->cfg.fault.kind == SG_FAULT_DROP));
        pthread_mutex_lock(&s->mu);
        sg_replay_kv_release(r);
        s->running--;
        s->disconnects += hung_up;
        pthread_mutex_unlock(&s->mu);
        if (hung_up)
            sg_info("replay", "client hung up after %zu tokens; stream stopped", r->tokens);
    }
    sg_buf_free(&r->body);
    sg_buf_free(&r->out);
    free(r->steps);
    free(r->pids.v);
    free(r->ids.v);
    free(r);
    *con_cls = NULL;
}

/* Tokens are small writes: without TCP_NODELAY, Nagle holds each one back until the
 * client's delayed ACK (up to 200 ms on Linux). vLLM (uvicorn) sets it too. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_ctx,
                          enum MHD_ConnectionNotificationCode code) {
    if (code != MHD_CONNECTION_NOTIFY_STARTED) return;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    int one = 1;
    if (ci) setsockopt(ci->connect_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

sg_replay_server *sg_replay_start(const sg_replay_traces *ts, const sg_replay_config *cfg,
                                  sg_err *err) {
    if (!(cfg->speed > 0)) {
        sg_errf(err, "speed must be > 0 (got %g)", cfg->speed);
        return NULL;
    }
    FILE *log = NULL;
    if (cfg->log_requests && !(log = fopen(cfg->log_requests, "a"))) {
        sg_errf(err, "cannot open the request log '%s': %s", cfg->log_requests, strerror(errno));
        return NULL;
    }
    int fd = sg_net_listen_tcp(cfg->host ? cfg->host : "127.0.0.1", cfg->port, 1024, err);
    if (fd < 0) {
        if (log) fclose(log);
        return NULL;
    }
    sg_replay_server *s = sg_xcalloc(1, sizeof *s);
    s->log = log;
    s->ts = ts;
    s->cfg = *cfg;
    s->listen_fd = fd;
    s->port = sg_net_local_port(fd);
    pthread_mutex_init(&s->mu, NULL);
    s->d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, NULL,
        NULL, handler, s, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_NOTIFY_COMPLETED, completed, s,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_CONNECTION_LIMIT, (unsigned)4096,
        MHD_OPTION_THREAD_STACK_SIZE, (size_t)(256 * 1024), MHD_OPTION_END);
    if (!s->d) {
        close(fd);
        if (log) fclose(log);
        pthread_mutex_destroy(&s->mu);
        free(s);
        sg_errf(err, "libmicrohttpd could not start on port %d", cfg->port);
        return NULL;
    }
    return s;
}

int sg_replay_port(const sg_replay_server *s) { return s->port; }

void sg_replay_stop(sg_replay_server *s) {
    if (!s) return;
    MHD_stop_daemon(s->d);
    close(s->listen_fd);
    if (s->log) fclose(s->log);
    pthread_mutex_destroy(&s->mu);
    sg_replay_prefixes_free(&s->seen);
    sg_replay_ids_free(s);
    free(s->trig_us);
    free(s);
}
