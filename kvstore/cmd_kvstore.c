/* `specgen kvstore`: the thin command around kvstore.h. */
#include "kvstore/backend.h"
#include "kvstore/kvstore.h"

#include "common/buf.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/units.h"
#include "common/cli.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static int parse_memory_opt(const char *v, void *out, sg_err *err) {
    if (strcmp(v, "auto") == 0) {
        *(uint64_t *)out = 0;
        return 0;
    }
    if (sg_parse_size_bytes(v, out, err) != 0) return -1;
    if (*(uint64_t *)out == 0) return sg_errf(err, "'%s': the budget must be above 0 (or auto)", v);
    return 0;
}

/* Each client takes a file descriptor: raise the soft limit to fit maxclients plus a
 * reserve for the server's own, or serve fewer clients (as Redis does). Past the limit
 * accept() would fail, over and over, instead of answering "max number of clients". */
static int64_t fit_fd_limit(int64_t maxclients, int64_t threads) {
    rlim_t reserve = 32 + 2 * (rlim_t)threads, want = (rlim_t)maxclients + reserve;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want) return maxclients;
    struct rlimit up = {rl.rlim_max < want ? rl.rlim_max : want, rl.rlim_max};
    if (up.rlim_cur > rl.rlim_cur && setrlimit(RLIMIT_NOFILE, &up) == 0) rl.rlim_cur = up.rlim_cur;
    if (rl.rlim_cur >= want) return maxclients;
    int64_t fit = rl.rlim_cur > reserve + 1 ? (int64_t)(rl.rlim_cur - reserve) : 1;
    sg_warn("kvstore",
            "--maxclients %lld needs %llu file descriptors but the limit is %llu (ulimit -n): "
            "serving at most %lld clients",
            (long long)maxclients, (unsigned long long)want, (unsigned long long)rl.rlim_cur,
            (long long)fit);
    return fit;
}

/* SIGINT/SIGTERM are blocked in every thread and waited for here. */
static void *signal_waiter(void *arg) {
    sigset_t set;
    sg_proc_block_stop_signals(&set);
    int sig;
    sigwait(&set, &sig);
    sg_info("kvstore", "%s: shutting down", strsignal(sig));
    sg_kv_server_stop(arg);
    return NULL;
}

static int self_test(const sg_cmd_spec *spec, const char *backend, uint64_t memory,
                     uint64_t bytes) {
    sg_err err;
    sg_kv_backend *be;
    /* Without --memory: a region just big enough (a cuda chunk is 256 MiB), not "auto". */
    if (memory == 0) memory = bytes + ((uint64_t)256 << 20);
    if (sg_kv_backend_open(backend, memory, &be, &err) != 0)
        return sg_cli_fail(spec, 1, "%s", err.msg);
    double h2d, d2h;
    char sz[32];
    int rc = sg_kv_backend_self_test(be, bytes, &h2d, &d2h, &err);
    if (rc == 0)
        printf("kvstore self-test: %s (%s): %s stored and read back bit-exact; "
               "host->backend %.2f GB/s, backend->host %.2f GB/s\n",
               be->name, be->detail, sg_fmt_bytes(bytes, sz, sizeof sz), h2d, d2h);
    be->ops->destroy(be);
    return rc == 0 ? 0 : sg_cli_fail(spec, 1, "%s", err.msg);
}

