/* `specgen pool`: the node agent. Parses its options, chooses the devices, and runs the
 * job table and the HTTP server on one real loop until SIGINT/SIGTERM (pool/agent.h). */
#include "common/buf.h"
#include "common/cli.h"
#include "common/log.h"
#include "common/net.h"
#include "common/proc.h"
#include "common/units.h"
#include "pool/agent_kv.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *details =
    "The agent serves its devices' validation and profiling slots to `specgen optimize\n"
    "--pool URL` (and `specgen campaign --pool`) on other machines, over HTTP/JSON\n"
    "(docs/agent.md): jobs carry the task (cached here by content hash) and the candidate's\n"
    "source; each runs in a sandboxed worker process, as local slots do.\n"
    "\n"
    "--devices all          every GPU CUDA sees here (else every OpenCL device; PoCL: the CPU)\n"
    "--devices cuda:0,1     those CUDA devices (numbers as CUDA_VISIBLE_DEVICES leaves them)\n"
    "--devices opencl:0     that OpenCL device\n"
    "\n"
    "--kv-listen HOST:PORT starts kvstores (Redis protocol, docs/kv-cache.md) in the memory\n"
    "the jobs leave spare: one per CUDA GPU, in its memory, the agent's device i (its i-th in\n"
    "--devices) at PORT+i, each with its own budget; one in host memory on OpenCL (PoCL).\n"
    "--kv-memory auto takes the GPU's free memory less a reserve (10%, at least 1 GiB; on\n"
    "PoCL half the available memory); before a job that needs more memory than is free,\n"
    "the kvstore's budget drops by the deficit (least recently used keys are evicted) and\n"
    "grows back when the job ends: in the job's events (\"kv\") and /metrics (specgen_kv_*).\n"
    "\n"
    "Security: beyond loopback the agent refuses to start without --token-file; with a\n"
    "token, every request (/metrics too) needs `Authorization: Bearer TOKEN`, else 401.\n"
    "--tls-cert/--tls-key serve HTTPS. Bodies over --max-body get 413; jobs beyond\n"
    "--max-jobs in flight get 429; a new task beyond --max-tasks or --max-task-bytes (the\n"
    "tasks clients stored since the agent started: it has one token, so its clients share\n"
    "them) gets 429; while stopping, 503.\n"
    "\n"
    "Slow clients: a request's headers and body must arrive within --request-timeout of\n"
    "the connection's start (or of the previous answer on a kept-alive connection), else\n"
    "the connection is closed; a long-poll's wait (/v1/events?wait=S, up to 300 s) starts\n"
    "after its request arrived whole and is not cut by it. One address holds at most\n"
    "--max-connections-per-address connections (more are closed at once), so a flood from\n"
    "one address leaves the rest of --max-connections to others.\n"
    "\n"
    "Example:\n"
    "  specgen pool --listen 0.0.0.0:9000 --devices all --token-file /etc/specgen/pool.token\n"
    "  specgen optimize suites/builtin/softmax --pool http://node7:9000 \\\n"
    "      --pool-token-file /etc/specgen/pool.token\n";

static char *read_pem(const char *opt, const char *path, sg_err *err) {
    sg_buf b = {0};
    char why[512];
    if (sg_buf_read_file_max(&b, path, SG_SMALL_FILE_MAX) != 0) {
        sg_buf_free(&b);
        sg_errf(err, "%s %s", opt, sg_read_error(why, sizeof why, path, SG_SMALL_FILE_MAX));
        return NULL;
    }
    if (!b.data || !strstr(b.data, "-----BEGIN ")) {
        sg_buf_free(&b);
        sg_errf(err, "%s '%s': not a PEM file (no -----BEGIN line)", opt, path);
        return NULL;
    }
    return sg_buf_steal(&b);
}

static int parse_kv_memory(const char *v, void *out, sg_err *err) {
    uint64_t *m = out;
    if (!strcmp(v, "auto")) {
        *m = 0;
        return 0;
    }
    if (sg_parse_size_bytes(v, m, err) < 0) return -1;
    if (*m < ((uint64_t)2 << 20)) return sg_errf(err, "'%s': the kvstore needs at least 2M", v);
    return 0;
}

