/* calib_ramp.c — the decode rate against concurrency, then prefill probes (calib.h). */
#include "orchestrator/calib.h"

#include "common/buf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rstream {
    sg_calib_ramp *r;
    sg_gen *gen;
    int64_t t0, t1;  /* its first and last event in the window */
    uint64_t n0, n1; /* tokens then */
    int64_t first;   /* its first event */
    int64_t started;
    uint64_t reasoning, content; /* tokens so far: the reasoning's count, answer chunks */
    int over;
} rstream;

struct sg_calib_ramp {
    sg_calib_ramp_config c;
    json_t *rows;
    rstream *s;
    int n, live;
    double last_total;
    int probe, probe_rep;
    int64_t probe_started, probe_first;
    sg_buf filler;
    char why[300]; /* how the stream that ended the step ended */
    int finished;
};

static void next_step(sg_calib_ramp *r);
static void start_probe(sg_calib_ramp *r);

static void finish(sg_calib_ramp *r, const char *error) {
    if (r->finished) return;
    r->finished = 1;
    r->c.done(r->c.arg, r->rows, error);
}

/* The step is over (every stream measured): its row, then the next step or the probes. */
static void step_done(sg_calib_ramp *r) {
    double sum = 0, sum2 = 0, first = 0, tokens = 0, secs = 0;
    int m = 0;
    for (int i = 0; i < r->n; i++) {
        rstream *s = &r->s[i];
        if (s->t1 <= s->t0 || s->n1 <= s->n0) continue;
        double sec = (double)(s->t1 - s->t0) / 1e9;
        double rate = (double)(s->n1 - s->n0) / sec;
        sum += rate;
        sum2 += rate * rate;
        tokens += (double)(s->n1 - s->n0);
        secs += sec;
        first += (double)(s->first - s->started) / 1e6;
        m++;
    }
    int all = 1;
    for (int i = 0; i < r->n; i++) all &= r->s[i].first != 0;
    if (m && all) {
        double mean = sum / m, var = m > 1 ? (sum2 - m * mean * mean) / (m - 1) : 0;
        json_array_append_new(
            r->rows, json_pack("{s:s,s:i,s:f,s:f,s:f,s:f,s:f}", "kind", "decode", "streams", r->n,
                               "tokens", tokens, "seconds", secs / m, "tok_s", mean, "tok_s_sd",
                               var > 0 ? sqrt(var) : 0.0, "first_token_ms", first / m));
    }
    double total = m ? sum / m * r->n : 0;
    int started = 0;
    for (int i = 0; i < r->n; i++) started += r->s[i].first != 0;
    int grew = m && total > 1.1 * r->last_total && started == r->n;
    if (started < r->n) /* the server queues streams: its concurrency is below n */
        fprintf(stderr,
                "calibrate: the rate ramp stops at %d streams: the server started %d of them "
                "before the first ended (it serves fewer at once)%s%s\n",
                r->n, started, r->why[0] ? "; it ended: " : "", r->why);
    r->why[0] = '\0';
    r->last_total = total;
    free(r->s);
    r->s = NULL;
    if (grew && r->n * 2 <= r->c.max_streams) {
        r->n *= 2;
        next_step(r);
    } else {
        start_probe(r);
    }
}

static void step_timer(sg_loop *loop, void *arg) {
    (void)loop;
    step_done(arg);
}

/* Every stream has its first token: the window starts for all at the latest of them; a
 * stream's window ends when the first stream has `tokens` tokens in it. */
static void stop_all(sg_calib_ramp *r) {
    for (int i = 0; i < r->n; i++) {
        rstream *s = &r->s[i];
        s->over = 1;
        if (s->gen) {
            sg_gen_summary gs;
            r->c.llm->abort(r->c.llm->impl, s->gen, &gs);
            s->gen = NULL;
            r->live--;
        }
    }
}

/* A stream's tokens so far (reasoning and answer: a model without reasoning answers only). */
static void on_tokens(rstream *s, uint64_t tokens) {
    sg_calib_ramp *r = s->r;
    if (s->over) return;
    int64_t now = sg_loop_now(r->c.loop);
    if (!s->first) s->first = now;
    int all = 1;
    for (int i = 0; i < r->n; i++) all &= r->s[i].first != 0;
    if (!all) return;
    if (!s->t0) { /* its first event in the window */
        s->t0 = now;
        s->n0 = tokens;
        return;
    }
    s->t1 = now;
    s->n1 = tokens;
    if (tokens - s->n0 >= r->c.tokens) {
        stop_all(r);
        sg_loop_timer(r->c.loop, 0, step_timer, r); /* not inside the stream's callback */
    }
}

static void on_reasoning(void *arg, const char *text, size_t len, uint64_t tokens, int est) {
    (void)text, (void)len, (void)est;
    rstream *s = arg;
    s->reasoning = tokens;
    on_tokens(s, s->reasoning + s->content);
}

