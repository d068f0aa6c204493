/* The stream lifecycle: queue → attempt (curl transfer) → deltas → finish / retry /
 * error, and abort. libcurl forbids adding or removing transfers from inside its
 * callbacks, so while one runs (llm->in_curl) starts and aborts are deferred to the
 * loop's next step. */
#include "llm/llm_impl.h"

#include "common/log.h"
#include "common/redact.h"
#include "llm/llm_chunk.h"

#include <stdlib.h>
#include <string.h>

static void attempt(sg_llm_stream *s);
static void pump_queue(sg_llm *llm);

/* A stream waits for an endpoint slot (queued) or not; llm->n_queued counts them so that
 * pump_queue looks through the list only when one waits. */
static void set_queued(sg_llm_stream *s, int q) {
    s->llm->n_queued += q - s->queued;
    s->queued = q;
}

static void release_ep(sg_llm_stream *s) {
    if (s->ep) s->ep->running--;
    s->ep = NULL;
}

static void stream_free(sg_llm_stream *s) {
    sg_llm *llm = s->llm;
    if (s->prev)
        s->prev->next = s->next;
    else
        llm->head = s->next;
    if (s->next) s->next->prev = s->prev;
    llm->active--;
    set_queued(s, 0);
    sg_loop_timer_cancel(llm->loop, s->timer);
    if (s->easy) curl_easy_cleanup(s->easy);
    curl_slist_free_all(s->headers);
    free(s->body);
    free(s->body_noids);
    sg_llm_ids_free(&s->ids);
    sg_buf_free(&s->errbody);
    sg_sse_free(&s->sse);
    sg_buf_free(&s->scan);
    sg_llm_think_free(&s->think);
    free(s);
}

static void detach(sg_llm_stream *s) {
    if (s->attached) sg_curl_loop_remove(s->llm->cl, s->easy);
    s->attached = 0;
    release_ep(s);
}

static void fill_result(sg_llm_stream *s, sg_llm_result *r) {
    *r = s->res;
    r->t_end_ns = sg_loop_now(s->llm->loop);
    r->dialect = sg_llm_dialect_name(s->features);
    r->http_status = (int)s->status;
    r->events = (int64_t)s->sse.events;
    r->prompt_ids = (int64_t)s->ids.n_prompt;
    r->gen_ids = (int64_t)s->ids.n_gen;
    if (!s->saw_usage) { /* estimated from the text: see sg_llm_estimate_tokens */
        r->usage.prompt_tokens = (int64_t)(s->prompt_bytes / 4);
        r->usage.reasoning_tokens =
            sg_llm_estimate_tokens(s->res.reasoning_bytes, s->res.reasoning_chunks);
        r->usage.completion_tokens =
            r->usage.reasoning_tokens +
            sg_llm_estimate_tokens(s->res.content_bytes, s->res.content_chunks);
        r->usage.estimated = 1;
    } else if (s->live_usage && !r->usage.reasoning_tokens) {
        r->usage.reasoning_tokens = s->live_reasoning; /* vLLM's running usage has none */
    }
    if (s->cut) snprintf(r->finish_reason, sizeof r->finish_reason, "length");
}

/* Ends a stream that is not inside a curl callback: one final callback, then free. */
static void end_stream(sg_llm_stream *s, const char *errmsg) {
    sg_llm *llm = s->llm;
    detach(s);
    s->dead = 1;
    sg_llm_result r;
    fill_result(s, &r);
    if (errmsg) {
        if (s->cb.error) s->cb.error(s->cb.arg, errmsg, &r);
    } else if (s->cb.finish) {
        s->cb.finish(s->cb.arg, &r);
    }
    stream_free(s);
    pump_queue(llm);
}

/* ---- end of an attempt ---- */

static int retryable(sg_llm_stream *s, CURLcode rc) {
    if (s->res.t_first_ns || s->fail_msg[0]) return 0;
    if (rc == CURLE_OK) return s->status == 429 || s->status >= 500;
    return rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
           rc == CURLE_OPERATION_TIMEDOUT || rc == CURLE_GOT_NOTHING || rc == CURLE_RECV_ERROR ||
           rc == CURLE_SEND_ERROR || rc == CURLE_PARTIAL_FILE;
}

static void on_retry_timer(sg_loop *loop, void *arg) {
    sg_llm_stream *s = arg;
    s->timer = 0;
    attempt(s);
}

