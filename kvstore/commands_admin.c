/* Connection and server administration commands: AUTH, HELLO, CLIENT, COMMAND,
 * CONFIG, INFO. */
#include "kvstore/server.h"

#include "common/units.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KV_REDIS_COMPAT "7.0.0"

int sg_kv_password_equal(const char *want, size_t want_len, const char *got, size_t got_len) {
    /* Every byte of the candidate is compared (against the password, cycled), so the
     * time taken does not depend on where the first difference is. */
    volatile unsigned char diff = (unsigned char)(want_len != got_len);
    for (size_t i = 0; i < got_len; i++)
        diff |= (unsigned char)(got[i] ^ (want_len ? want[i % want_len] : 0));
    return diff == 0;
}

static int try_auth(sg_kv_ctx *x, const sg_kv_arg *user, const sg_kv_arg *pass) {
    sg_kv_server *s = x->srv;
    if (!s->password && !user) {
        sg_kv_reply_error(x->out, "ERR AUTH <password> called without any password configured "
                                  "for the default user. Are you sure your configuration is "
                                  "correct?");
        return -1;
    }
    /* Without a password the default user takes any (Redis's nopass). */
    int ok = !s->password || sg_kv_password_equal(s->password, s->passlen, pass->p, pass->n);
    if (user && !sg_kv_arg_eq(user, "default")) ok = 0;
    if (!ok) {
        sg_kv_reply_error(x->out, "WRONGPASS invalid username-password pair or user is disabled.");
        return -1;
    }
    x->c->authed = 1;
    return 0;
}

void sg_kv_cmd_auth(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    if (argc > 3) {
        sg_kv_reply_error(x->out, "ERR syntax error");
        return;
    }
    if (try_auth(x, argc == 3 ? &argv[1] : NULL, &argv[argc - 1]) == 0)
        sg_kv_reply_simple(x->out, "OK");
}

static int valid_name(const sg_kv_arg *a) {
    for (size_t i = 0; i < a->n; i++)
        if (a->p[i] < '!' || a->p[i] > '~') return 0;
    return 1;
}

static void set_name(sg_kv_conn *c, const sg_kv_arg *a) {
    free(c->name);
    c->name = NULL;
    if (a->n == 0) return;
    c->name = sg_xmalloc(a->n + 1);
    memcpy(c->name, a->p, a->n);
    c->name[a->n] = '\0';
}

void sg_kv_cmd_hello(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    int i = 1, resp3 = x->c->resp3;
    if (argc > 1) {
        long long proto;
        if (sg_kv_arg_ll(x, &argv[1], &proto) != 0) return;
        if (proto != 2 && proto != 3) {
            sg_kv_reply_error(x->out, "NOPROTO unsupported protocol version");
            return;
        }
        resp3 = proto == 3;
        i = 2;
    }
    const sg_kv_arg *name = NULL;
    for (; i < argc; i++) {
        if (sg_kv_arg_eq(&argv[i], "auth") && i + 2 < argc) {
            if (try_auth(x, &argv[i + 1], &argv[i + 2]) != 0) return;
            i += 2;
        } else if (sg_kv_arg_eq(&argv[i], "setname") && i + 1 < argc) {
            name = &argv[++i];
            if (!valid_name(name)) {
                sg_kv_reply_error(x->out, "ERR Client names cannot contain spaces, newlines or "
                                          "special characters.");
                return;
            }
        } else {
            sg_kv_reply_error(x->out, "ERR Syntax error in HELLO option '%.*s'", (int)argv[i].n,
                              argv[i].p);
            return;
        }
    }
    if (!x->c->authed) {
        sg_kv_reply_error(x->out, "NOAUTH HELLO must be called with the client already "
                                  "authenticated, otherwise the HELLO <proto> AUTH <user> <pass> "
                                  "option can be used to authenticate the client and select the "
                                  "RESP protocol version at the same time");
        return;
    }
    if (name) set_name(x->c, name);
    x->c->resp3 = resp3;
    sg_kv_reply_map(x->out, 7, resp3);
    sg_kv_reply_bulk_str(x->out, "server");
    sg_kv_reply_bulk_str(x->out, "redis");
    sg_kv_reply_bulk_str(x->out, "version");
    sg_kv_reply_bulk_str(x->out, KV_REDIS_COMPAT);
    sg_kv_reply_bulk_str(x->out, "proto");
    sg_kv_reply_int(x->out, resp3 ? 3 : 2);
    sg_kv_reply_bulk_str(x->out, "id");
    sg_kv_reply_int(x->out, (long long)x->c->id);
    sg_kv_reply_bulk_str(x->out, "mode");
    sg_kv_reply_bulk_str(x->out, "standalone");
    sg_kv_reply_bulk_str(x->out, "role");
    sg_kv_reply_bulk_str(x->out, "master");
    sg_kv_reply_bulk_str(x->out, "modules");
    sg_kv_reply_array(x->out, 0);
}

