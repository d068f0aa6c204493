/* The keyspace commands and the dispatcher (arity, authentication, errors in Redis's
 * wording). Handlers of commands flagged SG_KV_CMD_STORE run with the store locked. */
#include "kvstore/server.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int sg_kv_arg_eq(const sg_kv_arg *a, const char *s) {
    size_t n = strlen(s);
    return a->p && a->n == n && strncasecmp(a->p, s, n) == 0;
}

static int parse_ll(const sg_kv_arg *a, long long *out) {
    if (!a->p || a->n == 0 || a->n > 20) return -1;
    char tmp[24];
    memcpy(tmp, a->p, a->n);
    tmp[a->n] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(tmp, &end, 10);
    if (*end || errno || tmp[0] == ' ' || tmp[0] == '+') return -1;
    *out = v;
    return 0;
}

int sg_kv_arg_ll(sg_kv_ctx *x, const sg_kv_arg *a, long long *out) {
    if (parse_ll(a, out) == 0) return 0;
    sg_kv_reply_error(x->out, "ERR value is not an integer or out of range");
    return -1;
}

/* A value from an argument: the out-of-band one, or a copy of the request bytes. */
static sg_kv_val *value_of(sg_kv_ctx *x, const sg_kv_arg *a) {
    if (a->val) {
        sg_kv_val_ref(a->val);
        return a->val;
    }
    sg_err err;
    sg_kv_val *v = sg_kv_val_new(x->st, a->n, &err);
    if (!v) {
        sg_kv_reply_error(x->out, "OOM command not allowed when used memory > 'maxmemory' (%s)",
                          err.msg);
        return NULL;
    }
    /* Big copies run without the lock: the value is ours alone until stored. */
    int big = a->n > SG_KV_INLINE_REPLY;
    if (big) sg_kv_store_unlock(x->st);
    int rc = sg_kv_val_write(x->st, v, 0, a->p, a->n, &err);
    if (big) sg_kv_store_lock(x->st);
    if (rc != 0) {
        sg_kv_val_unref(x->st, v);
        sg_kv_reply_error(x->out, "ERR %s", err.msg);
        return NULL;
    }
    return v;
}

static void cmd_ping(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    if (argc > 2) {
        sg_kv_reply_error(x->out, "ERR wrong number of arguments for 'ping' command");
        return;
    }
    if (argc == 2)
        sg_kv_reply_bulk(x->out, argv[1].p, argv[1].n);
    else
        sg_kv_reply_simple(x->out, "PONG");
}

static void cmd_echo(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    sg_kv_reply_bulk(x->out, argv[1].p, argv[1].n);
}

static void cmd_quit(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    sg_kv_reply_simple(x->out, "OK");
    x->c->close_after = 1;
}

static void cmd_select(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    long long db;
    if (sg_kv_arg_ll(x, &argv[1], &db) != 0) return;
    if (db != 0)
        sg_kv_reply_error(x->out, "ERR DB index is out of range");
    else
        sg_kv_reply_simple(x->out, "OK");
}

static void cmd_get(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    sg_kv_val *v = sg_kv_get(x->st, argv[1].p, argv[1].n, x->now_ms);
    if (v)
        sg_kv_conn_reply_val(x, v);
    else
        sg_kv_reply_null(x->out, x->c->resp3);
}

static void cmd_mget(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    sg_kv_reply_array(x->out, argc - 1);
    for (int i = 1; i < argc; i++) cmd_get(x, 2, argv + i - 1);
}

static void cmd_set(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    int flags = 0;
    int64_t expire = 0;
    for (int i = 3; i < argc; i++) {
        sg_kv_arg *a = &argv[i];
        int has_next = i + 1 < argc;
        if (sg_kv_arg_eq(a, "nx") && !(flags & SG_KV_XX))
            flags |= SG_KV_NX;
        else if (sg_kv_arg_eq(a, "xx") && !(flags & SG_KV_NX))
            flags |= SG_KV_XX;
        else if (sg_kv_arg_eq(a, "keepttl") && !expire)
            flags |= SG_KV_KEEPTTL;
        else if ((sg_kv_arg_eq(a, "ex") || sg_kv_arg_eq(a, "px") || sg_kv_arg_eq(a, "exat") ||
                  sg_kv_arg_eq(a, "pxat")) &&
                 has_next && !expire && !(flags & SG_KV_KEEPTTL)) {
            long long n;
            if (sg_kv_arg_ll(x, &argv[i + 1], &n) != 0) return;
            int secs = sg_kv_arg_eq(a, "ex") || sg_kv_arg_eq(a, "exat");
            int abs = sg_kv_arg_eq(a, "exat") || sg_kv_arg_eq(a, "pxat");
            /* Redis's limits: the time in ms, and now + it, must fit in 64 bits. */
            if (n <= 0 || (secs && n > INT64_MAX / 1000) ||
                (!abs && (secs ? n * 1000 : n) > INT64_MAX - x->now_ms)) {
                sg_kv_reply_error(x->out, "ERR invalid expire time in 'set' command");
                return;
            }
            expire = (secs ? n * 1000 : n) + (abs ? 0 : x->now_ms);
            i++;
        } else {
            sg_kv_reply_error(x->out, "ERR syntax error");
            return;
        }
    }
    sg_kv_val *v = value_of(x, &argv[2]);
    if (!v) return;
    int stored = sg_kv_set(x->st, argv[1].p, argv[1].n, v, expire, flags, x->now_ms);
    sg_kv_val_unref(x->st, v);
    if (stored)
        sg_kv_reply_simple(x->out, "OK");
    else
        sg_kv_reply_null(x->out, x->c->resp3);
}