static void on_done(sg_curl_loop *cl, CURL *easy, CURLcode rc, void *arg) {
    sg_llm_stream *s = arg;
    sg_llm *llm = s->llm;
    s->attached = 0;
    if (s->dead) return; /* aborted inside a callback: reap() frees it */
    sg_loop_timer_cancel(llm->loop, s->timer);
    s->timer = 0;
    if (s->cut) { /* cut at max_tokens by the client: a normal end, as "length" */
        end_stream(s, NULL);
        return;
    }
    if (rc == CURLE_OK && s->status == 200 && !s->fail_msg[0]) {
        llm->in_curl++; /* a callback that aborts this stream must not free it under us */
        sg_llm_think_flush(&s->think, sg_llm_emit, s);
        llm->in_curl--;
        if (s->dead) return;
        if (s->saw_done || s->res.finish_reason[0]) {
            end_stream(s, NULL);
            return;
        }
        if (!sg_llm_is_sse_type(s->content_type)) /* e.g. a server that ignores "stream" */
            snprintf(s->fail_msg, sizeof s->fail_msg,
                     "the server answered with Content-Type %s, not text/event-stream (a stream "
                     "was asked for); the answer begins: %s",
                     s->content_type, s->errbody.data ? s->errbody.data : "");
        else
            sg_llm_fail_later(s, "%s after %lld tokens",
                              "the stream ended without [DONE] or a finish_reason");
    }
    if (rc == CURLE_OK && sg_llm_ids_refused(s)) { /* the same request without the field */
        s->ep->no_ids = 1;
        s->res.ids_refused = 1;
        sg_debug("llm", "%s%s refused return_token_ids: sent again without it (forks go as text)",
                 s->ep->shown, s->url_path);
        release_ep(s);
        attempt(s);
        return;
    }
    int max = llm->cfg.max_retries;
    if (retryable(s, rc) && s->res.attempts <= max) {
        int64_t delay = s->status == 429 && s->retry_after_ns
                            ? s->retry_after_ns
                            : sg_llm_route_backoff(llm, s->res.attempts);
        /* Sideline a refusing endpoint past this retry (and at least a second), so the
         * retry goes to another one when there is one. */
        if (rc != CURLE_OK && s->ep)
            s->ep->down_until = sg_loop_now(llm->loop) + delay + (delay > SG_SEC ? delay : SG_SEC);
        sg_warn("llm", "%s%s: %s; retry %d of %d in %lld ms", s->ep ? s->ep->shown : "",
                s->url_path,
                rc != CURLE_OK     ? curl_easy_strerror(rc)
                : s->status == 429 ? "HTTP 429 (busy)"
                                   : "HTTP 5xx",
                s->res.attempts, max, (long long)(delay / SG_MS));
        release_ep(s);
        s->timer = sg_loop_timer(llm->loop, delay, on_retry_timer, s);
        pump_queue(llm);
        return;
    }
    char msg[1400];
    const char *where = s->ep ? s->ep->shown : "";
    if (s->fail_msg[0])
        snprintf(msg, sizeof msg, "%s%s: %s", where, s->url_path, s->fail_msg);
    else if (rc != CURLE_OK)
        snprintf(msg, sizeof msg, "%s%s: %s after %lld tokens (%d attempts)", where, s->url_path,
                 curl_easy_strerror(rc),
                 (long long)(s->res.reasoning_chunks + s->res.content_chunks), s->res.attempts);
    else
        snprintf(msg, sizeof msg, "%s%s: HTTP %ld (%d attempts): %.300s", where, s->url_path,
                 s->status, s->res.attempts, s->errbody.data ? s->errbody.data : "");
    end_stream(s, msg);
}

/* "300 s", "1.5 s": the timeouts as a person typed them (to a tenth of a second). */
static const char *secs(int64_t ns, char *buf, size_t n) {
    snprintf(buf, n, "%g s", (double)((ns + SG_SEC / 20) / (SG_SEC / 10)) / 10);
    return buf;
}

/* The first "no token yet" warning: 10 s, or half the timeout when that is shorter; then
 * one every 30 s until the timeout. */
static int64_t first_warning_ns(const sg_llm *llm) {
    int64_t half = llm->cfg.first_token_timeout_ns / 2;
    return half < 10 * SG_SEC ? half : 10 * SG_SEC;
}