void sg_kv_cmd_client(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    const sg_kv_arg *sub = &argv[1];
    if (sg_kv_arg_eq(sub, "id") && argc == 2) {
        sg_kv_reply_int(x->out, (long long)x->c->id);
    } else if (sg_kv_arg_eq(sub, "getname") && argc == 2) {
        if (x->c->name)
            sg_kv_reply_bulk_str(x->out, x->c->name);
        else
            sg_kv_reply_null(x->out, x->c->resp3);
    } else if (sg_kv_arg_eq(sub, "setname") && argc == 3) {
        if (!valid_name(&argv[2])) {
            sg_kv_reply_error(x->out, "ERR Client names cannot contain spaces, newlines or "
                                      "special characters.");
            return;
        }
        set_name(x->c, &argv[2]);
        sg_kv_reply_simple(x->out, "OK");
    } else if (sg_kv_arg_eq(sub, "setinfo") && argc == 4) {
        if (!sg_kv_arg_eq(&argv[2], "lib-name") && !sg_kv_arg_eq(&argv[2], "lib-ver")) {
            sg_kv_reply_error(x->out, "ERR Unrecognized option '%.*s'", (int)argv[2].n, argv[2].p);
            return;
        }
        sg_kv_reply_simple(x->out, "OK");
    } else if (sg_kv_arg_eq(sub, "id") || sg_kv_arg_eq(sub, "getname") ||
               sg_kv_arg_eq(sub, "setname") || sg_kv_arg_eq(sub, "setinfo")) {
        char lower[16];
        size_t n = sub->n < sizeof lower - 1 ? sub->n : sizeof lower - 1;
        for (size_t i = 0; i < n; i++) lower[i] = (char)tolower((unsigned char)sub->p[i]);
        lower[n] = '\0';
        sg_kv_reply_error(x->out, "ERR wrong number of arguments for 'client|%s' command", lower);
    } else {
        sg_kv_reply_error(x->out, "ERR unknown subcommand '%.*s'. Try CLIENT HELP.",
                          (int)(sub->n < 128 ? sub->n : 128), sub->p);
    }
}

static void command_entry(sg_buf *out, const sg_kv_cmd *c) {
    sg_kv_reply_array(out, 6);
    sg_kv_reply_bulk_str(out, c->name);
    sg_kv_reply_int(out, c->arity);
    int nflags = ((c->flags & SG_KV_CMD_WRITE) != 0) + 1;
    sg_kv_reply_array(out, nflags);
    if (c->flags & SG_KV_CMD_WRITE) sg_kv_reply_simple(out, "write");
    sg_kv_reply_simple(out, "fast");
    sg_kv_reply_int(out, c->first_key);
    sg_kv_reply_int(out, c->last_key);
    sg_kv_reply_int(out, c->key_step);
}

void sg_kv_cmd_command(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    const sg_kv_cmd *cmds = sg_kv_commands();
    long long n = 0;
    while (cmds[n].name) n++;
    if (argc == 1) {
        sg_kv_reply_array(x->out, n);
        for (long long i = 0; i < n; i++) command_entry(x->out, &cmds[i]);
    } else if (sg_kv_arg_eq(&argv[1], "count") && argc == 2) {
        sg_kv_reply_int(x->out, n);
    } else if (sg_kv_arg_eq(&argv[1], "list") && argc == 2) {
        sg_kv_reply_array(x->out, n);
        for (long long i = 0; i < n; i++) sg_kv_reply_bulk_str(x->out, cmds[i].name);
    } else if (sg_kv_arg_eq(&argv[1], "docs")) {
        sg_kv_reply_array(x->out, 0); /* no docs: clients fall back to plain names */
    } else if (sg_kv_arg_eq(&argv[1], "info")) {
        sg_kv_reply_array(x->out, argc - 2);
        for (int i = 2; i < argc; i++) {
            const sg_kv_cmd *c = cmds;
            while (c->name && !sg_kv_arg_eq(&argv[i], c->name)) c++;
            if (c->name)
                command_entry(x->out, c);
            else
                sg_kv_reply_null(x->out, x->c->resp3);
        }
    } else {
        sg_kv_reply_error(x->out, "ERR unknown subcommand '%.*s'. Try COMMAND HELP.",
                          (int)(argv[1].n < 128 ? argv[1].n : 128), argv[1].p);
    }
}

/* ---- CONFIG ---- */

