/* replay-llm's streams: the plan of what a request will stream (role, reasoning, answer,
 * finish, usage, each at its time) and the content reader that writes each chunk when
 * it is due, waiting in ppoll on the socket so that a client that hangs up is noticed
 * at once. Runs on the connection's own thread. */
#include "replay/replay_impl.h"

#include <microhttpd.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t sg_replay_mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- sg_replay_plan: the steps a request will stream ---- */

static void add(sg_replay_rq *r, int kind, const char *t, uint32_t len, int64_t at_us) {
    r->steps = sg_xrealloc(r->steps, (r->nsteps + 1) * sizeof *r->steps);
    r->steps[r->nsteps++] = (sg_replay_step){kind, t, len, at_us, 0, 0};
}

static void add_seq(sg_replay_rq *r, int kind, const sg_replay_seq *q, int64_t *at, int64_t first,
                    int64_t *budget) {
    for (size_t i = 0; i < q->n && *budget != 0; i++, (*budget)--) {
        *at += (r->tokens++ == 0 ? first : 0) + q->tok[i].dt_us;
        add(r, kind, q->tok[i].text, q->tok[i].len, *at);
    }
}

static void add_tag(sg_replay_rq *r, const char *tag, int64_t *at, int64_t first, int64_t *budget) {
    if (*budget == 0) return;
    (*budget)--;
    *at += r->tokens++ == 0 ? first : 0;
    add(r, SG_RF_CONTENT, tag, (uint32_t)strlen(tag), *at);
}

static const char *last_of(const char *hay, const char *needle, const char *before) {
    const char *found = NULL;
    for (const char *p = hay; (p = strstr(p, needle)) && (!before || p < before); p++) found = p;
    return found;
}

/* Plans the stream; returns 1 when the request is a fork. */
int sg_replay_plan(sg_replay_rq *r, const sg_replay_trace *t, const char *prompt,
                   int64_t max_tokens) {
    const char *close = last_of(prompt, "</think>", NULL), *lo = last_of(prompt, "<think>", NULL);
    const char *open = last_of(prompt, "<think>", close);
    int fork = close && (!lo || lo < close); /* the prompt closed the reasoning */
    int64_t at = 0, budget = max_tokens > 0 ? max_tokens : -1;
    int chat = r->fmt.chat, raw = r->fmt.d == SG_DIALECT_RAW || !chat;
    if (r->fmt.d == SG_DIALECT_DEEPSEEK) add(r, -1, ": keep-alive", 12, 0); /* while "queued" */
    if (chat) add(r, SG_RF_ROLE, "", 0, fork ? t->fork_first_token_us : t->first_token_us);
    r->tokens = 0;
    if (fork) {
        const char *from = open ? open + 7 : prompt;
        size_t n = sg_replay_prefix_tokens(t, from, (size_t)(close - from));
        const sg_replay_fork *f = sg_replay_fork_for(t, n);
        if (f) add_seq(r, SG_RF_CONTENT, &f->answer, &at, t->fork_first_token_us, &budget);
    } else {
        int opened = lo && (!close || close < lo);
        if (raw && !opened) add_tag(r, "<think>\n", &at, t->first_token_us, &budget);
        add_seq(r, raw ? SG_RF_CONTENT : SG_RF_REASONING, &t->reasoning, &at, t->first_token_us,
                &budget);
        r->fmt.reasoning_tokens = (int64_t)r->tokens;
        if (raw) add_tag(r, "\n</think>\n\n", &at, t->first_token_us, &budget);
        add_seq(r, SG_RF_CONTENT, &t->answer, &at, t->first_token_us, &budget);
    }
    r->fmt.completion_tokens = (int64_t)r->tokens;
    add(r, SG_RF_FINISH, "", 0, at);
    r->steps[r->nsteps - 1].text = budget == 0 ? "length" : "stop";
    if (r->fmt.include_usage) add(r, SG_RF_USAGE, "", 0, at);
    r->tokens = 0; /* from here on: tokens streamed */
    return fork;
}