static void warn_no_token(sg_llm_stream *s, int64_t now) {
    const sg_llm_config *c = &s->llm->cfg;
    const char *opt = c->first_token_option;
    char waited[32], limit[32];
    sg_warn("llm",
            "%s%s: no token yet after %s (the server took the request and has sent nothing); "
            "the first-token timeout of %s%s%s%s ends the stream",
            s->ep ? s->ep->shown : "", s->url_path,
            secs(now - s->attempt_ns, waited, sizeof waited),
            secs(c->first_token_timeout_ns, limit, sizeof limit), opt ? " (" : "", opt ? opt : "",
            opt ? ")" : "");
}

/* First-token and idle watchdog: one timer, re-armed to the nearest of the deadline and
 * (before the first token) the next warning. */
static void on_watchdog(sg_loop *loop, void *arg) {
    sg_llm_stream *s = arg;
    sg_llm *llm = s->llm;
    s->timer = 0;
    int64_t now = sg_loop_now(loop);
    char msg[700];
    const char *where = s->ep ? s->ep->shown : "";
    if (!s->res.t_first_ns) {
        int64_t deadline = s->attempt_ns + llm->cfg.first_token_timeout_ns;
        if (now < deadline) {
            if (now >= s->warn_ns) {
                warn_no_token(s, now);
                s->warn_ns += 30 * SG_SEC;
            }
            s->timer = sg_loop_timer_at(loop, s->warn_ns < deadline ? s->warn_ns : deadline,
                                        on_watchdog, s);
            return;
        }
        const char *opt = llm->cfg.first_token_option;
        char limit[32];
        snprintf(msg, sizeof msg,
                 "%s%s: no token within the first-token timeout of %s%s%s%s (the server took the "
                 "request and sent nothing)",
                 where, s->url_path, secs(llm->cfg.first_token_timeout_ns, limit, sizeof limit),
                 opt ? " (" : "", opt ? opt : "", opt ? ")" : "");
        s->res.first_token_timeout = 1;
    } else {
        int64_t deadline = s->last_byte_ns + llm->cfg.idle_timeout_ns;
        if (now < deadline) {
            s->timer = sg_loop_timer_at(loop, deadline, on_watchdog, s);
            return;
        }
        snprintf(msg, sizeof msg, "%s%s: no data within the idle timeout after %lld tokens", where,
                 s->url_path, (long long)(s->res.reasoning_chunks + s->res.content_chunks));
    }
    end_stream(s, msg);
}

void sg_llm_watchdog_idle(sg_llm_stream *s) {
    if (!s->attached) return; /* no watchdog outside an attempt */
    sg_loop_timer_cancel(s->llm->loop, s->timer);
    s->timer = sg_loop_timer_at(s->llm->loop, s->last_byte_ns + s->llm->cfg.idle_timeout_ns,
                                on_watchdog, s);
}

/* ---- start of an attempt ---- */

static void attempt(sg_llm_stream *s) {
    sg_llm *llm = s->llm;
    sg_llm_endpoint *ep = sg_llm_route_pick(llm);
    if (!ep) {
        set_queued(s, 1);
        return;
    }
    set_queued(s, 0);
    s->ep = ep;
    ep->running++;
    s->res.attempts++;
    s->res.endpoint = ep->shown;
    s->status = 0;
    s->fail_msg[0] = '\0';
    sg_buf_clear(&s->errbody);
    sg_sse_reset(&s->sse);
    char url[1024];
    snprintf(url, sizeof url, "%s%s", ep->base, s->url_path);
    CURL *e = s->easy;
    curl_easy_setopt(e, CURLOPT_URL, url);
    const char *body = s->body_noids && ep->no_ids ? s->body_noids : s->body;
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, s->headers);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, sg_llm_on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, s);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, sg_llm_on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, s);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(llm->cfg.connect_timeout_ns / SG_MS));
    if (s->trigger_ns > 0) {
        curl_easy_setopt(e, CURLOPT_DEBUGFUNCTION, sg_llm_on_debug);
        curl_easy_setopt(e, CURLOPT_DEBUGDATA, s);
        curl_easy_setopt(e, CURLOPT_VERBOSE, 1L);
    }
    sg_err err;
    if (sg_curl_loop_add(llm->cl, e, on_done, s, &err) < 0) {
        end_stream(s, err.msg);
        return;
    }
    s->attached = 1;
    s->attempt_ns = s->last_byte_ns = sg_loop_now(llm->loop);
    s->warn_ns = s->attempt_ns + first_warning_ns(llm);
    s->timer = sg_loop_timer_at(llm->loop, s->warn_ns, on_watchdog, s);
    if (!llm->in_curl) { /* a fork's bytes go out now, not after every ready socket */
        llm->in_curl++;  /* the kick may end transfers: their callbacks must not re-enter */
        sg_curl_loop_kick(llm->cl);
        llm->in_curl--;
    }
}