static void cmd_mset(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    if (argc % 2 != 1) {
        sg_kv_reply_error(x->out, "ERR wrong number of arguments for 'mset' command");
        return;
    }
    for (int i = 1; i < argc; i += 2) {
        sg_kv_val *v = value_of(x, &argv[i + 1]);
        if (!v) return; /* the pairs before stay set, as a failed write would leave them */
        sg_kv_set(x->st, argv[i].p, argv[i].n, v, 0, 0, x->now_ms);
        sg_kv_val_unref(x->st, v);
    }
    sg_kv_reply_simple(x->out, "OK");
}

static void cmd_exists(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    long long n = 0;
    for (int i = 1; i < argc; i++) n += sg_kv_exists(x->st, argv[i].p, argv[i].n, x->now_ms);
    sg_kv_reply_int(x->out, n);
}

static void cmd_del(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    long long n = 0;
    for (int i = 1; i < argc; i++) n += sg_kv_del(x->st, argv[i].p, argv[i].n, x->now_ms);
    sg_kv_reply_int(x->out, n);
}

static void cmd_strlen(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    sg_kv_val *v = sg_kv_get(x->st, argv[1].p, argv[1].n, x->now_ms);
    sg_kv_reply_int(x->out, v ? (long long)v->len : 0);
}

static void cmd_persist(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    sg_kv_reply_int(x->out, sg_kv_persist(x->st, argv[1].p, argv[1].n, x->now_ms));
}

static void cmd_type(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    int64_t t = sg_kv_ttl_ms(x->st, argv[1].p, argv[1].n, x->now_ms);
    sg_kv_reply_simple(x->out, t == -2 ? "none" : "string");
}

static void expire_generic(sg_kv_ctx *x, int argc, sg_kv_arg *argv, int64_t unit) {
    long long n;
    if (sg_kv_arg_ll(x, &argv[2], &n) != 0) return;
    if (n > INT64_MAX / 2 / unit || n < INT64_MIN / 2 / unit) {
        sg_kv_reply_error(x->out, "ERR invalid expire time in '%s' command",
                          unit == 1000 ? "expire" : "pexpire");
        return;
    }
    int nx = 0, xx = 0, gt = 0, lt = 0;
    for (int i = 3; i < argc; i++) {
        if (sg_kv_arg_eq(&argv[i], "nx"))
            nx = 1;
        else if (sg_kv_arg_eq(&argv[i], "xx"))
            xx = 1;
        else if (sg_kv_arg_eq(&argv[i], "gt"))
            gt = 1;
        else if (sg_kv_arg_eq(&argv[i], "lt"))
            lt = 1;
        else {
            sg_kv_reply_error(x->out, "ERR Unsupported option %.*s", (int)argv[i].n, argv[i].p);
            return;
        }
    }
    if (nx + xx + gt + lt > 1 && !(xx && (gt || lt) && nx + xx + gt + lt == 2)) {
        sg_kv_reply_error(x->out, "ERR NX and XX, GT or LT options at the same time are not "
                                  "compatible");
        return;
    }
    int64_t at = x->now_ms + n * unit;
    int64_t ttl = sg_kv_ttl_ms(x->st, argv[1].p, argv[1].n, x->now_ms);
    if (ttl == -2) {
        sg_kv_reply_int(x->out, 0);
        return;
    }
    int64_t cur = ttl == -1 ? -1 : x->now_ms + ttl; /* -1: no expiry, i.e. infinite */
    if ((nx && cur != -1) || (xx && cur == -1) || (gt && (cur == -1 || at <= cur)) ||
        (lt && cur != -1 && at >= cur)) {
        sg_kv_reply_int(x->out, 0);
        return;
    }
    sg_kv_reply_int(x->out, sg_kv_expire_at(x->st, argv[1].p, argv[1].n, at, x->now_ms));
}

