#include "orchestrator/port_llm.h"
#include "common/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sg_gen {
    sg_llm_stream *stream;
    sg_gen_events ev;
    char form[8]; /* a fork's prompt: "ids" or "text" */
    uint64_t prefix_ids;
    char why[160];
};

static void put_form(const sg_gen *g, sg_gen_summary *s) {
    snprintf(s->prompt_form, sizeof s->prompt_form, "%s", g->form);
    s->prefix_ids = g->prefix_ids;
    snprintf(s->form_why, sizeof s->form_why, "%s", g->why);
}

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
    put_form(g, &s);
    sg_gen_events ev = g->ev;
    free(g); /* the stream is freed by llm.c when this returns */
    ev.done(ev.arg, &s);
}

static void on_error(void *arg, const char *msg, const sg_llm_result *r) {
    sg_gen *g = arg;
    sg_gen_summary s;
    summarize(r, &s);
    put_form(g, &s);
    snprintf(s.finish, sizeof s.finish, "error");
    snprintf(s.error, sizeof s.error, "%s", msg);
    sg_gen_events ev = g->ev;
    free(g);
    ev.done(ev.arg, &s);
}

static sg_gen *start(sg_port_llm *pl, sg_gen *g, const sg_llm_request *req, const sg_gen_events *ev,
                     sg_err *err) {
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
                          .return_ids = pl->ask_ids,
                          .priority = 0};
    return start(pl, sg_xcalloc(1, sizeof(sg_gen)), &req, ev, err);
}

/* The fork as ids: the reasoning stream's prompt and generated ids (exactly what the
 * server holds in its prefix cache), then the suffix's; 0, or -1 with g->why. */
static int fork_ids(sg_port_llm *pl, const sg_fork_request *f, sg_gen *g, int32_t **out,
                    size_t *n) {
    const int32_t *p, *gen;
    size_t np, ng;
    int64_t bytes;
    const char *why = pl->ids_off && pl->ids_off[0] ? pl->ids_off : NULL;
    const sg_port_llm_suffix *sfx = NULL;
    for (size_t i = 0; i < pl->n_suffixes && !why; i++) {
        const char *t = pl->suffixes[i].text, *tc = f->tmpl->think_close;
        size_t k = strlen(tc);
        if (!strncmp(t, tc, k) && !strcmp(t + k, f->answer_prefix)) sfx = &pl->suffixes[i];
    }
    if (!why && !pl->n_suffixes) why = "the fork's suffix ids are not back from /tokenize yet";
    if (!why && !sfx) why = "the fork's suffix (end of thinking + answer prefix) has no token ids";
    if (!why && (!f->parent || !f->parent->stream)) why = "the reasoning stream has ended";
    if (!why && sg_llm_stream_ids(f->parent->stream, &p, &np, &gen, &ng, &bytes, &why) == 0 &&
        bytes != (int64_t)f->reasoning_len)
        why = "the reasoning's token ids end elsewhere than its text";
    if (why) {
        snprintf(g->why, sizeof g->why, "%s", why);
        return -1;
    }
    *n = np + ng + sfx->n;
    *out = sg_xmalloc(*n * sizeof **out);
    memcpy(*out, p, np * sizeof *p);
    memcpy(*out + np, gen, ng * sizeof *gen);
    memcpy(*out + np + ng, sfx->ids, sfx->n * sizeof *sfx->ids);
    g->prefix_ids = (uint64_t)(np + ng);
    return 0;
}

static sg_gen *start_fork(void *impl, const sg_fork_request *f, const sg_gen_events *ev,
                          sg_err *err) {
    sg_port_llm *pl = impl;
    sg_gen *g = sg_xcalloc(1, sizeof *g);
    sg_llm_request req = {.model = pl->model,
                          .max_tokens = f->max_tokens,
                          .temperature = f->temperature,
                          .top_p = f->top_p,
                          .stop = f->stop,
                          .nstop = f->nstop,
                          .think = SG_LLM_THINK_OFF,
                          .priority = 1};
    sg_buf text = {0}; /* the request copies it */
    int32_t *ids = NULL;
    size_t nids = 0;
    snprintf(g->form, sizeof g->form, "text");
    if (fork_ids(pl, f, g, &ids, &nids) == 0) { /* completions in either mode: the ids carry
                                                  the server's own rendering */
        snprintf(g->form, sizeof g->form, "ids");
        req.api = SG_LLM_COMPLETIONS;
        req.prompt_ids = ids;
        req.n_prompt_ids = nids;
    } else if (pl->fork_mode == SG_FORK_CONTINUE) {
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
            free(g);
            return NULL;
        }
        req.api = SG_LLM_COMPLETIONS;
        req.prompt = text.data;
    }
    sg_gen *started = start(pl, g, &req, ev, err);
    sg_buf_free(&text);
    free(ids);
    return started;
}

static void abort_gen(void *impl, sg_gen *g, sg_gen_summary *out) {
    sg_llm_result r;
    memset(&r, 0, sizeof r);
    sg_llm_abort(g->stream, &r);
    summarize(&r, out);
    put_form(g, out);
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