static void launch_deferred(sg_loop *loop, void *arg) {
    sg_llm_stream *s = arg;
    if (!s->dead) attempt(s);
}

static void reap(sg_loop *loop, void *arg) {
    sg_llm_stream *s = arg;
    sg_llm *llm = s->llm;
    detach(s);
    stream_free(s);
    pump_queue(llm);
}

static void pump_deferred(sg_loop *loop, void *arg) {
    sg_llm *llm = arg;
    llm->pump_pending = 0;
    pump_queue(llm);
}

static void pump_queue(sg_llm *llm) {
    if (llm->in_curl) {
        if (!llm->pump_pending) sg_loop_defer(llm->loop, pump_deferred, llm);
        llm->pump_pending = 1;
        return;
    }
    while (llm->n_queued) {
        sg_llm_stream *best = NULL;
        for (sg_llm_stream *s = llm->head; s; s = s->next)
            if (s->queued && !s->dead && (!best || s->priority >= best->priority)) best = s;
        if (!best || !sg_llm_route_pick(llm)) return;
        attempt(best);
    }
}

/* ---- public ---- */

sg_llm *sg_llm_new(sg_curl_loop *cl, const sg_llm_config *cfg, sg_err *err) {
    if (!cfg->n_urls) {
        sg_errf(err, "no LLM endpoint URL given");
        return NULL;
    }
    sg_llm *llm = sg_xcalloc(1, sizeof *llm);
    llm->cl = cl;
    llm->loop = sg_curl_loop_loop(cl);
    llm->cfg = *cfg;
    sg_llm_config *c = &llm->cfg;
    if (!c->connect_timeout_ns) c->connect_timeout_ns = 10 * SG_SEC;
    if (!c->first_token_timeout_ns) c->first_token_timeout_ns = 300 * SG_SEC;
    if (!c->idle_timeout_ns) c->idle_timeout_ns = 120 * SG_SEC;
    if (c->max_retries == 0) c->max_retries = 4;
    if (c->max_retries < 0) c->max_retries = 0;
    if (!c->backoff_ns) c->backoff_ns = 250 * SG_MS;
    if (!c->backoff_max_ns) c->backoff_max_ns = 20 * SG_SEC;
    llm->rng = c->seed ? c->seed : 0x9e3779b97f4a7c15ull;
    c->urls = NULL; /* borrowed only during this call */
    llm->eps = sg_xcalloc(cfg->n_urls, sizeof *llm->eps);
    llm->n_eps = cfg->n_urls;
    for (size_t i = 0; i < cfg->n_urls; i++) {
        if (!(llm->eps[i].base = sg_llm_route_base(cfg->urls[i], err))) {
            sg_llm_free(llm);
            return NULL;
        }
        llm->eps[i].shown = sg_redact_url(llm->eps[i].base);
    }
    const char *key = cfg->api_key;
    if (!key || !*key) key = getenv("SPECGEN_API_KEY");
    if (!key || !*key) key = getenv("OPENAI_API_KEY");
    c->api_key = NULL;
    if (key && *key) {
        sg_buf h = {0};
        sg_buf_printf(&h, "Authorization: Bearer %s", key);
        llm->auth_header = sg_buf_steal(&h);
    }
    return llm;
}

void sg_llm_free(sg_llm *llm) {
    if (!llm) return;
    while (llm->head) {
        detach(llm->head);
        stream_free(llm->head);
    }
    for (size_t i = 0; i < llm->n_eps; i++) {
        free(llm->eps[i].base);
        free(llm->eps[i].shown);
    }
    free(llm->eps);
    if (llm->auth_header) explicit_bzero(llm->auth_header, strlen(llm->auth_header));
    free(llm->auth_header);
    free(llm);
}

size_t sg_llm_active(const sg_llm *llm) { return llm->active; }