/* "all", "cuda:0,1", "opencl:0" into cfg's language and device numbers. */
static int parse_devices(const char *s, sg_agent_config *cfg, sg_err *err) {
    sg_dev_opts o;
    sg_dev_opts_default(&o);
    if (!strcmp(s, "all")) {
        sg_err e;
        o.device = SG_DEV_CUDA;
        int n = sg_dev_count(&o, &e);
        if (n < 1) {
            o.device = SG_DEV_OPENCL;
            n = sg_dev_count(&o, &e);
            if (n < 1)
                return sg_errf(err, "--devices all: no CUDA GPU and no OpenCL device: %s", e.msg);
        }
        if (n > 64) n = 64;
        cfg->lang = o.device;
        cfg->ndevices = n;
        for (int i = 0; i < n; i++) cfg->devices[i] = i;
        return 0;
    }
    const char *colon = strchr(s, ':');
    char lang[16];
    if (!colon || colon - s >= (long)sizeof lang || !colon[1])
        return sg_errf(err, "--devices '%s': expected all, cuda:N[,N...] or opencl:N[,N...]", s);
    snprintf(lang, sizeof lang, "%.*s", (int)(colon - s), s);
    if (sg_dev_lang_parse(lang, &cfg->lang, err) < 0) return sg_err_prefix(err, "--devices"), -1;
    cfg->ndevices = 0;
    for (const char *p = colon + 1; *p;) {
        char *end;
        long d = strtol(p, &end, 10);
        if (end == p || d < 0 || d > 255 || (*end && *end != ','))
            return sg_errf(err, "--devices '%s': '%s' is not a list of device numbers", s,
                           colon + 1);
        for (int i = 0; i < cfg->ndevices; i++)
            if (cfg->devices[i] == d) return sg_errf(err, "--devices '%s': %ld twice", s, d);
        if (cfg->ndevices == 64) return sg_errf(err, "--devices '%s': at most 64 devices", s);
        cfg->devices[cfg->ndevices++] = (int)d;
        p = *end ? end + 1 : end;
    }
    return 0;
}

typedef struct run_state {
    sg_loop *loop;
    int signals;
} run_state;

static void on_signal(sg_loop *loop, int fd, unsigned ev, void *arg) {
    (void)ev;
    run_state *st = arg;
    struct signalfd_siginfo si;
    if (read(fd, &si, sizeof si) != sizeof si) return;
    st->signals++;
    fprintf(stderr, "specgen pool: %s — stopping\n", strsignal((int)si.ssi_signo));
    sg_loop_stop(loop);
}

