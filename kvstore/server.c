/* The server: listening socket, acceptor with the cron timer (active expiry), and the
 * I/O threads, each an epoll loop over its own connections. */
#include "kvstore/server.h"

#include "common/log.h"
#include "common/net.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define CRON_MS 100

/* Inside a request (part of one buffered, a value arriving) or with replies unsent. */
static int mid_request(const sg_kv_conn *c) {
    return c->rx_active || c->in.len > c->in_off || c->out_sent < c->out.len || c->ov_head < c->nov;
}

static void close_idle(sg_kv_io *io, int64_t now) {
    int64_t idle = io->srv->cfg.idle_timeout_ms, stalled = io->srv->cfg.request_timeout_ms;
    for (sg_kv_conn *c = io->conns, *next; c; c = next) {
        next = c->next;
        /* As in Redis, a client stalled inside a request or not reading its replies is
         * idle too; and such a client is closed after request_timeout_ms even when idle
         * clients are kept: what it holds (a value half received, replies pinning evicted
         * values) is freed. */
        int64_t quiet = now - c->last_ms;
        if ((idle > 0 && quiet > idle) || (stalled > 0 && quiet > stalled && mid_request(c))) {
            atomic_fetch_add(&io->srv->idle_closed, 1);
            sg_kv_conn_close(c);
        }
    }
}

static void adopt_incoming(sg_kv_io *io) {
    pthread_mutex_lock(&io->mu);
    sg_kv_conn *list = io->incoming;
    io->incoming = NULL;
    pthread_mutex_unlock(&io->mu);
    while (list) {
        sg_kv_conn *c = list;
        list = c->next;
        c->io = io;
        c->prev = NULL;
        c->next = io->conns;
        if (io->conns) io->conns->prev = c;
        io->conns = c;
        c->events = EPOLLIN;
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(io->epfd, EPOLL_CTL_ADD, c->fd, &e) != 0) sg_kv_conn_close(c);
    }
}

static void *io_main(void *arg) {
    sg_kv_io *io = arg;
    struct epoll_event evs[128];
    int64_t last_idle_check = sg_kv_now_ms();
    while (!atomic_load(&io->srv->stopping)) {
        int n = epoll_wait(io->epfd, evs, 128, 1000);
        for (int i = 0; i < n; i++) {
            if (evs[i].data.ptr == NULL) {
                uint64_t v;
                if (read(io->evfd, &v, sizeof v) < 0) {}
                adopt_incoming(io);
            } else {
                sg_kv_conn_event(evs[i].data.ptr, evs[i].events);
            }
        }
        int64_t now = sg_kv_now_ms();
        if (now - last_idle_check >= 1000) {
            close_idle(io, now);
            last_idle_check = now;
        }
    }
    adopt_incoming(io);
    while (io->conns) sg_kv_conn_close(io->conns);
    return NULL;
}

const char *sg_kv_server_describe(const sg_kv_server *s) { return s->describe; }
int sg_kv_server_port(const sg_kv_server *s) { return s->port; }

static int read_into_epoll(int epfd, int fd, uint64_t tag) {
    struct epoll_event e = {.events = EPOLLIN, .data.u64 = tag};
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e);
}