static void cmd_expire(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    expire_generic(x, argc, argv, 1000);
}
static void cmd_pexpire(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    expire_generic(x, argc, argv, 1);
}

static void ttl_generic(sg_kv_ctx *x, sg_kv_arg *argv, int ms) {
    int64_t t = sg_kv_ttl_ms(x->st, argv[1].p, argv[1].n, x->now_ms);
    sg_kv_reply_int(x->out, t < 0 || ms ? t : (t + 500) / 1000);
}
static void cmd_ttl(sg_kv_ctx *x, int argc, sg_kv_arg *argv) { ttl_generic(x, argv, 0); }
static void cmd_pttl(sg_kv_ctx *x, int argc, sg_kv_arg *argv) { ttl_generic(x, argv, 1); }

static void cmd_dbsize(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    sg_kv_stats s;
    sg_kv_get_stats(x->st, &s);
    sg_kv_reply_int(x->out, (long long)s.keys);
}

static void cmd_flush(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    if (argc > 2 ||
        (argc == 2 && !sg_kv_arg_eq(&argv[1], "async") && !sg_kv_arg_eq(&argv[1], "sync"))) {
        sg_kv_reply_error(x->out, "ERR syntax error");
        return;
    }
    sg_kv_flush(x->st);
    sg_kv_reply_simple(x->out, "OK");
}

typedef struct scan_acc {
    sg_buf keys;
    long long n;
    const char *match;
} scan_acc;

static void scan_cb(const sg_kv_entry *e, void *arg) {
    scan_acc *a = arg;
    if (a->match) {
        char stackk[256], *k = e->klen < sizeof stackk ? stackk : sg_xmalloc(e->klen + 1);
        memcpy(k, e->key, e->klen);
        k[e->klen] = '\0';
        int m = fnmatch(a->match, k, 0) == 0 && strlen(k) == e->klen;
        if (k != stackk) free(k);
        if (!m) return;
    }
    sg_kv_reply_bulk(&a->keys, e->key, e->klen);
    a->n++;
}

static char *arg_cstr(const sg_kv_arg *a) {
    char *s = sg_xmalloc(a->n + 1);
    memcpy(s, a->p, a->n);
    s[a->n] = '\0';
    return s;
}

/* KEYS walks the whole keyspace under the lock, as in Redis: meant for inspection; SCAN
 * is the incremental way. */
static void cmd_keys(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    char *match = arg_cstr(&argv[1]);
    scan_acc a = {{0}, 0, strcmp(match, "*") == 0 ? NULL : match};
    uint64_t cursor = 0;
    do cursor = sg_kv_scan(x->st, cursor, 1000, x->now_ms, scan_cb, &a);
    while (cursor != 0);
    sg_kv_reply_array(x->out, a.n);
    if (a.keys.len) sg_buf_append(x->out, a.keys.data, a.keys.len);
    sg_buf_free(&a.keys);
    free(match);
}

static void cmd_scan(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    char tmp[24];
    char *match = NULL;
    if (!argv[1].p || argv[1].n == 0 || argv[1].n > 20) goto bad_cursor;
    memcpy(tmp, argv[1].p, argv[1].n);
    tmp[argv[1].n] = '\0';
    char *end;
    errno = 0;
    unsigned long long cursor = strtoull(tmp, &end, 10);
    if (*end || errno || tmp[0] == '-') goto bad_cursor;
    long long count = 10;
    int only_strings = 1;
    for (int i = 2; i < argc; i += 2) {
        if (i + 1 >= argc) goto syntax;
        if (sg_kv_arg_eq(&argv[i], "count")) {
            if (sg_kv_arg_ll(x, &argv[i + 1], &count) != 0) goto out;
            if (count < 1) goto syntax;
        } else if (sg_kv_arg_eq(&argv[i], "match")) {
            free(match);
            match = arg_cstr(&argv[i + 1]);
        } else if (sg_kv_arg_eq(&argv[i], "type")) {
            only_strings = sg_kv_arg_eq(&argv[i + 1], "string");
        } else {
            goto syntax;
        }
    }
    scan_acc a = {{0}, 0, match};
    uint64_t next = 0;
    if (only_strings)
        next = sg_kv_scan(x->st, cursor, count > 1000000 ? 1000000 : (int)count, x->now_ms, scan_cb,
                          &a);
    char cur[24];
    snprintf(cur, sizeof cur, "%llu", (unsigned long long)next);
    sg_kv_reply_array(x->out, 2);
    sg_kv_reply_bulk_str(x->out, cur);
    sg_kv_reply_array(x->out, a.n);
    if (a.keys.len) sg_buf_append(x->out, a.keys.data, a.keys.len);
    sg_buf_free(&a.keys);
    goto out;
syntax:
    sg_kv_reply_error(x->out, "ERR syntax error");
    goto out;
bad_cursor:
    sg_kv_reply_error(x->out, "ERR invalid cursor");
out:
    free(match);
}

