/* `specgen pool`: the node agent. Parses its options, chooses the devices, and runs the
 * job table and the HTTP server on one real loop until SIGINT/SIGTERM (pool/agent.h). */
#include "common/buf.h"
#include "common/cli.h"
#include "common/opts.h"
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
    "--devices 2            the first two of them\n"
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
    if (sg_buf_read_small(&b, opt, path, err) < 0) return NULL;
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

/* --devices (all, the first N, or LANG:I,..; common/opts.h) into cfg's language and device
 * numbers; all and N take CUDA's GPUs, else OpenCL's devices. */
static int resolve_devices(const sg_devsel *d, sg_agent_config *cfg, sg_err *err) {
    char shown[256];
    sg_devsel_str(d, shown, sizeof shown);
    if (d->n) {
        if (sg_dev_lang_parse(d->lang, &cfg->lang, err) < 0) return sg_err_prefix(err, "--devices");
        cfg->ndevices = d->n;
        memcpy(cfg->devices, d->idx, (size_t)d->n * sizeof *d->idx);
        return 0;
    }
    sg_dev_opts o;
    sg_dev_opts_default(&o);
    sg_err e;
    o.device = SG_DEV_CUDA;
    int n = sg_dev_count(&o, &e);
    if (n < 1) {
        o.device = SG_DEV_OPENCL;
        n = sg_dev_count(&o, &e);
        if (n < 1)
            return sg_errf(err, "--devices %s: no CUDA GPU and no OpenCL device: %s", shown, e.msg);
    }
    if (d->count > n)
        return sg_errf(err, "--devices %s: this machine has %d %s device%s", shown, n,
                       sg_dev_lang_name(o.device), n == 1 ? "" : "s");
    if (d->count) n = d->count;
    if (n > SG_DEVICES_MAX) n = SG_DEVICES_MAX;
    cfg->lang = o.device;
    cfg->ndevices = n;
    for (int i = 0; i < n; i++) cfg->devices[i] = i;
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

/* The options of `specgen pool`. */
typedef struct pool_args {
    const char *listen_s, *token_file, *cert_file, *key_file, *cache_dir;
    const char *kv_listen, *kv_pass_file;
    sg_devsel devices;
    uint64_t kv_memory, max_body, max_task_bytes;
    int64_t per_device, max_jobs, request_timeout, max_poll_wait, max_conns, max_conns_addr;
    int64_t max_tasks;
    char host[256], cache[4096];
    char *token, *cert, *key; /* read from their files (freed by the caller) */
} pool_args;

/* What the parse cannot check alone (the ranges are the table's), into hc and ac. */
static int check_args(pool_args *p, sg_agent_http_config *hc, sg_agent_config *ac, sg_err *err) {
    if (p->max_conns_addr > p->max_conns)
        return sg_errf(err,
                       "--max-connections-per-address: '%lld' must be 1..%lld "
                       "(--max-connections)",
                       (long long)p->max_conns_addr, (long long)p->max_conns);
    *hc = (sg_agent_http_config){.max_body = (size_t)p->max_body,
                                 .request_timeout_ns = p->request_timeout,
                                 .max_conns = (unsigned)p->max_conns,
                                 .max_conns_per_addr = (unsigned)p->max_conns_addr};
    if (sg_net_parse_hostport(p->listen_s, p->host, sizeof p->host, &hc->port, err) < 0)
        return sg_err_prefix(err, "--listen");
    hc->host = p->host;
    if (p->token_file && !(p->token = sg_pool_token_read("--token-file", p->token_file, err)))
        return -1;
    if (!sg_net_is_loopback(p->host) && !p->token)
        return sg_errf(err,
                       "--listen %s: refusing to listen beyond loopback without --token-file "
                       "(anyone who can reach it could run code on this machine's devices)",
                       p->listen_s);
    if (!p->cert_file != !p->key_file) return sg_errf(err, "--tls-cert and --tls-key go together");
    if (p->cert_file && (!(p->cert = read_pem("--tls-cert", p->cert_file, err)) ||
                         !(p->key = read_pem("--tls-key", p->key_file, err))))
        return -1;
    hc->token = p->token;
    hc->tls_cert = p->cert;
    hc->tls_key = p->key;
    *ac = (sg_agent_config){.per_device = (int)p->per_device};
    if (resolve_devices(&p->devices, ac, err) < 0) return -1;
    ac->max_jobs = p->max_jobs ? (int)p->max_jobs : 16 * ac->ndevices * ac->per_device;
    ac->max_tasks = (int)p->max_tasks;
    ac->max_task_bytes = p->max_task_bytes;
    ac->max_poll_wait_s = (double)p->max_poll_wait / SG_SEC;
    if (p->cache_dir)
        snprintf(p->cache, sizeof p->cache, "%s", p->cache_dir);
    else
        snprintf(p->cache, sizeof p->cache, "%s/specgen-pool-%u",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (unsigned)getuid());
    ac->cache_dir = p->cache;
    return 0;
}

/* Serves until SIGINT/SIGTERM; the exit status (a message on stderr for 1). */
static int serve(pool_args *p, const sg_agent_http_config *hc, sg_agent_config *ac) {
    sg_err err;
    int rc = 1;
    sigset_t sigs;
    sg_proc_block_stop_signals(&sigs);
    int sfd = -1;
    run_state st = {0};
    sg_agent *a = NULL;
    sg_agent_http *h = NULL;
    sg_agent_kv *kv = NULL;
    sg_loop *loop = sg_loop_new_real(&err);
    if (loop && p->kv_listen) {
        sg_agent_kv_config kc = {.listen = p->kv_listen,
                                 .is_auto = p->kv_memory == 0,
                                 .size = p->kv_memory,
                                 .password_file = p->kv_pass_file,
                                 .lang = ac->lang,
                                 .ndevices = ac->ndevices,
                                 .devices = ac->devices};
        if (sg_agent_kv_start(loop, &kc, &kv, &err) < 0) goto out;
        ac->hooks = sg_agent_kv_hooks(kv);
    }
    if (!loop || sg_agent_new(loop, ac, &a, &err) < 0 ||
        !(h = sg_agent_http_start(loop, a, hc, &err)))
        goto out;
    st.loop = loop;
    sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0 || sg_loop_fd_watch(loop, sfd, SG_EV_READ, on_signal, &st, &err) < 0) {
        if (sfd < 0) sg_errf(&err, "signalfd failed");
        goto out;
    }
    char shown[256];
    fprintf(stderr, "specgen pool: serving %d slot%s (%s) at %s://%s:%d%s; tasks in %s\n",
            sg_agent_slots(a), sg_agent_slots(a) == 1 ? "" : "s",
            sg_devsel_str(&p->devices, shown, sizeof shown), p->cert ? "https" : "http", p->host,
            sg_agent_http_port(h), p->token ? " (token required)" : "", p->cache);
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
    return rc;
}

