/* One client connection: read, parse, receive big values into their slot, run
 * commands, and write replies (big values straight from the region). */
#include "kvstore/server.h"

#include "common/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MAX_IOV 64
#define READ_CHUNK (64 * 1024)

int64_t sg_kv_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

sg_kv_conn *sg_kv_conn_new(sg_kv_server *srv, int fd) {
    sg_kv_conn *c = sg_xcalloc(1, sizeof *c);
    c->fd = fd;
    c->srv = srv;
    c->id = atomic_fetch_add(&srv->next_id, 1) + 1;
    c->authed = srv->password == NULL;
    c->p.big_threshold = SG_KV_BIG_BULK;
    c->last_ms = sg_kv_now_ms();
    return c;
}

static int host_direct(const sg_kv_conn *c) { return c->srv->be->host_base != NULL; }

static char *ensure_stage(sg_kv_conn *c, char **win) {
    if (!*win) *win = c->srv->be->ops->stage_alloc(c->srv->be, SG_KV_STAGE);
    return *win;
}

static void drop_xvals(sg_kv_conn *c) {
    for (size_t i = 0; i < c->xcap; i++) {
        if (c->xvals[i]) sg_kv_val_unref(c->srv->store, c->xvals[i]);
        c->xvals[i] = NULL;
    }
}

void sg_kv_conn_close(sg_kv_conn *c) {
    sg_kv_store *st = c->srv->store;
    sg_kv_store_lock(st);
    drop_xvals(c);
    if (c->rx) sg_kv_val_unref(st, c->rx);
    for (size_t i = c->ov_head; i < c->nov; i++) sg_kv_val_unref(st, c->ov[i].val);
    sg_kv_store_unlock(st);
    if (c->io) {
        epoll_ctl(c->io->epfd, EPOLL_CTL_DEL, c->fd, NULL);
        if (c->prev)
            c->prev->next = c->next;
        else
            c->io->conns = c->next;
        if (c->next) c->next->prev = c->prev;
    }
    close(c->fd);
    if (c->stage) c->srv->be->ops->stage_free(c->srv->be, c->stage, SG_KV_STAGE);
    if (c->rx_stage) c->srv->be->ops->stage_free(c->srv->be, c->rx_stage, SG_KV_STAGE);
    atomic_fetch_sub(&c->srv->connected, 1);
    sg_buf_free(&c->in);
    sg_buf_free(&c->out);
    sg_kv_parse_free(&c->p);
    free(c->xvals);
    free(c->ov);
    free(c->name);
    free(c);
}

void sg_kv_conn_reply_val(sg_kv_ctx *x, sg_kv_val *v) {
    sg_kv_conn *c = x->c;
    sg_kv_reply_bulk_header(x->out, v->len);
    if (v->len <= SG_KV_INLINE_REPLY) {
        sg_buf_reserve(x->out, v->len + 2);
        sg_err err;
        if (sg_kv_val_read(x->st, v, 0, x->out->data + x->out->len, v->len, &err) != 0) {
            /* The header is out already; the connection cannot continue sanely. */
            sg_error("kvstore", "reading a value from the backend: %s", err.msg);
            c->dead = 1;
            return;
        }
        x->out->len += v->len;
    } else {
        if (c->nov == c->ovcap) {
            c->ovcap = c->ovcap ? c->ovcap * 2 : 8;
            c->ov = sg_xrealloc(c->ov, c->ovcap * sizeof *c->ov);
        }
        sg_kv_val_ref(v);
        c->ov[c->nov++] = (sg_kv_out_val){x->out->len, v, 0};
        c->ov_bytes += v->len;
    }
    sg_buf_append(x->out, "\r\n", 2);
}

/* ---- output ---- */

static int pending_output(const sg_kv_conn *c) {
    return c->out_sent < c->out.len || c->ov_head < c->nov;
}

/* Build the iovecs of what is to be sent next; staged values go through the stage
 * window one at a time. */