int sg_kv_server_start(const sg_kv_config *cfg, sg_kv_server **out, sg_err *err) {
    sg_kv_server *s = sg_xcalloc(1, sizeof *s);
    s->cfg = *cfg;
    if (!s->cfg.reply_limit) s->cfg.reply_limit = SG_KV_DEFAULT_REPLY_LIMIT;
    if (!s->cfg.request_timeout_ms) s->cfg.request_timeout_ms = SG_KV_DEFAULT_REQUEST_TIMEOUT_MS;
    s->lfd = s->stop_fd = s->timer_fd = s->epfd = -1;
    *out = NULL;
    if (cfg->io_threads < 1 || cfg->io_threads > 256) {
        sg_errf(err, "--io-threads: %d is not between 1 and 256", cfg->io_threads);
        goto fail;
    }
    if (cfg->maxclients < 1) {
        sg_errf(err, "--maxclients: %d is below 1", cfg->maxclients);
        goto fail;
    }
    if (sg_net_parse_hostport(cfg->listen, s->host, sizeof s->host, &s->port, err) != 0) {
        sg_err_prefix(err, "--listen");
        goto fail;
    }
    if (!sg_net_is_loopback(s->host) && !cfg->password) {
        sg_errf(err,
                "refusing to listen on %s without a password: anyone who can reach that "
                "address could read and overwrite the cache. Give --requirepass-file, or "
                "listen on 127.0.0.1",
                s->host);
        goto fail;
    }
    if (cfg->password) {
        s->password = sg_xstrdup(cfg->password);
        s->passlen = strlen(s->password);
    }
    if (sg_kv_backend_open(cfg->backend, cfg->memory, &s->be, err) != 0) goto fail;
    s->store = sg_kv_store_new(s->be, cfg->hash_seed);
    if (!s->store) {
        sg_errf(err, "--memory: the region is below one 1 MiB page");
        goto fail;
    }
    s->lfd = sg_net_listen_tcp(s->host, s->port, 511, err);
    if (s->lfd < 0) goto fail;
    s->port = sg_net_local_port(s->lfd);
    s->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    s->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    s->epfd = epoll_create1(EPOLL_CLOEXEC);
    struct itimerspec its = {{0, CRON_MS * 1000000L}, {0, CRON_MS * 1000000L}};
    if (s->stop_fd < 0 || s->timer_fd < 0 || s->epfd < 0 ||
        timerfd_settime(s->timer_fd, 0, &its, NULL) != 0 || read_into_epoll(s->epfd, s->lfd, 1) ||
        read_into_epoll(s->epfd, s->stop_fd, 2) || read_into_epoll(s->epfd, s->timer_fd, 3)) {
        sg_errf(err, "setting up the acceptor: %s", strerror(errno));
        goto fail;
    }
    s->start_ms = sg_kv_now_ms();
    s->nio = cfg->io_threads;
    s->ios = sg_xcalloc((size_t)s->nio, sizeof *s->ios);
    for (int i = 0; i < s->nio; i++) {
        s->ios[i].srv = s;
        s->ios[i].epfd = s->ios[i].evfd = -1;
        pthread_mutex_init(&s->ios[i].mu, NULL);
    }
    for (int i = 0; i < s->nio; i++) {
        sg_kv_io *io = &s->ios[i];
        io->epfd = epoll_create1(EPOLL_CLOEXEC);
        io->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = NULL};
        if (io->epfd < 0 || io->evfd < 0 || epoll_ctl(io->epfd, EPOLL_CTL_ADD, io->evfd, &e) ||
            pthread_create(&io->th, NULL, io_main, io) != 0) {
            sg_errf(err, "starting I/O thread %d: %s", i, strerror(errno));
            goto fail;
        }
        io->started = 1;
    }
    snprintf(s->describe, sizeof s->describe, "%s:%d, backend %s (%s), %llu MiB, %d I/O threads%s",
             s->host, s->port, s->be->name, s->be->detail,
             (unsigned long long)(s->be->capacity >> 20), s->nio,
             s->password ? ", password required" : "");
    *out = s;
    return 0;
fail:
    sg_kv_server_free(s);
    return -1;
}

static void accept_all(sg_kv_server *s) {
    for (;;) {
        int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
                sg_warn("kvstore", "accept: %s", strerror(errno));
            return;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        atomic_fetch_add(&s->total_conns, 1);
        if (atomic_load(&s->connected) >= (uint64_t)s->cfg.maxclients) {
            static const char msg[] = "-ERR max number of clients reached\r\n";
            if (write(fd, msg, sizeof msg - 1) < 0) {}
            close(fd);
            atomic_fetch_add(&s->rejected, 1);
            continue;
        }
        atomic_fetch_add(&s->connected, 1);
        sg_kv_conn *c = sg_kv_conn_new(s, fd);
        sg_kv_io *io = &s->ios[s->next_io++ % s->nio];
        pthread_mutex_lock(&io->mu);
        c->next = io->incoming;
        io->incoming = c;
        pthread_mutex_unlock(&io->mu);
        uint64_t one64 = 1;
        if (write(io->evfd, &one64, sizeof one64) < 0) {}
    }
}