/* ---- streaming ---- */

/* Wait until the loop-free monotonic deadline; -1 if the client hung up meanwhile. */
static int wait_until(sg_replay_rq *r, int64_t due_ns) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    for (;;) {
        int64_t now = sg_replay_mono_ns();
        if (now >= due_ns) return 0;
        int64_t left = due_ns - now;
        struct timespec ts = {left / 1000000000LL, left % 1000000000LL};
        struct pollfd p = {ci ? ci->connect_fd : -1, POLLRDHUP, 0};
        int n = ppoll(&p, 1, &ts, NULL);
        if (n > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) return -1;
    }
}

static void bump(sg_replay_server *s, int64_t *field, int64_t by) {
    pthread_mutex_lock(&s->mu);
    *field += by;
    pthread_mutex_unlock(&s->mu);
}

ssize_t sg_replay_reader(void *cls, uint64_t pos, char *buf, size_t max) {
    sg_replay_rq *r = cls;
    sg_replay_server *s = r->s;
    const sg_replay_fault *f = &s->cfg.fault;
    while (r->off >= r->out.len) {
        sg_buf_clear(&r->out);
        r->off = 0;
        if (r->next >= r->nsteps) {
            if (r->done_sent) return MHD_CONTENT_READER_END_OF_STREAM;
            sg_buf_append_str(&r->out, "data: [DONE]\n\n");
            r->done_sent = 1;
            continue;
        }
        sg_replay_step *st = &r->steps[r->next];
        int is_token = st->kind == SG_RF_REASONING || st->kind == SG_RF_CONTENT;
        if (r->fault_on && !r->fault_fired && is_token && (int64_t)r->tokens >= f->after) {
            r->fault_fired = 1;
            if (f->kind == SG_FAULT_DROP) return MHD_CONTENT_READER_END_WITH_ERROR;
            if (f->kind == SG_FAULT_STALL) r->stall_ns += f->ms * 1000000LL;
            if (f->kind == SG_FAULT_MALFORMED) {
                sg_buf_append_str(
                    &r->out, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tru\n\n");
                continue;
            }
            if (f->kind == SG_FAULT_ABORT) { /* the server gives up: SGLang says "abort" */
                while (r->next < r->nsteps && r->steps[r->next].kind != SG_RF_FINISH) r->next++;
                r->steps[r->next].text = "abort";
                r->fmt.completion_tokens = (int64_t)r->tokens;
                continue;
            }
        }
        if (is_token) sg_replay_kv_before_token(r); /* --kv-tokens: may be preempted first */
        int64_t due =
            r->arrival_ns + (int64_t)((double)st->at_us * 1000.0 / s->cfg.speed) + r->stall_ns;
        if (wait_until(r, due) < 0) {
            r->gone = 1;
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
        if (st->kind < 0) {
            sg_buf_append(&r->out, st->text, st->len);
            sg_buf_append_str(&r->out, "\n\n");
        } else {
            r->fmt.running_tokens = (int64_t)r->tokens + is_token;
            r->fmt.tok_ids = r->ids.v ? r->ids.v + st->id_off : NULL;
            r->fmt.n_tok_ids = r->fmt.return_ids ? st->id_n : 0;
            sg_replay_fmt_chunk(&r->out, &r->fmt, st->kind, st->text, st->len,
                                st->kind == SG_RF_FINISH ? st->text : NULL);
            r->fmt.n_prompt_ids = 0; /* the first chunk carried them */
            sg_replay_ids_streamed(r, st);
        }
        if (is_token) r->tokens++, bump(s, &s->tokens, 1);
        r->next++;
    }
    size_t n = r->out.len - r->off < max ? r->out.len - r->off : max;
    memcpy(buf, r->out.data + r->off, n);
    r->off += n;
    return (ssize_t)n;
}