static int build_iov(sg_kv_conn *c, struct iovec *iov) {
    int k = 0;
    size_t pos = c->out_sent;
    for (size_t i = c->ov_head; i < c->nov && k < MAX_IOV; i++) {
        sg_kv_out_val *o = &c->ov[i];
        if (pos < o->at) {
            iov[k++] = (struct iovec){c->out.data + pos, o->at - pos};
            pos = o->at;
            if (k == MAX_IOV) return k;
        }
        if (host_direct(c)) {
            int n = sg_kv_val_iov(c->srv->store, o->val, o->sent, o->val->len - o->sent, iov + k,
                                  MAX_IOV - k);
            k += n;
            uint64_t covered = 0;
            for (int j = k - n; j < k; j++) covered += iov[j].iov_len;
            if (o->sent + covered < o->val->len) return k;
        } else {
            if (i != c->ov_head) return k;
            if (c->stage_sent == c->stage_len) {
                uint64_t n = o->val->len - o->sent;
                if (n > SG_KV_STAGE) n = SG_KV_STAGE;
                sg_err err;
                if (sg_kv_val_read(c->srv->store, o->val, o->sent, ensure_stage(c, &c->stage), n,
                                   &err) != 0) {
                    sg_error("kvstore", "reading a value from the backend: %s", err.msg);
                    c->dead = 1;
                    return 0;
                }
                c->stage_len = n;
                c->stage_sent = 0;
            }
            iov[k++] = (struct iovec){c->stage + c->stage_sent, c->stage_len - c->stage_sent};
            if (o->sent + (c->stage_len - c->stage_sent) < o->val->len) return k;
        }
    }
    if (k < MAX_IOV && pos < c->out.len)
        iov[k++] = (struct iovec){c->out.data + pos, c->out.len - pos};
    return k;
}

/* Account w bytes as sent; values sent whole go to done[]. Returns the bytes not yet
 * accounted for when done[] filled up (the caller releases those values and calls
 * again with the rest). */
static size_t advance(sg_kv_conn *c, size_t w, sg_kv_val **done, size_t *ndone, size_t maxdone) {
    while (w > 0) {
        sg_kv_out_val *o = c->ov_head < c->nov ? &c->ov[c->ov_head] : NULL;
        if (o && c->out_sent == o->at) {
            uint64_t take = o->val->len - o->sent < w ? o->val->len - o->sent : w;
            o->sent += take;
            c->ov_bytes -= take;
            if (!host_direct(c)) c->stage_sent += take;
            w -= take;
            if (o->sent == o->val->len) {
                done[(*ndone)++] = o->val;
                c->ov_head++;
                c->stage_len = c->stage_sent = 0;
                if (*ndone == maxdone) return w;
            }
        } else {
            size_t lim = o ? o->at : c->out.len;
            size_t take = lim - c->out_sent < w ? lim - c->out_sent : w;
            c->out_sent += take;
            w -= take;
        }
    }
    return 0;
}

static void release_done(sg_kv_conn *c, sg_kv_val **done, size_t *ndone) {
    if (!*ndone) return;
    sg_kv_store_lock(c->srv->store);
    for (size_t i = 0; i < *ndone; i++) sg_kv_val_unref(c->srv->store, done[i]);
    sg_kv_store_unlock(c->srv->store);
    *ndone = 0;
}

/* Write as much as the socket takes. */
static void flush_out(sg_kv_conn *c) {
    sg_kv_val *done[MAX_IOV];
    size_t ndone = 0;
    struct iovec iov[MAX_IOV];
    while (!c->dead && pending_output(c)) {
        int k = build_iov(c, iov);
        if (k == 0) break;
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)k};
        ssize_t w = sendmsg(c->fd, &m, MSG_NOSIGNAL); /* no SIGPIPE for the embedder */
        if (w < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) c->dead = 1;
            break;
        }
        /* One write may finish more values than done[] holds: release them whenever it
         * fills, so that advance() never starts with it full. */
        size_t left = (size_t)w;
        do {
            left = advance(c, left, done, &ndone, MAX_IOV);
            if (ndone == MAX_IOV) release_done(c, done, &ndone);
        } while (left > 0);
    }
    release_done(c, done, &ndone);
    if (!pending_output(c)) {
        c->out.len = c->out_sent = 0;
        c->nov = c->ov_head = 0;
    }
}