int sg_cmd_kvstore(int argc, char **argv) {
    const char *listen = "127.0.0.1:6380", *backend = "host", *passfile = NULL;
    uint64_t memory = 0, test_bytes = 0, reply_limit = SG_KV_DEFAULT_REPLY_LIMIT;
    /* A quarter of the CPUs, 1 to 4: the node's CPUs also run validation and profiling
     * workers and often the clients; on 2 CPUs a second I/O thread only competed with
     * redis-benchmark for them in bench-kv. */
    int64_t ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int64_t threads = ncpu < 8 ? 1 : ncpu < 16 ? ncpu / 4 : 4;
    int64_t maxclients = 10000, idle_ns = 0,
            request_ns = (int64_t)SG_KV_DEFAULT_REQUEST_TIMEOUT_MS * 1000000;
    int memory_given = 0;
    const sg_opt opts[] = {
        {.name = "listen",
         .kind = SG_OPT_STR,
         .out = &listen,
         .metavar = "HOST:PORT",
         .help = "address to serve on; anything but loopback needs --requirepass-file",
         .def = "127.0.0.1:6380"},
        {.name = "memory",
         .kind = SG_OPT_FN,
         .out = &memory,
         .metavar = "SIZE|auto",
         .help =
             "the value region: 4G, 512M, ...; auto = half the available host memory, or a GPU's "
             "free memory less 10% (required)",
         .fn = parse_memory_opt},
        {.name = "backend",
         .kind = SG_OPT_STR,
         .out = &backend,
         .metavar = "host|cuda:N",
         .help = "where values live: host memory (mmap) or GPU N's memory (driver API)",
         .def = "host"},
        {.name = "requirepass-file",
         .kind = SG_OPT_STR,
         .out = &passfile,
         .metavar = "F",
         .help = "file holding the password clients must AUTH with"},
        {.name = "io-threads",
         .kind = SG_OPT_INT,
         .out = &threads,
         .metavar = "N",
         .help = "I/O threads (epoll loops)",
         .def = "a quarter of the CPUs, 1 to 4"},
        {.name = "maxclients",
         .kind = SG_OPT_INT,
         .out = &maxclients,
         .metavar = "N",
         .help = "connections served at once",
         .def = "10000"},
        {.name = "reply-limit",
         .kind = SG_OPT_SIZE,
         .out = &reply_limit,
         .metavar = "SIZE",
         .help =
             "unsent reply bytes of one client above which its further requests wait (pipelined "
             "GETs of big values cannot pile up in memory)",
         .def = "64M"},
        {.name = "idle-timeout",
         .kind = SG_OPT_DURATION,
         .out = &idle_ns,
         .metavar = "DURATION",
         .help = "close connections idle this long (0: never)",
         .def = "0",
         .deprecated = "timeout"},
        {.name = "request-timeout",
         .kind = SG_OPT_DURATION,
         .out = &request_ns,
         .metavar = "DURATION",
         .help =
             "close a client that sends nothing for this long in the middle of a request (a value "
             "half sent holds memory) or does not read its replies (0: never)",
         .def = "30s"},
        {.name = "self-test",
         .kind = SG_OPT_SIZE,
         .out = &test_bytes,
         .metavar = "SIZE",
         .help = "instead of serving: write SIZE bytes through the backend, read them back, "
                 "compare and "
                 "print the copy rates"},
        {0},
    };
    static const char details[] =
        "Serves a Redis-protocol (RESP2) key-value store meant for KV-cache chunks of LLM\n"
        "serving engines (LMCache's redis:// and resp:// remote backends, redis-py,\n"
        "redis-cli, redis-benchmark). Values up to 512 MiB live in one memory region cut\n"
        "into 1 MiB slab pages; when it is full the least recently used keys are evicted.\n"
        "`CONFIG SET maxmemory` lowers or raises the budget at run time (lowering evicts and\n"
        "gives the memory back). See docs/kv-cache.md.\n\n"
        "Examples:\n"
        "  specgen kvstore --memory 4G\n"
        "  specgen kvstore --listen 0.0.0.0:6380 --memory auto --backend cuda:0 \\\n"
        "      --requirepass-file /etc/specgen/kv.pass\n"
        "  redis-cli -p 6380 SET k v\n";
    const sg_cmd_spec spec = {
        "kvstore", "", "Serve a KV cache store over the Redis protocol.", details, opts, 0, 0};
    char **pos;
    int npos;
    uint64_t sentinel = UINT64_MAX;
    memory = sentinel;
    int rc = sg_cli_parse(&spec, argc, argv, &pos, &npos);
    if (rc == SG_CLI_HELP) return 0;
    if (rc != SG_CLI_OK) return 2;
    memory_given = memory != sentinel;
    if (!memory_given) memory = 0;
    if (test_bytes) return self_test(&spec, backend, memory, test_bytes);
    if (!memory_given)
        return sg_cli_fail(&spec, 2, "--memory is required (a size such as 4G, or auto)");
    if (threads < 1 || threads > 256)
        return sg_cli_fail(&spec, 2, "--io-threads: %lld is not between 1 and 256",
                           (long long)threads);
    if (maxclients < 1 || maxclients > 1000000)
        return sg_cli_fail(&spec, 2, "--maxclients: %lld is not between 1 and 1000000",
                           (long long)maxclients);
    if (reply_limit == 0)
        return sg_cli_fail(&spec, 2, "--reply-limit: 0 would pause every client for good");
    maxclients = fit_fd_limit(maxclients, threads);
    sg_err err;
    char *password = NULL;
    if (passfile && sg_kv_password_file("--requirepass-file", passfile, &password, &err) != 0)
        return sg_cli_fail(&spec, 2, "%s", err.msg);
    sg_kv_config cfg = {listen,
                        memory,
                        backend,
                        password,
                        (int)threads,
                        (int)maxclients,
                        idle_ns / 1000000,
                        0,
                        reply_limit,
                        request_ns ? (request_ns + 999999) / 1000000 : -1};
    if (getrandom(&cfg.hash_seed, sizeof cfg.hash_seed, 0) != sizeof cfg.hash_seed)
        cfg.hash_seed = (uint64_t)getpid() * 0x9E3779B97F4A7C15ull;
    sigset_t set;
    sg_proc_block_stop_signals(&set);
    signal(SIGPIPE, SIG_IGN);
    sg_kv_server *srv;
    if (sg_kv_server_start(&cfg, &srv, &err) != 0) {
        free(password);
        return sg_cli_fail(&spec, 1, "%s", err.msg);
    }
    sg_info("kvstore", "serving on %s", sg_kv_server_describe(srv));
    pthread_t waiter;
    pthread_create(&waiter, NULL, signal_waiter, srv);
    rc = sg_kv_server_run(srv, &err);
    if (rc != 0) sg_error("kvstore", "%s", err.msg);
    pthread_kill(waiter, SIGTERM); /* wakes the waiter when the loop ended on its own */
    pthread_join(waiter, NULL);
    sg_kv_server_free(srv);
    free(password);
    return rc == 0 ? 0 : 1;
}
