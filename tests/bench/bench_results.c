/* bench_results [CANDIDATES [DB]] — fills a results database through the recorder with
 * CANDIDATES candidates (default 1M; 100 tasks, 50 candidates an iteration, each with a
 * ~1 KB source and the events a real run records for it: fork, generation_done, candidate,
 * job_start/job_end/job_done, and a profile job for every other one), prints the insert
 * rate, then times `specgen results best` and `results tasks` on it (goal < 100 ms each).
 * The database goes to a temporary folder (removed) unless DB is given. */
#include "results/results.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TASKS 100
#define PER_ITERATION 50

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, const sg_err *err) {
    fprintf(stderr, "bench_results: %s: %s\n", what, err->msg);
    exit(1);
}

/* A kernel of about 1 KB that differs per candidate (so nothing compresses it away). */
static void source(char *buf, size_t n, long k) {
    size_t len = (size_t)snprintf(buf, n,
                                  "//@launch k%ld grid=ceil_div(N,256) block=256\n"
                                  "__kernel void k%ld(__global const float *x, __global float "
                                  "*y, float alpha, int n) {\n",
                                  k, k);
    for (int line = 0; len + 80 < 1000; line++)
        len += (size_t)snprintf(buf + len, n - len,
                                "    float v%d = x[get_global_id(0)] * %ld.%03d + alpha; // %d\n",
                                line, k % 97, line, (int)(k * 31 + line) % 1000);
    snprintf(buf + len, n - len, "    y[get_global_id(0)] = v0;\n}\n");
}

static void record(sg_results *r, int64_t campaign, int64_t task, json_t *ev) {
    sg_err err;
    if (sg_results_record(r, campaign, task, ev, &err) < 0) die("record", &err);
    json_decref(ev);
}

static void fill(sg_results *r, long candidates) {
    sg_err err;
    json_t *cfg = json_pack("{s:s}", "bench", "results");
    int64_t campaign = sg_results_campaign_begin(r, "campaign", "suites/bench", cfg, &err);
    json_decref(cfg);
    if (campaign < 0) die("campaign", &err);
    long per_task = candidates / TASKS, job = 0;
    char src[1200];
    double t0 = now_s();
    for (int ti = 0; ti < TASKS; ti++) {
        char name[32];
        snprintf(name, sizeof name, "task_%03d", ti);
        int64_t task = sg_results_task_begin(r, campaign, name, "suites/bench/x", &err);
        if (task < 0) die("task", &err);
        double t = 0, best = 1;
        for (long c = 1; c <= per_task; c++) {
            long it = (c - 1) / PER_ITERATION + 1;
            if ((c - 1) % PER_ITERATION == 0)
                record(r, campaign, task,
                       json_pack("{s:s,s:f,s:i}", "ev", "iteration_start", "t_ms", t, "iteration",
                                 it));
            int fork = (int)((c - 1) % PER_ITERATION) + 1, correct = c % 3 != 0;
            double speedup = correct ? 0.5 + (double)((c * 7919 + ti) % 1000) / 250 : 0;
            source(src, sizeof src, c * TASKS + ti);
            record(r, campaign, task,
                   json_pack("{s:s,s:f,s:i,s:i,s:s,s:s,s:i,s:i}", "ev", "fork", "t_ms", t += 40,
                             "iteration", it, "fork", fork, "rule", "code_block", "cue", "```",
                             "at_tokens", fork * 100, "at_bytes", fork * 400));
            record(r, campaign, task,
                   json_pack("{s:s,s:f,s:i,s:s,s:i,s:s,s:i,s:i}", "ev", "generation_done", "t_ms",
                             t += 300, "iteration", it, "kind", "fork", "index", fork, "finish",
                             "stop", "reasoning_tokens", 0, "content_tokens", 250));
            record(r, campaign, task,
                   json_pack("{s:s,s:f,s:i,s:i,s:s,s:s,s:s,s:s,s:i,s:i,s:s}", "ev", "candidate",
                             "t_ms", t += 1, "iteration", it, "candidate", (int)c, "origin", "fork",
                             "status", "submitted", "hash", "0123456789abcdef", "rule",
                             "code_block", "at_tokens", fork * 100, "fork", fork, "source", src));
            char cname[32];
            snprintf(cname, sizeof cname, "Candidate %ld", c);
            for (int k = 0; k < 1 + (correct && c % 2); k++) {
                const char *kind = k ? "profile" : "validate";
                record(r, campaign, task,
                       json_pack("{s:s,s:f,s:i,s:i,s:s,s:s,s:s,s:I,s:s,s:f,s:b,s:s}", "ev",
                                 "job_start", "t_ms", t += 2, "iteration", it, "slot", k,
                                 "slot_name", k ? "cuda:1/0" : "cuda:0/0", "role", kind, "kind",
                                 kind, "job", (json_int_t)++job, "origin", "fork", "wait_s", 0.01,
                                 "lent", 0, "name", cname));
                record(r, campaign, task,
                       json_pack("{s:s,s:f,s:i,s:I,s:s,s:s,s:f}", "ev", "job_end", "t_ms", t += 150,
                                 "iteration", it, "job", (json_int_t)job, "end", "done", "verdict",
                                 correct ? "pass" : "rejected", "service_s", 0.15));
            }
            record(r, campaign, task,
                   json_pack("{s:s,s:f,s:i,s:i,s:b,s:s,s:f,s:f,s:f,s:s,s:s}", "ev", "job_done",
                             "t_ms", t += 1, "iteration", it, "candidate", (int)c, "correct",
                             correct, "verdict", correct ? "pass" : "rejected", "speedup", speedup,
                             "noise", 0.02, "compile_ms", 35.0, "message",
                             correct ? "all 3 checks passed" : "wrong output at y[17]", "feedback",
                             "Candidate is correct; memory bound."));
            if (correct && speedup > best) {
                best = speedup;
                record(r, campaign, task,
                       json_pack("{s:s,s:f,s:i,s:i,s:f}", "ev", "new_best", "t_ms", t, "iteration",
                                 it, "candidate", (int)c, "speedup", speedup));
            }
        }
        record(r, campaign, task,
               json_pack("{s:s,s:f,s:i,s:s,s:f,s:i,s:s}", "ev", "task_end", "t_ms", t, "iteration",
                         (int)((per_task - 1) / PER_ITERATION + 1), "reason", "budget_time",
                         "best_speedup", best, "best_candidate", 1, "error", ""));
        if (sg_results_flush(r, &err) < 0) die("flush", &err);
        double el = now_s() - t0;
        long done = (long)(ti + 1) * per_task;
        if ((ti + 1) % 10 == 0)
            fprintf(stderr, "  %ld candidates, %.0f candidates/s\n", done, done / el);
    }
    if (sg_results_campaign_end(r, campaign, "done", &err) < 0) die("end", &err);
}