static const char *policy_name(sg_kv_policy p) {
    return p == SG_KV_NOEVICTION ? "noeviction" : "allkeys-lru";
}

/* "4gb", "512mb", "100kb", "4G", "1048576" -> bytes (Redis and specgen spellings). */
static int parse_memory(const sg_kv_arg *a, uint64_t *out, sg_err *err) {
    char tmp[64];
    if (a->n == 0 || a->n >= sizeof tmp)
        return sg_errf(err, "'%.*s' is not a size", (int)a->n, a->p);
    memcpy(tmp, a->p, a->n);
    tmp[a->n] = '\0';
    size_t n = a->n;
    if (n >= 2 && (tmp[n - 1] == 'b' || tmp[n - 1] == 'B') && isalpha((unsigned char)tmp[n - 2]))
        tmp[n - 1] = '\0';
    return sg_parse_size_bytes(tmp, out, err);
}

static void config_set(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    if (argc < 4 || argc % 2 != 0) {
        sg_kv_reply_error(x->out, "ERR wrong number of arguments for 'config|set' command");
        return;
    }
    for (int i = 2; i < argc; i += 2) {
        const sg_kv_arg *name = &argv[i], *val = &argv[i + 1];
        sg_err err;
        if (sg_kv_arg_eq(name, "maxmemory")) {
            uint64_t bytes;
            if (parse_memory(val, &bytes, &err) != 0 ||
                sg_kv_set_maxmemory(x->st, bytes, &err) != 0) {
                sg_kv_reply_error(x->out,
                                  "ERR CONFIG SET failed (possibly related to argument "
                                  "'maxmemory') - %s",
                                  err.msg);
                return;
            }
        } else if (sg_kv_arg_eq(name, "maxmemory-policy")) {
            if (sg_kv_arg_eq(val, "allkeys-lru"))
                sg_kv_set_policy(x->st, SG_KV_ALLKEYS_LRU);
            else if (sg_kv_arg_eq(val, "noeviction"))
                sg_kv_set_policy(x->st, SG_KV_NOEVICTION);
            else {
                sg_kv_reply_error(x->out,
                                  "ERR CONFIG SET failed (possibly related to argument "
                                  "'maxmemory-policy') - kvstore supports allkeys-lru "
                                  "and noeviction, not '%.*s'",
                                  (int)val->n, val->p);
                return;
            }
        } else {
            sg_kv_reply_error(x->out,
                              "ERR Unknown option or number of arguments for CONFIG SET "
                              "- '%.*s'",
                              (int)name->n, name->p);
            return;
        }
    }
    sg_kv_reply_simple(x->out, "OK");
}

static void config_get(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    sg_kv_stats s;
    sg_kv_get_stats(x->st, &s);
    char maxmem[32], maxclients[32], timeout[32], threads[32], port[16];
    snprintf(maxmem, sizeof maxmem, "%llu", (unsigned long long)s.maxmemory);
    snprintf(maxclients, sizeof maxclients, "%d", x->srv->cfg.maxclients);
    snprintf(timeout, sizeof timeout, "%lld", (long long)(x->srv->cfg.idle_timeout_ms / 1000));
    snprintf(threads, sizeof threads, "%d", x->srv->nio);
    snprintf(port, sizeof port, "%d", x->srv->port);
    const char *params[][2] = {
        {"maxmemory", maxmem},      {"maxmemory-policy", policy_name(s.policy)},
        {"maxclients", maxclients}, {"timeout", timeout},
        {"io-threads", threads},    {"port", port},
        {"databases", "1"},         {"save", ""},
        {"appendonly", "no"},
    };
    size_t np = sizeof params / sizeof params[0];
    sg_buf body = {0};
    long long n = 0;
    for (size_t k = 0; k < np; k++) {
        for (int i = 2; i < argc; i++) {
            char pat[128];
            snprintf(pat, sizeof pat, "%.*s", (int)argv[i].n, argv[i].p);
            if (fnmatch(pat, params[k][0], FNM_CASEFOLD) == 0) {
                sg_kv_reply_bulk_str(&body, params[k][0]);
                sg_kv_reply_bulk_str(&body, params[k][1]);
                n++;
                break;
            }
        }
    }
    sg_kv_reply_map(x->out, n, x->c->resp3);
    if (body.len) sg_buf_append(x->out, body.data, body.len);
    sg_buf_free(&body);
}

