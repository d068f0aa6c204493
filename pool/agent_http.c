/* The agent's HTTP server: libmicrohttpd in external-epoll mode on the loop.
 *
 * Why this mode: MHD keeps every socket in one epoll set of its own; the loop watches that
 * one fd and calls MHD_run when it is readable, and a loop timer follows MHD_get_timeout.
 * So request handlers run on the loop thread, beside the slots' callbacks, and touch the
 * job table without locks — the scheduler stays on one thread, as everywhere in specgen.
 * (MHD's own thread would need every handler to hop to the loop and back.) A long-poll is
 * a suspended connection, resumed when an event arrives or its wait ends; resuming signals
 * MHD's inter-thread pipe, which sits in the same epoll set.
 *
 * Checks made here, before the job table sees a request: the bearer token (constant-time
 * compare; 401 and nothing else happens), the declared and the received body size (413).
 *
 * Slow clients: each connection has a deadline (request_timeout) for the headers and body
 * of its next request, from its start or the previous answer; past it, the socket is shut
 * down and MHD closes the connection. MHD's own idle timeout is the same value (it covers
 * a client that stops reading an answer). A long-poll is suspended after its request was
 * read whole, so neither clock runs while it waits. One address holds at most
 * max_conns_per_addr connections (MHD closes any more at once), so a flood from one
 * address leaves the rest of max_conns to others. MHD's own messages go to our log at
 * debug level; without debug, one warning a minute says how many there were. */
#include "pool/agent.h"

#include "common/log.h"
#include "common/net.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* One TCP connection (MHD's socket context): the deadline of the request being read. */
typedef struct conn {
    struct sg_agent_http *h;
    struct MHD_Connection *mc;
    uint64_t deadline; /* loop timer; 0 while no request is being read */
} conn;

typedef struct req {
    struct sg_agent_http *h;
    struct MHD_Connection *conn;
    sg_buf body;
    int too_big, refused, suspended, expired;
    uint64_t timer;
    struct req *prev, *next; /* suspended ones */
} req;

struct sg_agent_http {
    sg_loop *loop;
    sg_agent *a;
    struct MHD_Daemon *d;
    int listen_fd, epoll_fd, port;
    uint64_t timer;
    int run_pending;
    char *token;
    size_t token_len, max_body;
    char *cert, *key;
    void (*handle)(void *arg, const sg_agent_request *req, sg_agent_reply *out);
    void *handle_arg;
    char *name, *token_opt;
    req *waiting;
    int64_t request_timeout;
    int64_t mhd_warned; /* when the last warning about MHD's messages went out */
    uint64_t mhd_quiet; /* MHD's messages since then, not shown */
    uint64_t timed_out; /* connections closed at their deadline since mhd_warned */
};

static void run_mhd(struct sg_agent_http *h);

static void run_cb(sg_loop *loop, void *arg) {
    (void)loop;
    struct sg_agent_http *h = arg;
    h->timer = 0;
    h->run_pending = 0;
    run_mhd(h);
}

/* MHD acts, then its next timeout becomes a loop timer. */
static void run_mhd(struct sg_agent_http *h) {
    MHD_run(h->d);
    MHD_UNSIGNED_LONG_LONG ms;
    if (h->timer) sg_loop_timer_cancel(h->loop, h->timer);
    h->timer = 0;
    if (MHD_get_timeout(h->d, &ms) == MHD_YES)
        h->timer = sg_loop_timer(h->loop, (int64_t)(ms > 60000 ? 60000 : ms) * SG_MS, run_cb, h);
}

static void on_epoll(sg_loop *loop, int fd, unsigned ev, void *arg) {
    (void)loop, (void)fd, (void)ev;
    run_mhd(arg);
}

/* Resumed connections are served at the next MHD_run: ask for one from the loop. */
static void run_soon(struct sg_agent_http *h) {
    if (h->run_pending) return;
    h->run_pending = 1;
    sg_loop_defer(h->loop, run_cb, h);
}

static void unlink_req(req *r) {
    struct sg_agent_http *h = r->h;
    if (r->prev) r->prev->next = r->next;
    if (r->next) r->next->prev = r->prev;
    if (h->waiting == r) h->waiting = r->next;
    r->prev = r->next = NULL;
}