/* The command as users run it, its output to /dev/null; returns the seconds it took. */
static double time_cmd(const char *db, const char *sub) {
    char *argv[] = {"results", "--db", (char *)db, (char *)sub, "--json", NULL};
    fflush(stdout);
    int saved = dup(1), null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    double t0 = now_s();
    int rc = sg_cmd_results(5, argv);
    double el = now_s() - t0;
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    close(null);
    if (rc != 0) {
        fprintf(stderr, "bench_results: results %s failed (%d)\n", sub, rc);
        exit(1);
    }
    return el;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    char dir[] = "/tmp/bench-results-XXXXXX", path[4200];
    int temp = argc <= 2;
    if (temp && !mkdtemp(dir)) return perror("mkdtemp"), 1;
    snprintf(path, sizeof path, "%s", temp ? dir : argv[2]);
    if (temp) strcat(path, "/results.db");
    sg_err err;
    sg_results *r;
    if (sg_results_open(path, 0, &r, &err) < 0) die("open", &err);
    printf("bench_results: %ld candidates in %d tasks into %s\n", n, TASKS, path);
    double t0 = now_s();
    fill(r, n);
    if (sg_results_close(r, &err) < 0) die("close", &err);
    double el = now_s() - t0;
    printf("insert: %ld candidates in %.1f s: %.0f candidates/s (with their ~8 events each)\n",
           n / TASKS * TASKS, el, n / el);
    const char *subs[] = {"best", "tasks"};
    for (int s = 0; s < 2; s++) {
        double t[7];
        for (int i = 0; i < 7; i++) t[i] = time_cmd(path, subs[s]);
        double first = t[0];
        qsort(t, 7, sizeof *t, cmp);
        printf("results %-6s %.1f ms median of 7 (first %.1f ms; goal < 100 ms)\n", subs[s],
               t[3] * 1e3, first * 1e3);
    }
    if (temp) {
        char cmd[4300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) fprintf(stderr, "bench_results: could not remove %s\n", dir);
    }
    return 0;
}
