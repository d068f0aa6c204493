/* bench_profile: the profiler's own cost per candidate and the runs it needs to reach a
 * stable median, per builtin OpenCL task (PoCL here). Each task's baseline is validated
 * (as in real use, which also fills the compile cache), then profiled as a candidate
 * against itself with the default method (so both sides run, as for any candidate, and
 * the speedup column shows the A/A result: 1 within the band). Overhead = the job's wall time - the
 * device time of all its timed runs: warm-up, input generation and upload, cache flushes, checks
 * after timing. Each task is profiled twice in its worker: the first job pays what a worker
 * does once (the device's peaks for the roofline, measured with three 64 MiB fills), the
 * second shows the cost per candidate in steady state, as a campaign's worker sees it for
 * every later candidate of its task. The verdict compares the overhead per timed run with
 * the goal of issue 29 (<= 5 ms on PoCL); the load average is printed beside it, since on
 * a shared machine every wait for PoCL's threads is a wait for a core.
 * Usage: bench_profile [SUITE_DIR (default suites/builtin)] [MAX_RUNS (default 200)]
 */
#include "profiler/profiler.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
    const char *suite = argc > 1 ? argv[1] : "suites/builtin";
    int max_runs = argc > 2 ? atoi(argv[2]) : 200;
    DIR *d = opendir(suite);
    if (!d) {
        fprintf(stderr, "bench_profile: cannot open %s (run from the repository root)\n", suite);
        return 1;
    }
    char *names[256];
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < 256;) {
        char path[1024];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s/task.json", suite, e->d_name);
        if (e->d_name[0] != '.' && stat(path, &st) == 0) names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, by_name);
    sg_dev_opts po;
    sg_dev_opts_default(&po);
    po.kinds = sg_prof_kinds; /* validate and profile */
    po.nkinds = 2;
    sg_val_pool *pool;
    sg_err err;
    if (sg_val_pool_new(&po, &pool, &err) < 0) return fprintf(stderr, "%s\n", err.msg), 1;
    sg_prof_opts o;
    sg_prof_opts_default(&o);
    o.stab.max_runs = max_runs;
    printf("profiler overhead per candidate, baseline against itself (OpenCL, %d input sets, "
           "warm-up %d, max %d runs, tol %.0f%%)\n",
           o.input_sets, o.warmup, o.stab.max_runs, 100 * o.stab.tol);
    printf("%-14s %11s %6s %7s %9s %10s %11s %12s %12s %8s\n", "task", "median", "runs", "stable",
           "wall ms", "kernels ms", "overhead ms", "overhead/run", "first job", "A/A");
    double tot_wall = 0, tot_dev = 0, first_over = 0, flush = 0;
    int tot_runs = 0, first_runs = 0, failed = 0;
    for (int i = 0; i < n; i++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", suite, names[i]);
        char src_path[1100];
        snprintf(src_path, sizeof src_path, "%s/baseline.cl", dir);
        sg_buf src = {0};
        if (sg_buf_read_file(&src, src_path) < 0) {
            printf("%-14s no OpenCL baseline\n", names[i]);
            continue;
        }
        sg_val_job job = {.task_dir = dir,
                          .candidate = src.data,
                          .candidate_len = src.len,
                          .candidate_name = "baseline.cl"};
        sg_val_result vr;
        sg_prof_result r0, r;
        if (sg_val_pool_validate(pool, 0, &job, &vr, &err) < 0 || vr.verdict != SG_VAL_PASS) {
            printf("%-14s validation: %s\n", names[i], vr.message);
            sg_buf_free(&src);
            failed++;
            continue;
        }
        int rc = sg_prof_time(pool, 0, &job, &o, &r0, &err);
        if (rc == 0) rc = sg_prof_time(pool, 0, &job, &o, &r, &err);
        sg_buf_free(&src);
        if (rc < 0) {
            printf("%-14s %s\n", names[i], err.msg);
            failed++;
            continue;
        }
        int runs = r.candidate.runs; /* each side ran this often */
        double over = r.wall_ms - r.device_ms, over0 = r0.wall_ms - r0.device_ms;
        char sp[32];
        snprintf(sp, sizeof sp, "%.2f±%.0f%%", r.speedup.speedup, 100 * r.speedup.band);
        printf("%-14s %9.3fms %6d %7s %9.0f %10.1f %11.0f %10.2fms %10.2fms %8s\n", names[i],
               r.baseline.median_ns / 1e6, runs, runs < o.stab.max_runs ? "yes" : "max", r.wall_ms,
               r.device_ms, over, over / (2 * runs), over0 / (2 * r0.candidate.runs), sp);
        tot_wall += r.wall_ms;
        tot_dev += r.device_ms;
        tot_runs += runs;
        first_over += over0;
        first_runs += r0.candidate.runs;
        flush = r.flush_bytes;
        fflush(stdout);
    }
    double per_run = tot_runs ? (tot_wall - tot_dev) / (2 * tot_runs) : 0;
    double per_run0 = first_runs ? first_over / (2 * first_runs) : 0;
    printf("%-14s %11s %6d %7s %9.0f %10.1f %11.0f %10.2fms %10.2fms\n", "all", "", tot_runs, "",
           tot_wall, tot_dev, tot_wall - tot_dev, per_run, per_run0);
    double load[3] = {0, 0, 0};
    FILE *la = fopen("/proc/loadavg", "r");
    if (la) {
        if (fscanf(la, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
        fclose(la);
    }
    printf("flush %.0f MiB before each run; load average %.1f (1 min) on %ld CPUs\n",
           flush / 1048576, load[0], sysconf(_SC_NPROCESSORS_ONLN));
    printf("goal: profiler overhead <= 5 ms per timed run on PoCL (issue 29): %s, %.2f ms per "
           "run in steady state (%.2f ms on a worker's first job)\n",
           per_run <= 5 ? "met" : "missed", per_run, per_run0);
    sg_val_pool_free(pool);
    for (int i = 0; i < n; i++) free(names[i]);
    return failed ? 1 : 0;
}
