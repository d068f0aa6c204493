/* server.h — the pieces of the running server shared by server.c (accept, I/O
 * threads), conn.c (one connection: read, parse, write) and the command files
 * (internal to kvstore/).
 *
 * Contract: a connection belongs to exactly one I/O thread, which alone touches it;
 * the keyspace is shared through the store's lock. Counters shared between threads
 * are atomics. */
#ifndef SG_KV_SERVER_H
#define SG_KV_SERVER_H

#include "kvstore/kvstore.h"
#include "kvstore/resp.h"
#include "kvstore/store.h"

#include <pthread.h>
#include <stdatomic.h>

#define SG_KV_BIG_BULK (64 * 1024)        /* bulks this big are received into their slot */
#define SG_KV_INLINE_REPLY (16 * 1024)    /* values up to this are copied into replies */
#define SG_KV_STAGE (1 << 20)             /* staging window for non-host backends */
#define SG_KV_MAX_QUERY ((size_t)1 << 30) /* bytes one request may buffer */

typedef struct sg_kv_server sg_kv_server;
typedef struct sg_kv_io sg_kv_io;

typedef struct sg_kv_out_val {
    size_t at; /* position in the out buffer where the value's bytes go */
    sg_kv_val *val;
    uint64_t sent;
} sg_kv_out_val;

typedef struct sg_kv_conn {
    int fd;
    uint64_t id;
    sg_kv_io *io;
    sg_kv_server *srv;
    struct sg_kv_conn *prev, *next;
    /* input */
    sg_buf in;
    size_t in_off; /* start of the current request in `in` */
    sg_kv_parser p;
    sg_kv_val **xvals; /* values received out of band, by argument index */
    size_t xcap;
    sg_kv_val *rx; /* value being received out of band */
    uint64_t rx_len, rx_got;
    size_t rx_arg;
    int rx_active;     /* receiving a bulk out of band (into rx, or dropping it) */
    int rx_discard;    /* the value did not fit: its bytes are read and dropped */
    char req_err[300]; /* set: the request fails with this error instead of running */
    /* output */
    sg_buf out;
    size_t out_sent;
    sg_kv_out_val *ov;
    size_t nov, ov_head, ovcap;
    uint64_t ov_bytes; /* value bytes queued and not yet sent */
    char *stage;       /* staging window of the value being sent (non-host backends) */
    size_t stage_len, stage_sent;
    char *rx_stage; /* its own window for the value being received (or discarded): a
                       reply may still be in `stage` while the next request's value arrives */
    /* state */
    char *name;
    int authed, close_after, dead;
    int resp3; /* HELLO 3 was sent: nulls and maps in RESP3 */
    uint32_t events;
    int64_t last_ms;
} sg_kv_conn;

struct sg_kv_io {
    pthread_t th;
    int epfd, evfd;
    pthread_mutex_t mu;
    sg_kv_conn *incoming; /* handed over by the acceptor, guarded by mu */
    sg_kv_conn *conns;
    sg_kv_server *srv;
    int started;
};

struct sg_kv_server {
    sg_kv_config cfg;
    char host[256];
    int port, lfd, stop_fd, timer_fd, epfd;
    char describe[400];
    sg_kv_backend *be;
    sg_kv_store *store;
    sg_kv_io *ios;
    int nio, next_io;
    char *password;
    size_t passlen;
    int64_t start_ms;
    sg_loop *loop; /* attached to the embedder's loop (sg_kv_server_attach), or NULL */
    atomic_int stopping;
    atomic_uint_fast64_t next_id, connected, total_conns, total_cmds, rejected, idle_closed;
};

/* The argument of a command: bytes in the request, or a value received out of band. */
typedef struct sg_kv_arg {
    const char *p;
    size_t n;
    sg_kv_val *val; /* non-NULL: p is NULL and the bytes are in the value */
} sg_kv_arg;

typedef struct sg_kv_ctx {
    sg_kv_conn *c;
    sg_kv_server *srv;
    sg_kv_store *st;
    sg_buf *out;
    int64_t now_ms;
} sg_kv_ctx;

int64_t sg_kv_now_ms(void);

/* conn.c */
sg_kv_conn *sg_kv_conn_new(sg_kv_server *srv, int fd);
void sg_kv_conn_event(sg_kv_conn *c, uint32_t events);
void sg_kv_conn_close(sg_kv_conn *c);
/* Reply with a value (store lock held): small ones are copied, big ones are sent
 * from the region after the lock is released. */
void sg_kv_conn_reply_val(sg_kv_ctx *x, sg_kv_val *v);

/* commands.c: run one request and append its reply to x->out. */
void sg_kv_exec(sg_kv_ctx *x, int argc, sg_kv_arg *argv);
/* commands_admin.c */
void sg_kv_cmd_info(sg_kv_ctx *x, int argc, sg_kv_arg *argv);
void sg_kv_cmd_config(sg_kv_ctx *x, int argc, sg_kv_arg *argv);
void sg_kv_cmd_command(sg_kv_ctx *x, int argc, sg_kv_arg *argv);
void sg_kv_cmd_client(sg_kv_ctx *x, int argc, sg_kv_arg *argv);
void sg_kv_cmd_hello(sg_kv_ctx *x, int argc, sg_kv_arg *argv);
void sg_kv_cmd_auth(sg_kv_ctx *x, int argc, sg_kv_arg *argv);
/* The command table, for COMMAND. */
typedef struct sg_kv_cmd {
    const char *name;
    int arity; /* Redis convention: n exact, -n at least n (the name counts) */
    int flags;
    void (*fn)(sg_kv_ctx *x, int argc, sg_kv_arg *argv);
    int first_key, last_key, key_step;
} sg_kv_cmd;
enum { SG_KV_CMD_STORE = 1, SG_KV_CMD_NOAUTH = 2, SG_KV_CMD_WRITE = 4 };
const sg_kv_cmd *sg_kv_commands(void);
int sg_kv_arg_eq(const sg_kv_arg *a, const char *s); /* case-insensitive */
/* Parse a whole integer argument; on failure reply Redis's error and return -1. */
int sg_kv_arg_ll(sg_kv_ctx *x, const sg_kv_arg *a, long long *out);

#endif