/* ---- input ---- */

static int backpressured(const sg_kv_conn *c) {
    return (c->out.len - c->out_sent) + c->ov_bytes > c->srv->cfg.reply_limit;
}

static void run_request(sg_kv_conn *c) {
    size_t n = c->p.nargs;
    if (n == 0) return;
    sg_kv_arg stackv[16], *argv = n <= 16 ? stackv : sg_xmalloc(n * sizeof *argv);
    const char *base = c->in.data + c->in_off;
    for (size_t i = 0; i < n; i++) {
        sg_kv_span *s = &c->p.args[i];
        argv[i] = s->external ? (sg_kv_arg){NULL, s->len, c->xvals[i]}
                              : (sg_kv_arg){base + s->off, s->len, NULL};
    }
    sg_kv_ctx x = {c, c->srv, c->srv->store, &c->out, sg_kv_now_ms()};
    atomic_fetch_add(&c->srv->total_cmds, 1);
    if (c->req_err[0])
        sg_kv_reply_error(&c->out, "%s", c->req_err);
    else
        sg_kv_exec(&x, (int)n, argv);
    c->req_err[0] = '\0';
    if (argv != stackv) free(argv);
    int any = 0;
    for (size_t i = 0; i < c->xcap && !any; i++) any = c->xvals[i] != NULL;
    if (any) {
        sg_kv_store_lock(c->srv->store);
        drop_xvals(c);
        sg_kv_store_unlock(c->srv->store);
    }
}

/* Finish an out-of-band value: hand it to the request's argument list. */
static void rx_done(sg_kv_conn *c) {
    if (c->rx_arg >= c->xcap) {
        size_t nc = c->xcap ? c->xcap : 8;
        while (nc <= c->rx_arg) nc *= 2;
        c->xvals = sg_xrealloc(c->xvals, nc * sizeof *c->xvals);
        memset(c->xvals + c->xcap, 0, (nc - c->xcap) * sizeof *c->xvals);
        c->xcap = nc;
    }
    c->xvals[c->rx_arg] = c->rx;
    c->rx = NULL;
    c->rx_active = 0;
    c->rx_discard = 0;
    c->rx_len = c->rx_got = 0;
    sg_kv_parse_external(&c->p);
}

/* The value being received cannot be kept (no room, or a lowered maxmemory dropped
 * it): the rest of its bytes are read and dropped and the request answers -OOM. Store
 * lock held. */
static void rx_drop(sg_kv_conn *c, const sg_err *why) {
    snprintf(c->req_err, sizeof c->req_err,
             "OOM command not allowed when used memory > 'maxmemory' (%s)", why->msg);
    if (c->rx) sg_kv_val_unref(c->srv->store, c->rx);
    c->rx = NULL;
    c->rx_discard = 1;
}

/* Room in the value for its bytes up to `upto`, reserved as they arrive so that an
 * unfinished request pins no more than it sent. 0: copy into it now (then rx_written);
 * -1: the value was dropped. */
static int rx_reserve(sg_kv_conn *c, uint64_t upto) {
    if (c->rx_discard) return -1;
    sg_err err;
    sg_kv_store_lock(c->srv->store);
    int rc = sg_kv_val_reserve(c->srv->store, c->rx, upto, &err);
    if (rc != 0) rx_drop(c, &err);
    sg_kv_store_unlock(c->srv->store);
    return rc;
}

static void rx_written(sg_kv_conn *c, uint64_t got) {
    sg_kv_store_lock(c->srv->store);
    if (sg_kv_val_written(c->srv->store, c->rx, got == c->rx_len) != 0) {
        sg_err err;
        sg_errf(&err, "maxmemory was lowered while the value arrived");
        rx_drop(c, &err);
    }
    sg_kv_store_unlock(c->srv->store);
}