static void resume(req *r) {
    struct sg_agent_http *h = r->h;
    if (!r->suspended) return;
    r->suspended = 0;
    if (r->timer) sg_loop_timer_cancel(h->loop, r->timer);
    r->timer = 0;
    unlink_req(r);
    MHD_resume_connection(r->conn);
    run_soon(h);
}

static void wait_over(sg_loop *loop, void *arg) {
    (void)loop;
    req *r = arg;
    r->timer = 0;
    r->expired = 1;
    resume(r);
}

static void on_event(void *arg) {
    struct sg_agent_http *h = arg;
    while (h->waiting) resume(h->waiting);
}

/* ---- connections and their deadlines ---- */
static const char *peer(struct MHD_Connection *mc, char *buf, size_t n) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    snprintf(buf, n, "?");
    if (sa && sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, (socklen_t)n);
    else if (sa && sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf, (socklen_t)n);
    return buf;
}

/* The request was not read whole in time: shut the socket, MHD sees it and closes it. */
static void deadline_over(sg_loop *loop, void *arg) {
    (void)loop;
    conn *k = arg;
    k->deadline = 0;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(k->mc, MHD_CONNECTION_INFO_CONNECTION_FD);
    char who[64];
    sg_debug(k->h->name, "closing a connection from %s: no whole request within %.3g s",
             peer(k->mc, who, sizeof who), (double)k->h->request_timeout / SG_SEC);
    k->h->timed_out++;
    if (ci) shutdown(ci->connect_fd, SHUT_RDWR);
    run_soon(k->h);
}

static void deadline_set(conn *k, int on) {
    if (k->deadline) sg_loop_timer_cancel(k->h->loop, k->deadline);
    k->deadline = on ? sg_loop_timer(k->h->loop, k->h->request_timeout, deadline_over, k) : 0;
}

static conn *conn_of(struct MHD_Connection *mc) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

static void on_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe) {
    struct sg_agent_http *h = cls;
    conn *k = *socket_context;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        k = sg_xcalloc(1, sizeof *k);
        k->h = h;
        k->mc = mc;
        *socket_context = k;
        deadline_set(k, 1);
    } else if (k) {
        deadline_set(k, 0);
        free(k);
        *socket_context = NULL;
    }
}

/* MHD's own messages (a connection closed early, the per-address limit, TLS errors): one
 * line each at debug level; else a warning at most once a minute with the count. */
static void mhd_log(void *cls, const char *fmt, va_list ap) {
    struct sg_agent_http *h = cls;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r')) msg[--n] = 0;
    if (sg_log_enabled(SG_LOG_DEBUG)) {
        sg_debug(h->name, "libmicrohttpd: %s", msg);
        return;
    }
    int64_t now = sg_loop_now(h->loop);
    h->mhd_quiet++;
    if (h->mhd_warned && now - h->mhd_warned < 60 * SG_SEC) return;
    sg_warn(h->name,
            "libmicrohttpd: %s (%llu of its messages and %llu connections closed at "
            "--request-timeout since the last such warning, at most one a minute; "
            "--log-level debug shows each)",
            msg, (unsigned long long)h->mhd_quiet, (unsigned long long)h->timed_out);
    h->mhd_warned = now;
    h->mhd_quiet = h->timed_out = 0;
}

static enum MHD_Result send_reply(struct MHD_Connection *c, sg_agent_reply *out) {
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        out->body.len, out->body.data ? out->body.data : (char *)"", MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(resp, "Content-Type", out->ctype ? out->ctype : "application/json");
    if (out->status == 401) MHD_add_response_header(resp, "WWW-Authenticate", "Bearer");
    if (out->status == 429 || out->status == 503) MHD_add_response_header(resp, "Retry-After", "1");
    enum MHD_Result rc = MHD_queue_response(c, (unsigned)out->status, resp);
    MHD_destroy_response(resp);
    sg_buf_free(&out->body);
    return rc;
}