/* An answer chunk: one token (servers stream a token a chunk; an estimate otherwise). */
static void on_content(void *arg, const char *text, size_t len) {
    (void)text, (void)len;
    rstream *s = arg;
    s->content++;
    on_tokens(s, s->reasoning + s->content);
}

static void on_stream_done(void *arg, const sg_gen_summary *sum) {
    rstream *s = arg;
    sg_calib_ramp *r = s->r;
    s->gen = NULL;
    if (!s->over && !r->why[0]) /* the stream that ended the step: how */
        snprintf(r->why, sizeof r->why, "%s after %llu tokens%s%s", sum->finish,
                 (unsigned long long)(s->reasoning + s->content), sum->error[0] ? ": " : "",
                 sum->error);
    r->live--;
    if (!s->over) { /* a stream ended before the window was full: measure what there is */
        stop_all(r);
        sg_loop_timer(r->c.loop, 0, step_timer, r);
    }
}

static void next_step(sg_calib_ramp *r) {
    r->s = sg_xcalloc((size_t)r->n, sizeof *r->s);
    sg_gen_events ev = {on_reasoning, on_content, on_stream_done, NULL};
    for (int i = 0; i < r->n; i++) {
        rstream *s = &r->s[i];
        s->r = r;
        s->started = sg_loop_now(r->c.loop);
        ev.arg = s;
        sg_err err;
        if (!(s->gen =
                  r->c.llm->start_reasoning(r->c.llm->impl, r->c.system, r->c.user, &ev, &err))) {
            stop_all(r);
            free(r->s);
            r->s = NULL;
            finish(r, err.msg);
            return;
        }
        r->live++;
    }
}

/* ---- prefill probes: a fork of filler reasoning, each size twice ---- */
static void probe_content(void *arg, const char *text, size_t len) {
    (void)text, (void)len;
    sg_calib_ramp *r = arg;
    if (!r->probe_first) r->probe_first = sg_loop_now(r->c.loop);
}

static void probe_done(void *arg, const sg_gen_summary *s) {
    sg_calib_ramp *r = arg;
    int64_t first = s->first_token_ns ? s->first_token_ns
                    : r->probe_first  ? r->probe_first - r->probe_started
                                      : 0;
    if (!s->error[0] && first > 0)
        json_array_append_new(
            r->rows, json_pack("{s:s,s:i,s:I,s:o,s:I,s:f}", "kind", "prefill", "streams", 1,
                               "prompt_tokens", (json_int_t)s->prompt_tokens, "cached_tokens",
                               s->cached_reported ? json_integer((json_int_t)s->cached_tokens)
                                                  : json_integer(r->probe_rep),
                               "tokens", (json_int_t)s->content_tokens, "first_token_ms",
                               (double)first / 1e6));
    if (++r->probe_rep == 2) r->probe_rep = 0, r->probe++;
    start_probe(r);
}

static void start_probe(sg_calib_ramp *r) {
    if (r->probe >= r->c.nprobe || !r->c.fork) {
        finish(r, NULL);
        return;
    }
    static const char *const w[] = {" the", " tile", " load", " row", " sum", " store"};
    if (r->probe_rep == 0) { /* a new text, unlike any prompt before: nothing of it cached */
        sg_buf_clear(&r->filler);
        sg_buf_printf(&r->filler, "%s %d %lld:", SG_CALIB_PROBE_MARK, r->probe,
                      (long long)sg_loop_now(r->c.loop));
        for (uint64_t i = 0; i < r->c.probe_tokens[r->probe]; i++)
            sg_buf_append_str(&r->filler, w[(i * 7 + (uint64_t)r->probe) % 6]);
    }
    sg_fork_request req = *r->c.fork;
    req.reasoning = r->filler.data;
    req.reasoning_len = r->filler.len;
    req.max_tokens = 8;
    sg_gen_events ev = {NULL, probe_content, probe_done, r};
    r->probe_started = sg_loop_now(r->c.loop);
    r->probe_first = 0;
    sg_err err;
    if (!r->c.llm->start_fork(r->c.llm->impl, &req, &ev, &err)) finish(r, err.msg);
}

sg_calib_ramp *sg_calib_ramp_start(const sg_calib_ramp_config *c, sg_err *err) {
    if (c->max_streams < 1 || c->tokens < 1) {
        sg_errf(err, "calibrate: the ramp needs at least 1 stream and 1 token");
        return NULL;
    }
    sg_calib_ramp *r = sg_xcalloc(1, sizeof *r);
    r->c = *c;
    r->rows = json_array();
    r->n = 1;
    next_step(r);
    return r;
}

void sg_calib_ramp_free(sg_calib_ramp *r) {
    if (!r) return;
    if (r->s) stop_all(r);
    free(r->s);
    json_decref(r->rows);
    sg_buf_free(&r->filler);
    free(r);
}
