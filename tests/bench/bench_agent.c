/* bench_agent — what a remote slot adds to a job over a local one, on loopback, in one run.
 *
 * One local slot (a worker process on PoCL) and one remote slot (a `specgen pool` agent
 * started here, with a token, one slot on the same device) each run the same job — the
 * validation of suites/demo/vector_scale's baseline, at N = 4096 instead of 4M so that the
 * job is short and its noise does not hide the overhead — one at a time, in alternating rounds,
 * through the real scheduler. Printed: the median job time on each; what the remote slot
 * adds, the median over the rounds of each round's remote median minus its local median
 * (the rounds alternate, so a drift of the machine's load moves both sides of a round
 * alike), and the verdict against the goal of under 2 ms added per job on loopback, the
 * short job's being the last line; and the CPU each job costs: this process's (user +
 * system, getrusage) for local and remote jobs, the agent's own (from /proc/PID/stat; its
 * workers excluded, as the local slot's are), and the ratio of remote to local CPU. Client
 * and agent share this machine's CPUs, so the agent's CPU is part of the remote cost.
 *
 * Usage: bench_agent SPECGEN_ROOT SPECGEN_BINARY [JOBS_PER_ROUND [ROUNDS]] */
#include "common/buf.h"
#include "common/wfile.h"
#include "device/device.h"
#include "pool/pool.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct side {
    const char *name;
    sg_pool *pool;
    double *ms, *work_ms; /* job time; the worker's own compile + run time */
    int n, want;
    int64_t t0;
    double cpu_ms, agent_cpu_ms;
} side;

typedef struct bench {
    sg_loop *loop;
    const char *task_dir;
    side *cur;
} bench;