int sg_cmd_pool(int argc, char **argv) {
    pool_args p = {.listen_s = "127.0.0.1:9000",
                   .per_device = 1,
                   .max_body = (uint64_t)16 << 20,
                   .request_timeout = 10 * SG_SEC,
                   .max_poll_wait = 300 * SG_SEC,
                   .max_conns = 512,
                   .max_conns_addr = 64,
                   .max_tasks = 1000,
                   .max_task_bytes = (uint64_t)1 << 30};
    const sg_opt opts[] = {
        {.name = "listen",
         .kind = SG_OPT_STR,
         .out = &p.listen_s,
         .metavar = "HOST:PORT",
         .help = "address to serve on (port 0: any free one, printed); beyond loopback needs "
                 "--token-file",
         .def = "127.0.0.1:9000"},
        sg_opt_shared(SG_OD_DEVICES, &p.devices),
        sg_opt_shared(SG_OD_SLOTS_PER_DEVICE, &p.per_device),
        {.name = "token-file",
         .kind = SG_OPT_STR,
         .out = &p.token_file,
         .metavar = "F",
         .help = "bearer token every request must carry (the file's first line)"},
        {.name = "tls-cert",
         .kind = SG_OPT_STR,
         .out = &p.cert_file,
         .metavar = "F",
         .help = "serve HTTPS with this PEM certificate"},
        {.name = "tls-key",
         .kind = SG_OPT_STR,
         .out = &p.key_file,
         .metavar = "F",
         .help = "the certificate's PEM private key"},
        {.name = "max-body",
         .kind = SG_OPT_SIZE,
         .out = &p.max_body,
         .metavar = "SIZE",
         .help = "largest request body (larger: 413)",
         .def = "16M",
         .min = 4096,
         .max = 1073741824.0},
        {.name = "max-jobs",
         .kind = SG_OPT_INT,
         .out = &p.max_jobs,
         .metavar = "N",
         .help = "jobs queued or running at once (more: 429); 0: 16 per slot",
         .def = "0",
         .min = 0,
         .max = 100000},
        {.name = "max-tasks",
         .kind = SG_OPT_INT,
         .out = &p.max_tasks,
         .metavar = "N",
         .help = "new tasks clients may store in the cache (more: 429)",
         .def = "1000",
         .min = 1,
         .max = 1000000},
        {.name = "max-task-bytes",
         .kind = SG_OPT_SIZE,
         .out = &p.max_task_bytes,
         .metavar = "SIZE",
         .help = "their files' bytes together (more: 429)",
         .def = "1G",
         .min = 1048576.0,
         .max = 1099511627776.0},
        {.name = "request-timeout",
         .kind = SG_OPT_DURATION,
         .out = &p.request_timeout,
         .metavar = "T",
         .help = "a request's headers and body must arrive within T, else the connection is "
                 "closed; also the idle limit of a connection",
         .def = "10s",
         .min = 1e9,
         .max = 600e9},
        {.name = "max-poll-wait",
         .kind = SG_OPT_DURATION,
         .out = &p.max_poll_wait,
         .metavar = "T",
         .help = "an event long-poll (/v1/events?wait=S) is answered after at most T, with what "
                 "there is",
         .def = "5m",
         .min = 1e8,
         .max = 300e9},
        {.name = "max-connections",
         .kind = SG_OPT_INT,
         .out = &p.max_conns,
         .metavar = "N",
         .help = "connections open at once",
         .def = "512",
         .min = 1,
         .max = 100000},
        {.name = "max-connections-per-address",
         .kind = SG_OPT_INT,
         .out = &p.max_conns_addr,
         .metavar = "N",
         .help = "connections open at once from one client address (at most --max-connections)",
         .def = "64",
         .min = 1,
         .max = 100000},
        {.name = "cache-dir",
         .kind = SG_OPT_STR,
         .out = &p.cache_dir,
         .metavar = "DIR",
         .help = "where tasks sent by clients are kept, by hash",
         .def = "$TMPDIR/specgen-pool-UID"},
        {.name = "kv-listen",
         .kind = SG_OPT_STR,
         .out = &p.kv_listen,
         .metavar = "HOST:PORT",
         .help = "serve a kvstore in the memory the jobs leave spare (see below); beyond "
                 "loopback needs --kv-requirepass-file"},
        {.name = "kv-memory",
         .kind = SG_OPT_FN,
         .out = &p.kv_memory,
         .metavar = "auto|SIZE",
         .help = "the kvstore's region; on PoCL the memory it shares with the jobs",
         .def = "auto",
         .fn = parse_kv_memory},
        {.name = "kv-requirepass-file",
         .kind = SG_OPT_STR,
         .out = &p.kv_pass_file,
         .metavar = "F",
         .help = "the kvstore's password (the file's first line); clients AUTH with it"},
        {0},
    };
    const sg_cmd_spec spec = {
        "pool",  "",   "Run a pool agent serving validation and profiling jobs over HTTP.",
        details, opts, 0,
        0};
    int prc = sg_cli_parse(&spec, argc, argv, NULL, NULL);
    if (prc == SG_CLI_HELP) return 0;
    if (prc != SG_CLI_OK) return 2;
    sg_err err;
    sg_agent_http_config hc;
    sg_agent_config ac;
    int rc = check_args(&p, &hc, &ac, &err) < 0 ? sg_cli_fail(&spec, 2, "%s", err.msg)
                                                : serve(&p, &hc, &ac);
    free(p.token);
    free(p.cert);
    free(p.key);
    return rc;
}
