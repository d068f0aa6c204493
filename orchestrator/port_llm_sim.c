/* port_llm_sim.c — ports.h's LLM interface over sim/'s serving model, as port_llm.c is
 * over the real streaming client. */
#include "orchestrator/sim_run.h"

#include "orchestrator/calib.h"

#include "common/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sg_gen {
    sg_port_llm_sim *pl;
    sg_sim_gen *g;
    sg_gen_events ev;
    int fork, stream;
};

static void on_reasoning(void *arg, const char *text, size_t len, uint64_t tokens) {
    struct sg_gen *g = arg;
    if (g->stream == 0) g->pl->tokens = tokens;
    if (g->ev.reasoning) g->ev.reasoning(g->ev.arg, text, len, tokens, 0); /* the model counts */
}

static void on_content(void *arg, const char *text, size_t len) {
    struct sg_gen *g = arg;
    if (g->ev.content) g->ev.content(g->ev.arg, text, len);
}

static void on_done(void *arg, uint64_t reasoning, uint64_t content, uint64_t prompt,
                    uint64_t cached) {
    (void)cached;
    struct sg_gen *g = arg;
    sg_gen_summary s;
    memset(&s, 0, sizeof s);
    s.prompt_tokens = prompt;
    s.reasoning_tokens = reasoning;
    s.content_tokens = content;
    snprintf(s.finish, sizeof s.finish, "stop");
    sg_gen_events ev = g->ev;
    free(g); /* the model freed its generation before this call */
    if (ev.done) ev.done(ev.arg, &s);
}

static struct sg_gen *gen_new(sg_port_llm_sim *pl, const sg_gen_events *ev, int fork, int stream) {
    struct sg_gen *g = sg_xcalloc(1, sizeof *g);
    g->pl = pl;
    g->ev = *ev;
    g->fork = fork;
    g->stream = stream;
    return g;
}

/* The best kernel's quality in a prompt (its SIM_Q; the baseline has none: 0). */
static double prompt_q(const char *user) {
    const char *q = user ? strstr(user, "#define SIM_Q ") : NULL;
    return q ? atof(q + 14) : 0;
}

/* workers:N: the round the prompt names, the stream the next of that round. */
static sg_gen *start_round(sg_port_llm_sim *pl, const char *user, const sg_gen_events *ev) {
    const char *at = user ? strstr(user, "(iteration ") : NULL;
    int round = at ? atoi(at + 11) : 1;
    if (round < 1) round = 1;
    if (round > pl->nrounds) {
        pl->round_streams = sg_xrealloc(pl->round_streams, (size_t)round * sizeof(int));
        memset(pl->round_streams + pl->nrounds, 0, (size_t)(round - pl->nrounds) * sizeof(int));
        pl->nrounds = round;
    }
    sg_sim_llm_prompt_quality(pl->model, pl->task, round, prompt_q(user));
    struct sg_gen *g = gen_new(pl, ev, 0, pl->round_streams[round - 1]++);
    sg_sim_gen_cb cb = {on_reasoning, on_content, on_done, g};
    g->g = sg_sim_llm_reason(pl->model, pl->task, round, g->stream, &cb);
    return g;
}

static sg_gen *start_reasoning(void *impl, const char *system, const char *user,
                               const sg_gen_events *ev, sg_err *err) {
    (void)system, (void)err;
    sg_port_llm_sim *pl = impl;
    if (pl->by_round) return start_round(pl, user, ev);
    int64_t now = sg_loop_now(pl->loop);
    if (pl->iteration == 0 || now != pl->iteration_started) { /* parallel streams: one instant */
        pl->iteration++;
        pl->iteration_started = now;
        pl->streams = 0;
        pl->tokens = 0;
        /* the best kernel so far is in the prompt: the model reads its quality, as a real
         * model reads the kernel (the baseline has none: 0) */
        sg_sim_llm_prompt_quality(pl->model, pl->task, pl->iteration, prompt_q(user));
    }
    struct sg_gen *g = gen_new(pl, ev, 0, pl->streams++);
    sg_sim_gen_cb cb = {on_reasoning, on_content, on_done, g};
    g->g = sg_sim_llm_reason(pl->model, pl->task, pl->iteration, g->stream, &cb);
    return g;
}

/* A calibration's prefill probe (calib.h): a prefix no stream wrote, its words its tokens. */
static uint64_t probe_words(const sg_fork_request *req) {
    size_t n = strlen(SG_CALIB_PROBE_MARK);
    if (!req->reasoning || req->reasoning_len < n || memcmp(req->reasoning, SG_CALIB_PROBE_MARK, n))
        return 0;
    uint64_t w = 0;
    for (size_t i = 0; i < req->reasoning_len; i++) w += req->reasoning[i] == ' ';
    return w ? w : 1;
}

static sg_gen *start_fork(void *impl, const sg_fork_request *req, const sg_gen_events *ev,
                          sg_err *err) {
    (void)err;
    sg_port_llm_sim *pl = impl;
    struct sg_gen *g = gen_new(pl, ev, 1, 0);
    sg_sim_gen_cb cb = {NULL, on_content, on_done, g};
    uint64_t probe = probe_words(req);
    if (probe) /* no iteration -1: never cached */
        g->g = sg_sim_llm_fork(pl->model, pl->task, -1, 0, probe, &cb);
    else
        g->g = sg_sim_llm_fork(pl->model, pl->task, pl->iteration, 0, pl->tokens, &cb);
    return g;
}

static void abort_gen(void *impl, sg_gen *gen, sg_gen_summary *out) {
    (void)impl;
    struct sg_gen *g = gen;
    uint64_t r = 0, c = 0;
    sg_sim_llm_abort(g->pl->model, g->g, &r, &c);
    if (out) {
        memset(out, 0, sizeof *out);
        out->reasoning_tokens = r;
        out->content_tokens = c;
        snprintf(out->finish, sizeof out->finish, "client-abort");
    }
    free(g);
}

void sg_port_llm_sim_fini(sg_port_llm_sim *pl) {
    free(pl->round_streams);
    pl->round_streams = NULL;
    pl->nrounds = 0;
}

void sg_port_llm_sim_init(sg_port_llm_sim *pl, sg_llm_port *port) {
    port->impl = pl;
    port->start_reasoning = start_reasoning;
    port->start_fork = start_fork;
    port->abort = abort_gen;
    port->fork_room = NULL;
}
