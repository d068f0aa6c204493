/* llm_floor.c — bench-llm's floor reader (llm_floor.h): epoll + recv, nothing else. */
#include "llm_floor.h"

#include "common/buf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct conn {
    int fd;
    int stream;    /* which stream's request it carries; -1: idle */
    int fork;      /* the request is a fork */
    int connected; /* the connect finished */
    int64_t events;
    char last;    /* the byte before this recv's first */
    char tail[7]; /* the response's last bytes: "\r\n0\r\n\r\n" ends it */
    sg_buf req;
    size_t req_off;
} conn;

typedef struct flr {
    const llm_floor_cfg *cfg;
    llm_floor_out *out;
    int ep;
    conn *c;
    int nc, capc;
    int pending; /* responses not finished */
    sg_buf text; /* the reasoning's text, made before the clock starts */
} flr;

static int64_t mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static double cpu_now(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

/* The request bytes libcurl sends for bench-llm's chat stream or fork (same body). */
static void request(flr *f, conn *c, int stream, int fork, int ntok) {
    sg_buf body = {0};
    if (fork) {
        sg_buf_append_str(&body, "{\"model\":\"bench\",\"prompt\":\"bench\\n<think>\\n");
        sg_buf_append(&body, f->text.data, (size_t)ntok * 6); /* " t0000 t0001 ..." */
        sg_buf_append_str(&body, "\\n</think>\\n\\n\",");
    } else {
        sg_buf_append_str(&body, "{\"model\":\"bench\",\"messages\":[{\"role\":\"user\","
                                 "\"content\":\"go\"}],");
        if (f->cfg->ids) sg_buf_append_str(&body, "\"return_token_ids\":true,");
    }
    sg_buf_printf(&body,
                  "\"stream\":true,\"stream_options\":{\"include_usage\":true,"
                  "\"continuous_usage_stats\":true},\"max_tokens\":%d}",
                  fork ? f->cfg->fork_tokens : f->cfg->tokens);
    sg_buf_clear(&c->req);
    sg_buf_printf(&c->req,
                  "POST /v1/%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: */*\r\n"
                  "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                  fork ? "completions" : "chat/completions", f->cfg->port, body.len);
    sg_buf_append(&c->req, body.data, body.len);
    sg_buf_free(&body);
    c->req_off = 0;
    c->stream = stream;
    c->fork = fork;
    c->events = 0;
    c->last = 0;
    memset(c->tail, 0, sizeof c->tail);
    f->pending++;
}

static int send_rest(flr *f, int i) {
    conn *c = &f->c[i];
    while (c->req_off < c->req.len) {
        ssize_t k = send(c->fd, c->req.data + c->req_off, c->req.len - c->req_off, MSG_NOSIGNAL);
        if (k < 0) return errno == EAGAIN ? 0 : -1;
        c->req_off += (size_t)k;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
    return epoll_ctl(f->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Start a request on an idle kept-alive connection, else on a new one. */
static int start(flr *f, int stream, int fork, int ntok) {
    for (int i = 0; i < f->nc; i++)
        if (f->c[i].stream < 0 && f->c[i].connected) {
            request(f, &f->c[i], stream, fork, ntok);
            return send_rest(f, i);
        }
    if (f->nc == f->capc) return fprintf(stderr, "bench-llm floor: too many connections\n"), -1;
    int i = f->nc++;
    conn *c = &f->c[i];
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)f->cfg->port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(c->fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS)
        return perror("bench-llm floor: connect"), -1;
    request(f, c, stream, fork, ntok);
    struct epoll_event ev = {.events = EPOLLOUT, .data.u32 = (uint32_t)i};
    return epoll_ctl(f->ep, EPOLL_CTL_ADD, c->fd, &ev);
}

/* Bytes of a response: count event ends, stamp a main stream's tokens (its first event
 * is the role, then one token an event), fork where bench-llm's client forks. */
static int on_bytes(flr *f, conn *c, const char *b, size_t n, int64_t now) {
    llm_floor_out *o = f->out;
    for (const char *p = b, *e = b + n; (p = memchr(p, '\n', (size_t)(e - p))); p++) {
        char prev = p > b ? p[-1] : c->last;
        if (prev != '\n') continue;
        c->events++, o->events++;
        int64_t k = c->events - 2; /* the token this event carries */
        if (c->fork || k < 0 || k >= f->cfg->tokens) continue;
        o->recv[c->stream][k] = now;
        o->n[c->stream] = (int)k + 1;
        o->tokens++;
        if ((k + 1) % f->cfg->fork_every == 0 && k + 1 < f->cfg->tokens) {
            if (start(f, c->stream, 1, (int)k + 1) < 0) return -1;
            o->forks++;
        }
    }
    c->last = b[n - 1];
    size_t keep = n < sizeof c->tail ? sizeof c->tail - n : 0;
    memmove(c->tail, c->tail + sizeof c->tail - keep, keep);
    memcpy(c->tail + keep, b + n - (sizeof c->tail - keep), sizeof c->tail - keep);
    if (!memcmp(c->tail, "\r\n0\r\n\r\n", 7)) c->stream = -1, f->pending--; /* idle now */
    return 0;
}

static int on_ready(flr *f, int i, uint32_t evs, int64_t now) {
    conn *c = &f->c[i];
    if (!c->connected && (evs & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
        int e = 0;
        socklen_t l = sizeof e;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &l);
        if (e) return fprintf(stderr, "bench-llm floor: connect: %s\n", strerror(e)), -1;
        c->connected = 1;
    }
    if (c->req_off < c->req.len) return send_rest(f, i);
    static char buf[65536];
    for (;;) {
        ssize_t k = recv(c->fd, buf, sizeof buf, 0);
        if (k < 0 && errno == EAGAIN) return 0;
        if (k <= 0) return fprintf(stderr, "bench-llm floor: the server hung up\n"), -1;
        if (c->stream >= 0 && on_bytes(f, c, buf, (size_t)k, now) < 0) return -1;
        if ((size_t)k < sizeof buf) return 0;
    }
}

static int run(flr *f, int64_t t0) {
    int next = 0; /* the next stream to start */
    struct epoll_event evs[512];
    while (next < f->cfg->streams || f->pending) {
        int64_t now = mono();
        while (next < f->cfg->streams && t0 + next * f->cfg->stagger_ns <= now)
            if (start(f, next++, 0, 0) < 0) return -1;
        int timeout = -1;
        if (next < f->cfg->streams)
            timeout = (int)((t0 + next * f->cfg->stagger_ns - now) / 1000000 + 1);
        int n = epoll_wait(f->ep, evs, 512, timeout);
        if (n < 0 && errno != EINTR) return perror("bench-llm floor: epoll_wait"), -1;
        f->out->wakes++;
        now = mono();
        for (int j = 0; j < n; j++)
            if (on_ready(f, (int)evs[j].data.u32, evs[j].events, now) < 0) return -1;
    }
    return 0;
}

int llm_floor_run(const llm_floor_cfg *cfg, llm_floor_out *out) {
    memset(out, 0, sizeof *out);
    out->recv = sg_xcalloc((size_t)cfg->streams, sizeof *out->recv);
    out->n = sg_xcalloc((size_t)cfg->streams, sizeof *out->n);
    for (int i = 0; i < cfg->streams; i++)
        out->recv[i] = sg_xcalloc((size_t)cfg->tokens, sizeof *out->recv[i]);
    flr f = {.cfg = cfg, .out = out, .ep = epoll_create1(EPOLL_CLOEXEC)};
    f.capc = cfg->streams * (2 + cfg->tokens / cfg->fork_every);
    f.c = sg_xcalloc((size_t)f.capc, sizeof *f.c);
    for (int i = 0; i < cfg->tokens; i++) sg_buf_printf(&f.text, " t%04d", i);
    double c0 = cpu_now();
    int64_t t0 = mono();
    int rc = run(&f, t0);
    out->wall_s = (double)(mono() - t0) / 1e9;
    out->cpu_s = cpu_now() - c0;
    for (int i = 0; i < f.nc; i++) close(f.c[i].fd), sg_buf_free(&f.c[i].req);
    free(f.c);
    sg_buf_free(&f.text);
    close(f.ep);
    return rc;
}