static enum MHD_Result refuse(struct MHD_Connection *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static enum MHD_Result refuse(struct MHD_Connection *c, int status, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sg_agent_reply out = {0};
    sg_agent_error(&out, status, "%s", msg);
    return send_reply(c, &out);
}

/* Constant time in the length of what was sent: no early exit on the first difference. */
static int token_ok(const struct sg_agent_http *h, const char *auth) {
    if (!h->token) return 1;
    if (!auth || strncmp(auth, "Bearer ", 7)) return 0;
    const char *t = auth + 7;
    size_t n = strlen(t);
    unsigned char diff = n != h->token_len;
    for (size_t i = 0; i < n; i++) diff |= (unsigned char)(t[i] ^ h->token[i % h->token_len]);
    return diff == 0;
}

static const char *query_arg(void *ctx, const char *name) {
    return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, name);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *data,
                              size_t *size, void **con_cls) {
    (void)version;
    struct sg_agent_http *h = cls;
    req *r = *con_cls;
    if (!r) { /* headers only: check the token and the declared size before any body */
        r = sg_xcalloc(1, sizeof *r);
        r->h = h;
        r->conn = c;
        *con_cls = r;
        /* answers go out at once: without it Nagle holds a reply's second segment until
         * the client's delayed ACK (40 ms) */
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        int one = 1;
        if (ci) setsockopt(ci->connect_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (!token_ok(h, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization"))) {
            r->refused = 1;
            return refuse(c, 401,
                          "this %s needs its token: send \"Authorization: Bearer TOKEN\" (the "
                          "contents of its %s)",
                          h->name, h->token_opt);
        }
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoull(cl, NULL, 10) > h->max_body) {
            r->refused = 1;
            return refuse(c, 413,
                          "the request body is %s bytes; this %s takes at most %zu (--max-body)",
                          cl, h->name, h->max_body);
        }
        return MHD_YES;
    }
    if (r->refused) { /* the answer is queued; drop what still arrives */
        *size = 0;
        return MHD_YES;
    }
    if (*size) {
        if (r->body.len + *size > h->max_body) {
            r->too_big = 1;
            sg_buf_free(&r->body);
        } else if (!r->too_big) {
            sg_buf_append(&r->body, data, *size);
        }
        *size = 0;
        return MHD_YES;
    }
    if (r->too_big) {
        return refuse(c, 413, "the request body is over %zu bytes, this %s's limit (--max-body)",
                      h->max_body, h->name);
    }
    conn *k = conn_of(c); /* read whole: its deadline is over, a long-poll may wait */
    if (k) deadline_set(k, 0);
    sg_agent_request rq = {.method = method,
                           .path = url,
                           .arg = query_arg,
                           .ctx = c,
                           .body = r->body.data,
                           .len = r->body.len,
                           .expired = r->expired};
    sg_agent_reply out = {0};
    if (h->handle)
        h->handle(h->handle_arg, &rq, &out);
    else
        sg_agent_handle(h->a, &rq, &out);
    if (out.suspend_s > 0 && !h->handle) { /* a long-poll with nothing to say yet */
        sg_buf_free(&out.body);
        r->suspended = 1;
        r->next = h->waiting;
        if (h->waiting) h->waiting->prev = r;
        h->waiting = r;
        r->timer = sg_loop_timer(h->loop, (int64_t)(out.suspend_s * SG_SEC), wait_over, r);
        MHD_suspend_connection(c);
        return MHD_YES;
    }
    return send_reply(c, &out);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode why) {
    (void)why;
    struct sg_agent_http *h = cls;
    conn *k = conn_of(c); /* kept alive: the next request has the same time to arrive */
    if (k) deadline_set(k, 1);
    req *r = *con_cls;
    if (!r) return;
    if (r->timer) sg_loop_timer_cancel(h->loop, r->timer);
    if (r->suspended) unlink_req(r);
    sg_buf_free(&r->body);
    free(r);
    *con_cls = NULL;
}

sg_agent_http *sg_agent_http_start(sg_loop *loop, sg_agent *a, const sg_agent_http_config *cfg,
                                   sg_err *err) {
    if (!sg_net_is_loopback(cfg->host) && !cfg->token && cfg->handle) {
        sg_errf(err, "refusing to listen on %s without a token: give %s, or listen on 127.0.0.1",
                cfg->host, cfg->token_opt ? cfg->token_opt : "--token-file");
        return NULL;
    }
    if (!sg_net_is_loopback(cfg->host) && !cfg->token) {
        sg_errf(err,
                "refusing to listen on %s without a token: anyone who can reach that address "
                "could run code on this machine's devices. Give --token-file, or listen on "
                "127.0.0.1",
                cfg->host);
        return NULL;
    }
    if (!cfg->tls_cert != !cfg->tls_key) {
        sg_errf(err, "TLS needs both --tls-cert and --tls-key");
        return NULL;
    }
    if (cfg->tls_cert && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
        sg_errf(err, "this libmicrohttpd was built without TLS: --tls-cert cannot be used");
        return NULL;
    }
    struct sg_agent_http *h = sg_xcalloc(1, sizeof *h);
    h->loop = loop;
    h->a = a;
    h->max_body = cfg->max_body;
    h->handle = cfg->handle;
    h->handle_arg = cfg->handle_arg;
    h->name = sg_xstrdup(cfg->name ? cfg->name : "agent");
    h->token_opt = sg_xstrdup(cfg->token_opt ? cfg->token_opt : "--token-file");
    h->request_timeout = cfg->request_timeout_ns > 0 ? cfg->request_timeout_ns : 10 * SG_SEC;
    h->epoll_fd = -1;
    if (cfg->token) {
        h->token = sg_xstrdup(cfg->token);
        h->token_len = strlen(h->token);
    }
    h->listen_fd = sg_net_listen_tcp(cfg->host, cfg->port, 128, err);
    if (h->listen_fd < 0) goto fail;
    h->port = sg_net_local_port(h->listen_fd);
    unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    struct MHD_OptionItem tls[3] = {{MHD_OPTION_END, 0, NULL}};
    if (cfg->tls_cert) {
        flags |= MHD_USE_TLS;
        h->cert = sg_xstrdup(cfg->tls_cert);
        h->key = sg_xstrdup(cfg->tls_key);
        tls[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, h->cert};
        tls[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, h->key};
    }
    unsigned idle_s = (unsigned)((h->request_timeout + SG_SEC - 1) / SG_SEC);
    h->d = MHD_start_daemon(
        flags, 0, NULL, NULL, handle, h, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h, /* first */
        MHD_OPTION_LISTEN_SOCKET, h->listen_fd, MHD_OPTION_NOTIFY_COMPLETED, completed, h,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, h, MHD_OPTION_CONNECTION_LIMIT,
        cfg->max_conns ? cfg->max_conns : 512u, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        cfg->max_conns_per_addr ? cfg->max_conns_per_addr : 64u, MHD_OPTION_CONNECTION_TIMEOUT,
        idle_s, MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
    if (!h->d) {
        sg_errf(err, "cannot start the HTTP server on %s:%d%s", cfg->host, h->port,
                cfg->tls_cert ? " (is the certificate and key PEM text that belong together?)"
                              : "");
        goto fail;
    }
    h->listen_fd = -1; /* MHD's now: it closes it when it stops */
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);
    h->epoll_fd = info ? info->epoll_fd : -1;
    if (h->epoll_fd < 0) {
        sg_errf(err, "libmicrohttpd gave no epoll descriptor");
        goto fail;
    }
    if (sg_loop_fd_watch(loop, h->epoll_fd, SG_EV_READ, on_epoll, h, err) < 0) goto fail;
    if (a) sg_agent_on_event(a, on_event, h);
    run_mhd(h);
    return h;
fail:
    sg_agent_http_stop(h);
    return NULL;
}

int sg_agent_http_port(const sg_agent_http *h) { return h->port; }

void sg_agent_http_stop(sg_agent_http *h) {
    if (!h) return;
    if (h->a) sg_agent_on_event(h->a, NULL, NULL);
    while (h->waiting) { /* MHD wants no suspended connection when it stops */
        req *r = h->waiting;
        r->expired = 1;
        resume(r);
    }
    if (h->epoll_fd >= 0) sg_loop_fd_unwatch(h->loop, h->epoll_fd);
    if (h->timer) sg_loop_timer_cancel(h->loop, h->timer);
    if (h->d) {
        MHD_run(h->d); /* answer the resumed long-polls */
        MHD_stop_daemon(h->d);
    }
    if (h->listen_fd >= 0) close(h->listen_fd);
    free(h->token);
    free(h->cert);
    free(h->key);
    free(h->name);
    free(h->token_opt);
    free(h);
}