enum { S = SG_KV_CMD_STORE, N = SG_KV_CMD_NOAUTH, W = SG_KV_CMD_WRITE };
static const sg_kv_cmd commands[] = {
    {"auth", -2, N, sg_kv_cmd_auth, 0, 0, 0},
    {"client", -2, 0, sg_kv_cmd_client, 0, 0, 0},
    {"command", -1, 0, sg_kv_cmd_command, 0, 0, 0},
    {"config", -2, S, sg_kv_cmd_config, 0, 0, 0},
    {"dbsize", 1, S, cmd_dbsize, 0, 0, 0},
    {"del", -2, S | W, cmd_del, 1, -1, 1},
    {"echo", 2, 0, cmd_echo, 0, 0, 0},
    {"exists", -2, S, cmd_exists, 1, -1, 1},
    {"expire", -3, S | W, cmd_expire, 1, 1, 1},
    {"flushall", -1, S | W, cmd_flush, 0, 0, 0},
    {"flushdb", -1, S | W, cmd_flush, 0, 0, 0},
    {"get", 2, S, cmd_get, 1, 1, 1},
    {"hello", -1, N, sg_kv_cmd_hello, 0, 0, 0},
    {"info", -1, S, sg_kv_cmd_info, 0, 0, 0},
    {"keys", 2, S, cmd_keys, 0, 0, 0},
    {"mget", -2, S, cmd_mget, 1, -1, 1},
    {"mset", -3, S | W, cmd_mset, 1, -1, 2},
    {"persist", 2, S | W, cmd_persist, 1, 1, 1},
    {"pexpire", -3, S | W, cmd_pexpire, 1, 1, 1},
    {"ping", -1, 0, cmd_ping, 0, 0, 0},
    {"pttl", 2, S, cmd_pttl, 1, 1, 1},
    {"quit", -1, N, cmd_quit, 0, 0, 0},
    {"scan", -2, S, cmd_scan, 0, 0, 0},
    {"select", 2, 0, cmd_select, 0, 0, 0},
    {"set", -3, S | W, cmd_set, 1, 1, 1},
    {"strlen", 2, S, cmd_strlen, 1, 1, 1},
    {"ttl", 2, S, cmd_ttl, 1, 1, 1},
    {"type", 2, S, cmd_type, 1, 1, 1},
    {"unlink", -2, S | W, cmd_del, 1, -1, 1},
    {NULL, 0, 0, NULL, 0, 0, 0},
};

const sg_kv_cmd *sg_kv_commands(void) { return commands; }

static void unknown_command(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    sg_buf args = {0};
    for (int i = 1; i < argc && args.len < 128; i++) {
        if (argv[i].p)
            sg_buf_printf(&args, "'%.*s' ", (int)(argv[i].n < 128 ? argv[i].n : 128), argv[i].p);
        else
            sg_buf_append_str(&args, "'...' ");
    }
    sg_kv_reply_error(x->out, "ERR unknown command '%.*s', with args beginning with: %s",
                      (int)(argv[0].n < 128 ? argv[0].n : 128), argv[0].p,
                      args.data ? args.data : "");
    sg_buf_free(&args);
}

void sg_kv_exec(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    const sg_kv_cmd *cmd = NULL;
    for (const sg_kv_cmd *c = commands; c->name && argv[0].p; c++)
        if (sg_kv_arg_eq(&argv[0], c->name)) {
            cmd = c;
            break;
        }
    if (!x->c->authed && !(cmd && (cmd->flags & SG_KV_CMD_NOAUTH))) {
        sg_kv_reply_error(x->out, "NOAUTH Authentication required.");
        return;
    }
    if (!cmd) {
        unknown_command(x, argc, argv);
        return;
    }
    if ((cmd->arity > 0 && argc != cmd->arity) || (cmd->arity < 0 && argc < -cmd->arity)) {
        sg_kv_reply_error(x->out, "ERR wrong number of arguments for '%s' command", cmd->name);
        return;
    }
    /* Keys must be plain bytes: only SET/MSET values arrive out of band. */
    if (cmd->flags & SG_KV_CMD_STORE) sg_kv_store_lock(x->st);
    cmd->fn(x, argc, argv);
    if (cmd->flags & SG_KV_CMD_STORE) sg_kv_store_unlock(x->st);
}