/* Copy/write n bytes received for the out-of-band value (unless discarding). */
static int rx_store(sg_kv_conn *c, const char *src, size_t n) {
    if (rx_reserve(c, c->rx_got + n) == 0) {
        sg_err err;
        int rc = sg_kv_val_write(c->srv->store, c->rx, c->rx_got, src, n, &err);
        rx_written(c, c->rx_got + n);
        if (rc != 0) {
            sg_error("kvstore", "writing a value to the backend: %s", err.msg);
            c->dead = 1;
            return -1;
        }
    }
    c->rx_got += n;
    return 0;
}

/* Only the value arguments of SET and MSET go out of band: they are what gets stored. */
static int wants_external(const sg_kv_conn *c) {
    const char *base = c->in.data + c->in_off;
    sg_kv_span *a0 = &c->p.args[0];
    size_t i = c->p.nargs;
    if (i == 0 || a0->external) return 0;
    if (a0->len == 3 && strncasecmp(base + a0->off, "set", 3) == 0) return i == 2;
    if (a0->len == 4 && strncasecmp(base + a0->off, "mset", 4) == 0) return i >= 2 && i % 2 == 0;
    return 0;
}

static void start_external(sg_kv_conn *c) {
    uint64_t len = (uint64_t)c->p.bulk_len;
    sg_err err;
    sg_kv_store_lock(c->srv->store);
    c->rx = sg_kv_val_new_arriving(c->srv->store, len, &err);
    sg_kv_store_unlock(c->srv->store);
    c->rx_len = len;
    c->rx_got = 0;
    c->rx_arg = c->p.nargs;
    c->rx_discard = 0;
    c->rx_active = 1;
    if (!c->rx) {
        sg_kv_store_lock(c->srv->store);
        rx_drop(c, &err);
        sg_kv_store_unlock(c->srv->store);
    }
    /* The body's first bytes may be in the buffer already: move them over. */
    size_t have = c->in.len - c->in_off - c->p.pos;
    size_t take = have < len ? have : (size_t)len;
    char *body = c->in.data + c->in_off + c->p.pos;
    if (take && rx_store(c, body, take) != 0) return;
    memmove(body, body + take, have - take);
    c->in.len -= take;
    if (c->rx_got == c->rx_len) rx_done(c);
}

/* Parse and run what is buffered, until more input is needed. Returns 1 when it
 * stopped for back-pressure (buffered requests wait for the replies to drain). */
static int process(sg_kv_conn *c) {
    int paused = 0;
    while (!c->dead && !c->close_after && !c->rx_active && !(paused = backpressured(c))) {
        sg_err err;
        c->p.unauth = !c->authed; /* an unauthenticated client must not take memory */
        int r = sg_kv_parse(&c->p, c->in.data + c->in_off, c->in.len - c->in_off, &err);
        if (r == SG_KV_PARSE_MORE) break;
        if (r == SG_KV_PARSE_ERR) {
            sg_kv_reply_error(&c->out, "ERR %s", err.msg);
            c->close_after = 1;
            break;
        }
        if (r == SG_KV_PARSE_BIG) {
            if (wants_external(c))
                start_external(c);
            else
                sg_kv_parse_decline(&c->p);
            continue;
        }
        run_request(c);
        c->in_off += c->p.pos;
        sg_kv_parse_reset(&c->p);
    }
    if (c->in_off == c->in.len) c->in.len = c->in_off = 0;
    return paused;
}

/* Bytes the socket holds now (at least 1: a wake-up with none is an EOF or an error,
 * which the read then reports). */
static uint64_t socket_pending(int fd) {
    int n = 0;
    if (ioctl(fd, FIONREAD, &n) != 0 || n < 1) return 1;
    return (uint64_t)n;
}