int sg_cmd_pool(int argc, char **argv) {
    static const char *listen_s, *devices_s, *token_file, *cert_file, *key_file, *cache_dir;
    static const char *kv_listen, *kv_pass_file;
    static uint64_t kv_memory;
    static int64_t per_device, max_jobs;
    static uint64_t max_body, max_task_bytes;
    static int64_t request_timeout, max_poll_wait, max_conns, max_conns_addr, max_tasks;
    listen_s = "127.0.0.1:9000";
    devices_s = "all";
    token_file = cert_file = key_file = cache_dir = kv_listen = kv_pass_file = NULL;
    kv_memory = 0;
    per_device = 1;
    max_jobs = 0;
    max_body = (uint64_t)16 << 20;
    request_timeout = 10 * SG_SEC;
    max_poll_wait = 300 * SG_SEC;
    max_conns = 512;
    max_conns_addr = 64;
    max_tasks = 1000;
    max_task_bytes = (uint64_t)1 << 30;
    static const sg_opt opts[] = {
        {"listen", SG_OPT_STR, &listen_s, "HOST:PORT",
         "address to serve on (port 0: any free one, printed); beyond loopback needs "
         "--token-file",
         "127.0.0.1:9000", NULL, 0},
        {"devices", SG_OPT_STR, &devices_s, "LIST", "all, cuda:0,1 or opencl:0 (see below)", "all",
         NULL, 0},
        {"slots-per-device", SG_OPT_INT, &per_device, "N", "worker slots on each device (1..64)",
         "1", NULL, 0},
        {"token-file", SG_OPT_STR, &token_file, "F",
         "bearer token every request must carry (the file's first line)", NULL, NULL, 0},
        {"tls-cert", SG_OPT_STR, &cert_file, "F", "serve HTTPS with this PEM certificate", NULL,
         NULL, 0},
        {"tls-key", SG_OPT_STR, &key_file, "F", "the certificate's PEM private key", NULL, NULL, 0},
        {"max-body", SG_OPT_SIZE, &max_body, "SIZE", "largest request body (larger: 413)", "16M",
         NULL, 0},
        {"max-jobs", SG_OPT_INT, &max_jobs, "N",
         "jobs queued or running at once (more: 429); 0: 16 per slot", "0", NULL, 0},
        {"max-tasks", SG_OPT_INT, &max_tasks, "N",
         "new tasks clients may store in the cache (more: 429; 1..1000000)", "1000", NULL, 0},
        {"max-task-bytes", SG_OPT_SIZE, &max_task_bytes, "SIZE",
         "their files' bytes together (more: 429; 1M..1T)", "1G", NULL, 0},
        {"request-timeout", SG_OPT_DURATION, &request_timeout, "T",
         "a request's headers and body must arrive within T, else the connection is closed; "
         "also the idle limit of a connection (1s..10m)",
         "10s", NULL, 0},
        {"max-poll-wait", SG_OPT_DURATION, &max_poll_wait, "T",
         "an event long-poll (/v1/events?wait=S) is answered after at most T, with what there "
         "is (100ms..5m)",
         "5m", NULL, 0},
        {"max-connections", SG_OPT_INT, &max_conns, "N", "connections open at once (1..100000)",
         "512", NULL, 0},
        {"max-connections-per-address", SG_OPT_INT, &max_conns_addr, "N",
         "connections open at once from one client address (1..--max-connections)", "64", NULL, 0},
        {"cache-dir", SG_OPT_STR, &cache_dir, "DIR",
         "where tasks sent by clients are kept, by hash", "$TMPDIR/specgen-pool-UID", NULL, 0},
        {"kv-listen", SG_OPT_STR, &kv_listen, "HOST:PORT",
         "serve a kvstore in the memory the jobs leave spare (see below); beyond loopback "
         "needs --kv-requirepass-file",
         NULL, NULL, 0},
        {"kv-memory", SG_OPT_FN, &kv_memory, "auto|SIZE",
         "the kvstore's region; on PoCL the memory it shares with the jobs", "auto",
         parse_kv_memory, 0},
        {"kv-requirepass-file", SG_OPT_STR, &kv_pass_file, "F",
         "the kvstore's password (the file's first line); clients AUTH with it", NULL, NULL, 0},
        {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
    };
    static const sg_cmd_spec spec = {
        "pool", "", "Run a pool agent serving validation and profiling jobs over HTTP.", NULL, opts,
        0,      0};
    sg_cmd_spec sp = spec;
    sp.details = details;
    char **pos;
    int npos;
    int prc = sg_cli_parse(&sp, argc, argv, &pos, &npos);
    if (prc == SG_CLI_HELP) return 0;
    if (prc != SG_CLI_OK) return 2;
    if (per_device < 1 || per_device > 64)
        return sg_cli_fail(&sp, 2, "--slots-per-device: '%lld' must be 1..64",
                           (long long)per_device);
    if (max_jobs < 0 || max_jobs > 100000)
        return sg_cli_fail(&sp, 2, "--max-jobs: '%lld' must be 0..100000", (long long)max_jobs);
    if (max_body < 4096 || max_body > ((uint64_t)1 << 30))
        return sg_cli_fail(&sp, 2, "--max-body: must be between 4k and 1G");
    if (max_tasks < 1 || max_tasks > 1000000)
        return sg_cli_fail(&sp, 2, "--max-tasks: '%lld' must be 1..1000000", (long long)max_tasks);
    if (max_task_bytes < ((uint64_t)1 << 20) || max_task_bytes > ((uint64_t)1 << 40))
        return sg_cli_fail(&sp, 2, "--max-task-bytes: must be between 1M and 1T");
    if (request_timeout < SG_SEC || request_timeout > 600 * SG_SEC)
        return sg_cli_fail(&sp, 2, "--request-timeout: must be between 1s and 10m");
    if (max_poll_wait < SG_SEC / 10 || max_poll_wait > 300 * SG_SEC)
        return sg_cli_fail(&sp, 2, "--max-poll-wait: must be between 100ms and 5m");
    if (max_conns < 1 || max_conns > 100000)
        return sg_cli_fail(&sp, 2, "--max-connections: '%lld' must be 1..100000",
                           (long long)max_conns);
    if (max_conns_addr < 1 || max_conns_addr > max_conns)
        return sg_cli_fail(&sp, 2,
                           "--max-connections-per-address: '%lld' must be 1..%lld "
                           "(--max-connections)",
                           (long long)max_conns_addr, (long long)max_conns);
    sg_err err;
    sg_agent_http_config hc = {.max_body = (size_t)max_body,
                               .request_timeout_ns = request_timeout,
                               .max_conns = (unsigned)max_conns,
                               .max_conns_per_addr = (unsigned)max_conns_addr};
    char host[256];
    if (sg_net_parse_hostport(listen_s, host, sizeof host, &hc.port, &err) < 0)
        return sg_cli_fail(&sp, 2, "--listen: %s", err.msg);
    hc.host = host;
    char *token = NULL, *cert = NULL, *key = NULL;
    int rc = 2;
    if (token_file && !(token = sg_pool_token_read("--token-file", token_file, &err))) goto usage;
    if (!sg_net_is_loopback(host) && !token) {
        sg_errf(&err,
                "--listen %s: refusing to listen beyond loopback without --token-file (anyone "
                "who can reach it could run code on this machine's devices)",
                listen_s);
        goto usage;
    }
    if (!cert_file != !key_file) {
        sg_errf(&err, "--tls-cert and --tls-key go together");
        goto usage;
    }
    if (cert_file && (!(cert = read_pem("--tls-cert", cert_file, &err)) ||
                      !(key = read_pem("--tls-key", key_file, &err))))
        goto usage;
    hc.token = token;
    hc.tls_cert = cert;
    hc.tls_key = key;
    sg_agent_config ac = {.per_device = (int)per_device};
    if (parse_devices(devices_s, &ac, &err) < 0) goto usage;
    ac.max_jobs = max_jobs ? (int)max_jobs : 16 * ac.ndevices * ac.per_device;
    ac.max_tasks = (int)max_tasks;
    ac.max_task_bytes = max_task_bytes;
    ac.max_poll_wait_s = (double)max_poll_wait / SG_SEC;
    char cache[4096];
    if (cache_dir)
        snprintf(cache, sizeof cache, "%s", cache_dir);
    else
        snprintf(cache, sizeof cache, "%s/specgen-pool-%u",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (unsigned)getuid());
    ac.cache_dir = cache;

    rc = 1;
    sigset_t sigs;
    sg_proc_block_stop_signals(&sigs);
    int sfd = -1;
    run_state st = {0};
    sg_agent *a = NULL;
    sg_agent_http *h = NULL;
    sg_agent_kv *kv = NULL;
    sg_loop *loop = sg_loop_new_real(&err);
    if (loop && kv_listen) {
        sg_agent_kv_config kc = {.listen = kv_listen,
                                 .is_auto = kv_memory == 0,
                                 .size = kv_memory,
                                 .password_file = kv_pass_file,
                                 .lang = ac.lang,
                                 .ndevices = ac.ndevices,
                                 .devices = ac.devices};
        if (sg_agent_kv_start(loop, &kc, &kv, &err) < 0) goto out;
        ac.hooks = sg_agent_kv_hooks(kv);
    }
    if (!loop || sg_agent_new(loop, &ac, &a, &err) < 0 ||
        !(h = sg_agent_http_start(loop, a, &hc, &err)))
        goto out;
    st.loop = loop;
    sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0 || sg_loop_fd_watch(loop, sfd, SG_EV_READ, on_signal, &st, &err) < 0) {
        if (sfd < 0) sg_errf(&err, "signalfd failed");
        goto out;
    }
    fprintf(stderr, "specgen pool: serving %d slot%s (%s) at %s://%s:%d%s; tasks in %s\n",
            sg_agent_slots(a), sg_agent_slots(a) == 1 ? "" : "s", devices_s,
            cert ? "https" : "http", host, sg_agent_http_port(h), token ? " (token required)" : "",
            cache);
    if (kv) fprintf(stderr, "specgen pool: %s\n", sg_agent_kv_describe(kv));
    if (sg_loop_run(loop, &err) < 0) goto out;
    sg_agent_drain(a);
    rc = 0;
out:
    if (rc) fprintf(stderr, "specgen pool: %s\n", err.msg);
    sg_agent_http_stop(h);
    sg_agent_free(a);
    sg_agent_kv_free(kv); /* after the agent: its hooks use the kvstore */
    if (sfd >= 0) close(sfd);
    sg_loop_free(loop);
    free(token);
    free(cert);
    free(key);
    return rc;
usage:
    free(token);
    free(cert);
    free(key);
    return sg_cli_fail(&sp, 2, "%s", err.msg);
}