static double cpu_self_ms(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
           (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

/* utime + stime of pid, in ms (fields 14 and 15 of /proc/PID/stat). */
static double cpu_proc_ms(pid_t pid) {
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    unsigned long ut = 0, st = 0;
    if (p) sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st);
    return (double)(ut + st) * 1e3 / (double)sysconf(_SC_CLK_TCK);
}

static void submit_next(bench *b);

static void on_done(void *arg, const sg_pool_job *job, const sg_pool_result *r) {
    bench *b = arg;
    side *s = b->cur;
    if (!r->val || r->val->verdict != SG_VAL_PASS) {
        fprintf(stderr, "bench_agent: %s job failed: %s %s\n", s->name, r->verdict, r->message);
        exit(1);
    }
    s->work_ms[s->n] = r->val->compile_ms + r->val->run_ms;
    s->ms[s->n++] = (double)(sg_loop_now(b->loop) - s->t0) / SG_MS;
    (void)job;
    if (--s->want > 0)
        submit_next(b);
    else
        sg_loop_stop(b->loop);
}

static void submit_next(bench *b) {
    side *s = b->cur;
    sg_pool_work w = {.kind = SG_POOL_VALIDATE, .task_dir = b->task_dir, .name = "baseline"};
    s->t0 = sg_loop_now(b->loop);
    sg_pool_submit(s->pool, 0, 1, SG_POOL_FINAL, &w, on_done, b);
}

/* n jobs on side s, one after another; the CPU they cost. */
static void run_jobs(bench *b, side *s, int n, pid_t agent, int count) {
    sg_err err;
    int before = s->n;
    double c0 = cpu_self_ms(), a0 = cpu_proc_ms(agent);
    b->cur = s;
    s->want = n;
    submit_next(b);
    if (sg_loop_run(b->loop, &err) < 0) {
        fprintf(stderr, "bench_agent: %s\n", err.msg);
        exit(1);
    }
    if (!count) {
        s->n = before; /* warm-up */
        return;
    }
    s->cpu_ms += cpu_self_ms() - c0;
    s->agent_cpu_ms += cpu_proc_ms(agent) - a0;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* suites/demo/vector_scale with main shape N = n (at most 7 digits), in dir. */
static int sized_task(const char *root, const char *dir, const char *n, sg_err *err) {
    static const char *const files[] = {"task.json", "baseline.cl", "reference.cl", "baseline.cu",
                                        "reference.cu"};
    for (int i = 0; i < 5; i++) {
        char from[4400], to[4400];
        snprintf(from, sizeof from, "%s/suites/demo/vector_scale/%s", root, files[i]);
        snprintf(to, sizeof to, "%s/%s", dir, files[i]);
        sg_buf b = {0};
        if (sg_buf_read_file(&b, from) != 0) return sg_errf(err, "cannot read %s", from);
        char *big = i == 0 ? strstr(b.data, "4194304") : NULL;
        char padded[8];
        snprintf(padded, sizeof padded, "%7.7s", n);
        if (big) memcpy(big, padded, 7); /* same length: JSON allows the blanks */
        int rc = sg_wfile_atomic(to, b.data, b.len, err);
        sg_buf_free(&b);
        if (rc < 0) return -1;
    }
    return 0;
}

/* `specgen pool` on a free port, its stderr read until it says where it serves. */
static pid_t start_agent(const char *bin, const char *token_file, const char *cache, int *port) {
    int fds[2];
    if (pipe(fds) < 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        execl(bin, bin, "pool", "--listen", "127.0.0.1:0", "--devices", "opencl:0", "--token-file",
              token_file, "--cache-dir", cache, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE *f = fdopen(fds[0], "r");
    char line[1024];
    *port = 0;
    while (f && fgets(line, sizeof line, f)) {
        char *p = strstr(line, "127.0.0.1:");
        if (p && strstr(line, "serving")) {
            *port = atoi(p + 10);
            break;
        }
    }
    /* its later messages go nowhere: the pipe stays open (not read) until it exits */
    return *port ? pid : -1;
}

typedef struct size_run {
    const char *n; /* N */
    int per_round, rounds;
} size_run;

#define GOAL_MS 2.0 /* issue 18: a remote slot adds under 2 ms per job on loopback */

static const char *verdict(double added_ms) {
    return added_ms < GOAL_MS ? "OK, under the 2 ms goal" : "OVER the 2 ms goal";
}

/* The job time and CPU of each side at one size: warm-up, then alternating rounds.
 * Returns what the remote slot adds per job: the median over the rounds of each round's
 * remote median minus its local median. */
static double bench_size(bench *b, side *L, side *R, pid_t agent, const size_run *z) {
    L->n = R->n = 0;
    L->cpu_ms = R->cpu_ms = R->agent_cpu_ms = 0;
    run_jobs(b, L, 3, agent, 0); /* warm-up: workers started, programs compiled, inputs made */
    run_jobs(b, R, 3, agent, 0);
    double *diff = sg_xcalloc((size_t)z->rounds, sizeof *diff);
    sg_buf rounds = {0};
    for (int r = 0; r < z->rounds; r++) {
        run_jobs(b, L, z->per_round, agent, 1);
        run_jobs(b, R, z->per_round, agent, 1);
        /* this round's jobs are the last per_round of each side (sorting them is harmless) */
        diff[r] = median(R->ms + R->n - z->per_round, z->per_round) -
                  median(L->ms + L->n - z->per_round, z->per_round);
        sg_buf_printf(&rounds, "%s%.2f", r ? " " : "", diff[r]);
    }
    double added = median(diff, z->rounds);
    double ml = median(L->ms, L->n), mr = median(R->ms, R->n);
    double wl = median(L->work_ms, L->n), wr = median(R->work_ms, R->n);
    double cl = L->cpu_ms / L->n, cr = R->cpu_ms / R->n, ca = R->agent_cpu_ms / R->n;
    printf("bench-agent: N=%s, %d jobs each, in %d alternating rounds (validate the baseline of "
           "suites/demo/vector_scale on PoCL)\n",
           z->n, L->n, z->rounds);
    printf("  job time, median   local %.2f ms   remote %.2f ms\n", ml, mr);
    printf("  added per job      %.2f ms: median over %d rounds of remote - local (rounds: %s ms)"
           " — %s\n",
           added, z->rounds, rounds.data, verdict(added));
    printf("  in the worker      local %.2f ms   remote %.2f ms   (compile + run, median)\n", wl,
           wr);
    printf("  CPU per job        local: client %.3f ms   remote: client %.3f ms + agent %.3f ms "
           "= %.3f ms   ratio remote/local %.2f\n",
           cl, cr, ca, cr + ca, cl > 0 ? (cr + ca) / cl : 0);
    sg_buf_free(&rounds);
    free(diff);
    return added;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: bench_agent SPECGEN_ROOT SPECGEN_BINARY [JOBS [ROUNDS]]\n");
        return 2;
    }
    int per_round = argc > 3 ? atoi(argv[3]) : 20, rounds = argc > 4 ? atoi(argv[4]) : 5;
    if (per_round < 1 || rounds < 1) {
        fprintf(stderr, "bench_agent: JOBS and ROUNDS must be at least 1\n");
        return 2;
    }
    /* the short job (its noise does not hide the overhead), then the task's own size */
    size_run sizes[2] = {{"4096", per_round, rounds},
                         {"4194304", per_round / 4 > 0 ? per_round / 4 : 1, rounds}};
    char small[64] = "/tmp/bench_agent_task_XXXXXX", big[64] = "/tmp/bench_agent_task_XXXXXX";
    char tok[64] = "/tmp/bench_agent_tokenXXXXXX", cache[64] = "/tmp/bench_agent_XXXXXX";
    const char *dirs[2] = {small, big};
    int tfd = mkstemp(tok);
    if (tfd < 0 || write(tfd, "bench-token\n", 12) != 12 || !mkdtemp(cache) || !mkdtemp(small) ||
        !mkdtemp(big))
        return 1;
    close(tfd);
    sg_err err;
    for (int i = 0; i < 2; i++)
        if (sized_task(argv[1], dirs[i], sizes[i].n, &err) < 0) {
            fprintf(stderr, "bench_agent: %s\n", err.msg);
            return 1;
        }
    int port;
    pid_t agent = start_agent(argv[2], tok, cache, &port);
    if (agent < 0) {
        fprintf(stderr, "bench_agent: the agent did not start (%s pool)\n", argv[2]);
        return 1;
    }
    /* The local slot's workers are exec'd from the specgen binary, as `specgen optimize` and
     * the agent start theirs (orchestrator/main.c), so both sides measure the path a real
     * run takes; BENCH_AGENT_FORK=1 forks them from this process, as the bench did before
     * (an A/B: docs/agent.md, "Cost"). */
    const char *fork_env = getenv("BENCH_AGENT_FORK");
    if (!fork_env || strcmp(fork_env, "1")) sg_dev_worker_exec_set(argv[2]);
    bench b = {0};
    b.loop = sg_loop_new_real(&err);
    sg_pool_config cfg;
    sg_pool_config_default(&cfg);
    /* the local slot */
    sg_dev_opts o;
    sg_dev_opts_default(&o);
    o.device = SG_DEV_OPENCL;
    sg_pool_local *local;
    int nl;
    side L = {.name = "local"}, R = {.name = "remote"};
    int total = per_round * rounds;
    L.ms = sg_xcalloc((size_t)total, sizeof(double));
    R.ms = sg_xcalloc((size_t)total, sizeof(double));
    L.work_ms = sg_xcalloc((size_t)total, sizeof(double));
    R.work_ms = sg_xcalloc((size_t)total, sizeof(double));
    if (sg_pool_local_new(b.loop, &o, NULL, 1, 1, &local, &err) < 0) goto fail;
    const sg_pool_slot_desc *ld = sg_pool_local_slots(local, &nl);
    if (sg_pool_new(b.loop, &cfg, ld, nl, &sg_pool_local_ops, local, &L.pool, &err) < 0) goto fail;
    sg_pool_local_bind(local, L.pool);
    /* the remote slot */
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    sg_pool_remote *remote;
    int nr;
    sg_pool_remote_config rc = {
        .urls = url, .token = "bench-token", .log_name = "bench_agent", .lang = SG_DEV_OPENCL};
    if (sg_pool_remote_new(b.loop, &rc, &remote, &err) < 0) goto fail;
    const sg_pool_slot_desc *rd = sg_pool_remote_slots(remote, &nr);
    if (sg_pool_new(b.loop, &cfg, rd, nr, &sg_pool_remote_ops, remote, &R.pool, &err) < 0)
        goto fail;
    sg_pool_remote_bind(remote, R.pool);

    double added[2];
    for (int i = 0; i < 2; i++) {
        b.task_dir = dirs[i];
        added[i] = bench_size(&b, &L, &R, agent, &sizes[i]);
    }
    /* the verdict: the short job's, whose noise does not hide the overhead (not a test) */
    printf("bench-agent: remote slot adds %.2f ms per job on loopback: %s (N=%s, median over %d "
           "rounds; N=%s: %.2f ms)\n",
           added[0], verdict(added[0]), sizes[0].n, sizes[0].rounds, sizes[1].n, added[1]);
    sg_pool_free(R.pool);
    sg_pool_free(L.pool);
    sg_pool_remote_free(remote);
    sg_pool_local_free(local);
    sg_loop_free(b.loop);
    kill(agent, SIGTERM);
    waitpid(agent, NULL, 0);
    unlink(tok);
    free(L.ms);
    free(R.ms);
    free(L.work_ms);
    free(R.work_ms);
    return 0;
fail:
    fprintf(stderr, "bench_agent: %s\n", err.msg);
    kill(agent, SIGTERM);
    unlink(tok);
    return 1;
}