/* Handle what the acceptor's epoll reports within timeout_ms (-1: wait). */
static int dispatch(sg_kv_server *s, int timeout_ms, sg_err *err) {
    struct epoll_event evs[8];
    int n = epoll_wait(s->epfd, evs, 8, timeout_ms);
    if (n < 0 && errno != EINTR) return sg_errf(err, "epoll_wait: %s", strerror(errno));
    for (int i = 0; i < n; i++) {
        if (evs[i].data.u64 == 1)
            accept_all(s);
        else if (evs[i].data.u64 == 2)
            atomic_store(&s->stopping, 1);
        else {
            uint64_t ticks;
            if (read(s->timer_fd, &ticks, sizeof ticks) < 0) {}
            sg_kv_store_lock(s->store);
            sg_kv_expire_cycle(s->store, 64, sg_kv_now_ms());
            sg_kv_store_unlock(s->store);
        }
    }
    return 0;
}

int sg_kv_server_run(sg_kv_server *s, sg_err *err) {
    if (s->loop) return sg_errf(err, "the kvstore is attached to a loop; it runs there");
    while (!atomic_load(&s->stopping))
        if (dispatch(s, -1, err) != 0) return -1;
    return 0;
}

static void on_ready(sg_loop *loop, int fd, unsigned events, void *arg) {
    (void)loop, (void)fd, (void)events;
    sg_kv_server *s = arg;
    sg_err err;
    if (dispatch(s, 0, &err) != 0) sg_warn("kvstore", "%s", err.msg);
    if (atomic_load(&s->stopping)) sg_kv_server_detach(s); /* sg_kv_server_stop was called */
}

int sg_kv_server_attach(sg_kv_server *s, sg_loop *loop, sg_err *err) {
    if (s->loop) return sg_errf(err, "the kvstore is already attached to a loop");
    if (sg_loop_fd_watch(loop, s->epfd, SG_EV_READ, on_ready, s, err) != 0) return -1;
    s->loop = loop;
    return 0;
}

void sg_kv_server_detach(sg_kv_server *s) {
    if (!s->loop) return;
    sg_loop_fd_unwatch(s->loop, s->epfd);
    s->loop = NULL;
}

int sg_kv_server_set_maxmemory(sg_kv_server *s, uint64_t bytes, sg_err *err) {
    sg_kv_store_lock(s->store);
    int rc = sg_kv_set_maxmemory(s->store, bytes, err);
    sg_kv_store_unlock(s->store);
    return rc;
}

void sg_kv_server_memory(sg_kv_server *s, sg_kv_memory *out) {
    sg_kv_stats st;
    sg_kv_store_lock(s->store);
    sg_kv_get_stats(s->store, &st);
    sg_kv_store_unlock(s->store);
    *out = (sg_kv_memory){.capacity = st.capacity,
                          .limit = st.maxmemory,
                          .used = st.used,
                          .released = st.released_bytes,
                          .keys = st.keys,
                          .hits = st.hits,
                          .misses = st.misses,
                          .evicted = st.evicted,
                          .connected = atomic_load(&s->connected),
                          .free_at_start = s->be->free_at_start};
}

void sg_kv_server_stop(sg_kv_server *s) {
    uint64_t one = 1;
    if (write(s->stop_fd, &one, sizeof one) < 0) {}
}

void sg_kv_server_free(sg_kv_server *s) {
    if (!s) return;
    sg_kv_server_detach(s);
    atomic_store(&s->stopping, 1);
    for (int i = 0; s->ios && i < s->nio; i++) {
        sg_kv_io *io = &s->ios[i];
        if (io->started) {
            uint64_t one = 1;
            if (write(io->evfd, &one, sizeof one) < 0) {}
            pthread_join(io->th, NULL);
        }
        if (io->epfd >= 0) close(io->epfd);
        if (io->evfd >= 0) close(io->evfd);
        pthread_mutex_destroy(&io->mu);
    }
    free(s->ios);
    if (s->lfd >= 0) close(s->lfd);
    if (s->stop_fd >= 0) close(s->stop_fd);
    if (s->timer_fd >= 0) close(s->timer_fd);
    if (s->epfd >= 0) close(s->epfd);
    sg_kv_store_free(s->store);
    if (s->be) s->be->ops->destroy(s->be);
    free(s->password);
    free(s);
}