int sg_llm_endpoint_running(const sg_llm *llm, size_t i) {
    return i < llm->n_eps ? llm->eps[i].running : 0;
}

sg_llm_stream *sg_llm_start(sg_llm *llm, const sg_llm_request *req, const sg_llm_callbacks *cb,
                            sg_err *err) {
    char *body = sg_llm_body(req, 1, err);
    if (!body) return NULL;
    sg_llm_stream *s = sg_xcalloc(1, sizeof *s);
    s->llm = llm;
    s->body = body;
    if (req->return_ids) s->body_noids = sg_llm_body(req, 0, err);
    s->easy = curl_easy_init();
    if (!s->easy) {
        free(body);
        free(s);
        sg_errf(err, "curl_easy_init failed");
        return NULL;
    }
    s->url_path = req->api == SG_LLM_CHAT ? "/chat/completions" : "/completions";
    s->cb = *cb;
    s->priority = req->priority;
    s->max_tokens = req->max_tokens;
    s->trigger_ns = req->trigger_ns;
    s->prompt_bytes = req->api == SG_LLM_CHAT ? strlen(req->user)
                      : req->prompt_ids       ? 4 * req->n_prompt_ids
                                              : strlen(req->prompt);
    if (req->api == SG_LLM_CHAT && req->system) s->prompt_bytes += strlen(req->system);
    s->headers = curl_slist_append(NULL, "Content-Type: application/json");
    s->headers = curl_slist_append(s->headers, "Accept: text/event-stream");
    s->headers = curl_slist_append(s->headers, "Expect:"); /* no 100-continue round trip */
    if (llm->auth_header) s->headers = curl_slist_append(s->headers, llm->auth_header);
    if (req->trigger_ns > 0) {
        char h[64];
        snprintf(h, sizeof h, "X-Specgen-Trigger-Ns: %lld", (long long)req->trigger_ns);
        s->headers = curl_slist_append(s->headers, h);
    }
    sg_sse_init(&s->sse, sg_llm_on_event, sg_llm_on_comment, s);
    sg_llm_think_init(&s->think, req->think);
    s->res.t_start_ns = sg_loop_now(llm->loop);
    s->next = llm->head;
    if (llm->head) llm->head->prev = s;
    llm->head = s;
    llm->active++;
    if (llm->in_curl)
        sg_loop_defer(llm->loop, launch_deferred, s);
    else
        attempt(s);
    return s;
}

sg_llm_stream *sg_llm_fork(sg_llm *llm, const char *model, const char *prompt, int64_t max_tokens,
                           const sg_llm_callbacks *cb, sg_err *err) {
    sg_llm_request req = {.api = SG_LLM_COMPLETIONS,
                          .model = model,
                          .prompt = prompt,
                          .max_tokens = max_tokens,
                          .temperature = -1,
                          .think = SG_LLM_THINK_OFF,
                          .priority = 1};
    return sg_llm_start(llm, &req, cb, err);
}

int64_t sg_llm_estimate_tokens(int64_t bytes, int64_t chunks) {
    int64_t by_text = (bytes + 3) / 4;
    return by_text > chunks ? by_text : chunks;
}

int64_t sg_llm_live_tokens(const sg_llm_stream *s, int reasoning, int *estimated) {
    if (estimated) *estimated = !s->live_usage;
    if (s->live_usage) return reasoning ? s->live_reasoning : s->res.usage.completion_tokens;
    int64_t r = sg_llm_estimate_tokens(s->res.reasoning_bytes, s->res.reasoning_chunks);
    return reasoning ? r : r + sg_llm_estimate_tokens(s->res.content_bytes, s->res.content_chunks);
}

void sg_llm_abort(sg_llm_stream *s, sg_llm_result *out) {
    if (!s || s->dead) return;
    sg_llm *llm = s->llm;
    s->dead = 1;
    sg_loop_timer_cancel(llm->loop, s->timer);
    s->timer = 0;
    if (out) {
        fill_result(s, out);
        snprintf(out->finish_reason, sizeof out->finish_reason, "client-abort");
    }
    if (llm->in_curl) {
        release_ep(s); /* the slot is free now; the transfer goes right after this callback */
        sg_loop_defer(llm->loop, reap, s);
        return;
    }
    detach(s);
    stream_free(s);
    pump_queue(llm);
}
