#include "orchestrator/port_llm.h"
#include "common/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sg_gen {
    sg_llm_stream *stream;
    sg_gen_events ev;
};

/* The client's usage: the server's when it sent one, else its estimate from the text. */
static void summarize(const sg_llm_result *r, sg_gen_summary *s) {
    memset(s, 0, sizeof *s);
    s->prompt_tokens = (uint64_t)r->usage.prompt_tokens;
    s->reasoning_tokens = (uint64_t)r->usage.reasoning_tokens;
    s->content_tokens = r->usage.completion_tokens > r->usage.reasoning_tokens
                            ? (uint64_t)(r->usage.completion_tokens - r->usage.reasoning_tokens)
                            : 0;
    s->estimated = r->usage.estimated;
    s->cached_tokens = (uint64_t)r->usage.cached_tokens;
    s->cached_reported = r->usage.cached_reported;
    s->http_status = r->http_status;
    s->first_token_timeout = r->first_token_timeout;
    if (r->t_first_ns > r->t_start_ns) s->first_token_ns = r->t_first_ns - r->t_start_ns;
    snprintf(s->finish, sizeof s->finish, "%s", r->finish_reason[0] ? r->finish_reason : "stop");
}

static void on_reasoning(void *arg, const char *text, size_t len) {
    sg_gen *g = arg;
    int est = 1;
    uint64_t n = (uint64_t)sg_llm_live_tokens(g->stream, 1, &est);
    if (g->ev.reasoning) g->ev.reasoning(g->ev.arg, text, len, n, est);
}

static void on_content(void *arg, const char *text, size_t len) {
    sg_gen *g = arg;
    if (g->ev.content) g->ev.content(g->ev.arg, text, len);
}

static void on_finish(void *arg, const sg_llm_result *r) {
    sg_gen *g = arg;
    sg_gen_summary s;
    summarize(r, &s);
    sg_gen_events ev = g->ev;
    free(g); /* the stream is freed by llm.c when this returns */
    ev.done(ev.arg, &s);
}

static void on_error(void *arg, const char *msg, const sg_llm_result *r) {
    sg_gen *g = arg;
    sg_gen_summary s;
    summarize(r, &s);
    snprintf(s.finish, sizeof s.finish, "error");
    snprintf(s.error, sizeof s.error, "%s", msg);
    sg_gen_events ev = g->ev;
    free(g);
    ev.done(ev.arg, &s);
}

static sg_gen *start(sg_port_llm *pl, const sg_llm_request *req, const sg_gen_events *ev,
                     sg_err *err) {
    sg_gen *g = sg_xcalloc(1, sizeof *g);
    g->ev = *ev;
    sg_llm_callbacks cb = {on_reasoning, on_content, NULL, on_finish, on_error, g};
    g->stream = sg_llm_start(pl->llm, req, &cb, err);
    if (!g->stream) {
        free(g);
        return NULL;
    }
    return g;
}

static sg_gen *start_reasoning(void *impl, const char *system, const char *user,
                               const sg_gen_events *ev, sg_err *err) {
    sg_port_llm *pl = impl;
    sg_llm_request req = {.api = SG_LLM_CHAT,
                          .model = pl->model,
                          .system = system,
                          .user = user,
                          .max_tokens = pl->reasoning_max_tokens,
                          .temperature = pl->reasoning_temperature,
                          .top_p = pl->reasoning_top_p,
                          .think = SG_LLM_THINK_AUTO,
                          .priority = 0};
    return start(pl, &req, ev, err);
}

static sg_gen *start_fork(void *impl, const sg_fork_request *f, const sg_gen_events *ev,
                          sg_err *err) {
    sg_port_llm *pl = impl;
    sg_llm_request req = {.model = pl->model,
                          .max_tokens = f->max_tokens,
                          .temperature = f->temperature,
                          .top_p = f->top_p,
                          .stop = f->stop,
                          .nstop = f->nstop,
                          .think = SG_LLM_THINK_OFF,
                          .priority = 1};
    sg_buf text = {0}; /* the request copies it */
    if (pl->fork_mode == SG_FORK_CONTINUE) {
        sg_fork_assistant(f->tmpl, f->reasoning, f->reasoning_len, f->answer_prefix, &text);
        req.api = SG_LLM_CHAT;
        req.system = f->system;
        req.user = f->user;
        req.assistant = text.data;
    } else {
        sg_msg msgs[2] = {{"system", f->system}, {"user", f->user}};
        if (sg_fork_prompt(f->tmpl, msgs, 2, f->reasoning, f->reasoning_len, f->answer_prefix,
                           &text, err) < 0) {
            sg_buf_free(&text);
            return NULL;
        }
        req.api = SG_LLM_COMPLETIONS;
        req.prompt = text.data;
    }
    sg_gen *g = start(pl, &req, ev, err);
    sg_buf_free(&text);
    return g;
}

static void abort_gen(void *impl, sg_gen *g, sg_gen_summary *out) {
    sg_llm_result r;
    memset(&r, 0, sizeof r);
    sg_llm_abort(g->stream, &r);
    summarize(&r, out);
    snprintf(out->finish, sizeof out->finish, "client-abort");
    free(g);
}

void sg_port_llm_init(sg_port_llm *pl, sg_llm_port *port) {
    port->impl = pl;
    port->start_reasoning = start_reasoning;
    port->start_fork = start_fork;
    port->fork_room = NULL;
    port->abort = abort_gen;
}