/* Receive the out-of-band value; a few reads per wake-up while the socket has data. */
static void read_external(sg_kv_conn *c) {
    for (int round = 0; round < 8 && c->rx_active && !c->dead; round++) {
        uint64_t left = c->rx_len - c->rx_got, asked;
        ssize_t n;
        /* Region memory only for the bytes that are here (the last page partly ahead). */
        uint64_t avail = socket_pending(c->fd);
        if (host_direct(c) && rx_reserve(c, c->rx_got + (avail < left ? avail : left)) == 0) {
            struct iovec iov[MAX_IOV];
            int k = sg_kv_val_iov(c->srv->store, c->rx, c->rx_got, left, iov, MAX_IOV);
            asked = 0;
            for (int i = 0; i < k; i++) asked += iov[i].iov_len;
            n = readv(c->fd, iov, k);
            rx_written(c, c->rx_got + (n > 0 ? (uint64_t)n : 0));
            if (n > 0) c->rx_got += (uint64_t)n;
        } else {
            char *win = ensure_stage(c, &c->rx_stage);
            asked = left < SG_KV_STAGE ? left : SG_KV_STAGE;
            n = read(c->fd, win, asked);
            if (n > 0 && rx_store(c, win, (size_t)n) != 0) return;
        }
        if (n == 0)
            c->dead = 1;
        else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            c->dead = 1;
        if (c->rx_got == c->rx_len) rx_done(c);
        if (n < 0 || (uint64_t)n < asked) break; /* drained for now */
    }
}

static void read_input(sg_kv_conn *c) {
    if (c->in_off > 0) { /* the current request moves to the front */
        memmove(c->in.data, c->in.data + c->in_off, c->in.len - c->in_off);
        c->in.len -= c->in_off;
        c->in_off = 0;
    }
    size_t want = sg_kv_parse_want(&c->p);
    if (want > SG_KV_MAX_QUERY) {
        sg_kv_reply_error(&c->out, "ERR Protocol error: a request above 1 GiB was refused");
        c->close_after = 1;
        return;
    }
    size_t room = want > c->in.len ? want - c->in.len : 0;
    if (room < READ_CHUNK) room = READ_CHUNK;
    sg_buf_reserve(&c->in, room);
    ssize_t n = read(c->fd, c->in.data + c->in.len, c->in.cap - c->in.len - 1);
    if (n == 0)
        c->dead = 1;
    else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        c->dead = 1;
    if (n > 0) c->in.len += (size_t)n;
}

static void update_interest(sg_kv_conn *c) {
    uint32_t ev = 0;
    if (!c->close_after && (!backpressured(c) || c->rx_active)) ev |= EPOLLIN;
    if (pending_output(c)) ev |= EPOLLOUT;
    if (ev == c->events) return;
    struct epoll_event e = {.events = ev, .data.ptr = c};
    epoll_ctl(c->io->epfd, EPOLL_CTL_MOD, c->fd, &e);
    c->events = ev;
}

void sg_kv_conn_event(sg_kv_conn *c, uint32_t events) {
    c->last_ms = sg_kv_now_ms();
    if (events & (EPOLLERR | EPOLLHUP)) c->dead = !(events & EPOLLIN);
    int paused = 0;
    if (events & EPOLLOUT) {
        flush_out(c);
        paused = process(c); /* requests paused by back-pressure may run now */
    }
    if ((events & EPOLLIN) && !c->dead && !c->close_after) {
        if (c->rx_active) read_external(c);
        /* after a finished body, what follows it (CRLF, next requests) comes at once */
        if (!c->rx_active && !c->dead) read_input(c);
        paused = process(c);
    }
    if (!c->dead) flush_out(c);
    /* A fast reader may have drained the replies here: then no EPOLLOUT will come to
     * resume the paused requests, so they run now. */
    while (paused && !c->dead && !backpressured(c)) {
        paused = process(c);
        flush_out(c);
    }
    if (c->dead || (c->close_after && !pending_output(c))) {
        sg_kv_conn_close(c);
        return;
    }
    update_interest(c);
}