void sg_kv_cmd_config(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    if (sg_kv_arg_eq(&argv[1], "get")) {
        if (argc < 3)
            sg_kv_reply_error(x->out, "ERR wrong number of arguments for 'config|get' command");
        else
            config_get(x, argc, argv);
    } else if (sg_kv_arg_eq(&argv[1], "set")) {
        config_set(x, argc, argv);
    } else if (sg_kv_arg_eq(&argv[1], "resetstat") && argc == 2) {
        sg_kv_reset_stats(x->st);
        sg_kv_reply_simple(x->out, "OK");
    } else {
        sg_kv_reply_error(x->out, "ERR unknown subcommand '%.*s'. Try CONFIG HELP.",
                          (int)(argv[1].n < 128 ? argv[1].n : 128), argv[1].p);
    }
}

/* ---- INFO ---- */

static int want_section(int argc, sg_kv_arg *argv, const char *name) {
    if (argc < 2) return 1;
    for (int i = 1; i < argc; i++)
        if (sg_kv_arg_eq(&argv[i], name) || sg_kv_arg_eq(&argv[i], "all") ||
            sg_kv_arg_eq(&argv[i], "everything") || sg_kv_arg_eq(&argv[i], "default"))
            return 1;
    return 0;
}

void sg_kv_cmd_info(sg_kv_ctx *x, int argc, sg_kv_arg *argv) {
    sg_kv_server *s = x->srv;
    sg_kv_stats st;
    sg_kv_get_stats(x->st, &st);
    sg_buf b = {0};
    char h1[32], h2[32], h3[32];
    if (want_section(argc, argv, "server"))
        sg_buf_printf(&b,
                      "# Server\r\nredis_version:%s\r\nkvstore:specgen\r\nredis_mode:standalone\r\n"
                      "process_id:%d\r\ntcp_port:%d\r\nuptime_in_seconds:%lld\r\n"
                      "io_threads_active:%d\r\nbackend:%s\r\nbackend_detail:%s\r\n\r\n",
                      KV_REDIS_COMPAT, (int)getpid(), s->port,
                      (long long)((x->now_ms - s->start_ms) / 1000), s->nio, s->be->name,
                      s->be->detail);
    if (want_section(argc, argv, "clients"))
        sg_buf_printf(&b, "# Clients\r\nconnected_clients:%llu\r\nmaxclients:%d\r\n\r\n",
                      (unsigned long long)atomic_load(&s->connected), s->cfg.maxclients);
    if (want_section(argc, argv, "memory"))
        sg_buf_printf(&b,
                      "# Memory\r\nused_memory:%llu\r\nused_memory_human:%s\r\n"
                      "used_memory_values:%llu\r\nused_memory_keys:%llu\r\n"
                      "maxmemory:%llu\r\nmaxmemory_human:%s\r\nmaxmemory_policy:%s\r\n"
                      "region_bytes:%llu\r\nregion_human:%s\r\nregion_released_bytes:%llu\r\n"
                      "slab_page_bytes:%llu\r\n\r\n",
                      (unsigned long long)st.used, sg_fmt_bytes(st.used, h1, sizeof h1),
                      (unsigned long long)st.value_bytes, (unsigned long long)st.meta_bytes,
                      (unsigned long long)st.maxmemory, sg_fmt_bytes(st.maxmemory, h2, sizeof h2),
                      policy_name(st.policy), (unsigned long long)st.capacity,
                      sg_fmt_bytes(st.capacity, h3, sizeof h3),
                      (unsigned long long)st.released_bytes, (unsigned long long)SG_KV_PAGE);
    if (want_section(argc, argv, "stats"))
        sg_buf_printf(&b,
                      "# Stats\r\ntotal_connections_received:%llu\r\n"
                      "total_commands_processed:%llu\r\nrejected_connections:%llu\r\n"
                      "idle_timeout_closed:%llu\r\nkeyspace_hits:%llu\r\nkeyspace_misses:%llu\r\n"
                      "evicted_keys:%llu\r\nexpired_keys:%llu\r\n\r\n",
                      (unsigned long long)atomic_load(&s->total_conns),
                      (unsigned long long)atomic_load(&s->total_cmds),
                      (unsigned long long)atomic_load(&s->rejected),
                      (unsigned long long)atomic_load(&s->idle_closed), (unsigned long long)st.hits,
                      (unsigned long long)st.misses, (unsigned long long)st.evicted,
                      (unsigned long long)st.expired);
    if (want_section(argc, argv, "keyspace")) {
        sg_buf_printf(&b, "# Keyspace\r\n");
        if (st.keys)
            sg_buf_printf(&b, "db0:keys=%llu,expires=%llu,avg_ttl=0\r\n",
                          (unsigned long long)st.keys, (unsigned long long)st.expires);
    }
    sg_kv_reply_bulk(x->out, b.data ? b.data : "", b.len);
    sg_buf_free(&b);
}
