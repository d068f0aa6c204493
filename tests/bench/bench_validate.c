/* bench_validate: NVRTC compile latency against `nvcc -cubin` on the builtin CUDA sources,
 * compile-cache hit cost, worker round-trip overhead, and PoCL validation time per task.
 * Run from the repository root (make bench-validate). Prints measured numbers only. */
#include "common/buf.h"
#include "common/proc.h"
#include "validator/internal.h"
#include "validator/validator.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_tasks(const char *suite, char **out, int max) {
    DIR *d = opendir(suite);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && n < max) {
        if (e->d_name[0] == '.') continue;
        char p[512];
        snprintf(p, sizeof p, "%s/%s/task.json", suite, e->d_name);
        FILE *f = fopen(p, "r");
        if (!f) continue;
        fclose(f);
        snprintf(p, sizeof p, "%s/%s", suite, e->d_name);
        out[n++] = strdup(p);
    }
    if (d) closedir(d);
    qsort(out, (size_t)n, sizeof *out, cmp_str);
    return n;
}

static char *slurp(const char *path) {
    sg_buf b = {0};
    if (sg_buf_read_file(&b, path) < 0) return NULL;
    sg_buf_append(&b, "", 0);
    return sg_buf_steal(&b);
}

/* Kernel names from the //@launch lines (what NVRTC must export). */
static int kernels(const char *src, char names[8][64]) {
    int n = 0;
    for (const char *p = strstr(src, "//@launch "); p && n < 8; p = strstr(p + 1, "//@launch ")) {
        if (sscanf(p + 10, "%63s", names[n]) == 1) n++;
    }
    return n;
}

/* Kernel names of the __global__ functions (CCCL fixtures have no //@launch lines). */
static int globals(const char *src, char names[8][64]) {
    int n = 0;
    for (const char *p = strstr(src, "__global__"); p && n < 8; p = strstr(p + 1, "__global__")) {
        const char *q = p + 10, *paren;
        while ((paren = strchr(q, '(')) && paren - q >= 17 && strstr(q, "__launch_bounds__") &&
               strstr(q, "__launch_bounds__") < paren)
            q = strchr(paren, ')') + 1; /* past __launch_bounds__(...) */
        if (!paren) break;
        const char *e = paren;
        while (e > q && e[-1] == ' ') e--;
        const char *b = e;
        while (b > q && (b[-1] == '_' || (b[-1] >= 'a' && b[-1] <= 'z') ||
                         (b[-1] >= 'A' && b[-1] <= 'Z') || (b[-1] >= '0' && b[-1] <= '9')))
            b--;
        snprintf(names[n++], 64, "%.*s", (int)(e - b), b);
    }
    return n;
}

typedef struct nv_src {
    char path[600], dir[600];
    int cccl;
} nv_src;

/* One NVRTC compile of src with the PCH folder pch ("off": none); ms, or -1. */
static double nvrtc_ms(const char *arch, const char *pch, const nv_src *s, const char *src) {
    sg_dev_opts o;
    sg_dev_opts_default(&o);
    o.device = SG_DEV_CUDA;
    o.compile_only = 1;
    o.arch = arch;
    o.nvrtc_pch = pch;
    sg_be *be = NULL;
    sg_err err;
    if (sg_be_cuda_ops.open(&be, &o, &err) < 0) return -1;
    char names[8][64];
    const char *np[8];
    int nk = s->cccl ? globals(src, names) : kernels(src, names);
    for (int k = 0; k < nk; k++) np[k] = names[k];
    sg_be_prog *prog = NULL;
    sg_buf log = {0};
    double t0 = now_ms();
    int rc = sg_be_cuda_ops.compile(be, src, s->dir, np, nk, &prog, &log, &err);
    double ms = now_ms() - t0;
    if (rc < 0) fprintf(stderr, "%s: %s\n%s\n", s->path, err.msg, log.data ? log.data : "");
    sg_be_cuda_ops.free_prog(be, prog);
    sg_buf_free(&log);
    sg_be_cuda_ops.close(be);
    return rc < 0 ? -1 : ms;
}

static double nvcc_ms(const char *arch, const char *path) {
    const char *home = getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "/usr/local/cuda";
    char nvcc[512], archopt[64];
    snprintf(nvcc, sizeof nvcc, "%s/bin/nvcc", home);
    snprintf(archopt, sizeof archopt, "-arch=%s", arch);
    char *argv[] = {nvcc, "-cubin", archopt, "-o", "/dev/null", (char *)path, NULL};
    sg_buf out = {0};
    sg_err err;
    int st = 0;
    double t0 = now_ms();
    int rc = sg_proc_run(argv, 120000, &out, &st, &err);
    double ms = now_ms() - t0;
    sg_buf_free(&out);
    return rc != 0 || st != 0 ? -1 : ms;
}

static int nv_sources(char **tasks, int nt, nv_src *s, int max) {
    int n = 0;
    for (int i = 0; i < nt && n < max; i++) {
        snprintf(s[n].path, sizeof s[n].path, "%s/baseline.cu", tasks[i]);
        snprintf(s[n].dir, sizeof s[n].dir, "%s", tasks[i]);
        s[n].cccl = 0;
        FILE *f = fopen(s[n].path, "r");
        if (f) fclose(f), n++;
    }
    static const char *const cccl[] = {
        "tests/fixtures/byok/rowsum_cub.cu",       "tests/fixtures/byok/cub_blockscan.cu",
        "tests/fixtures/byok/softmax_rows_cg.cu",  "tests/fixtures/byok/cg_reduce_dot.cu",
        "tests/fixtures/cccl/libcudacxx_clamp.cu", NULL};
    for (int i = 0; cccl[i] && n < max; i++, n++) {
        snprintf(s[n].path, sizeof s[n].path, "%s", cccl[i]);
        snprintf(s[n].dir, sizeof s[n].dir, "%.*s", (int)(strrchr(cccl[i], '/') - cccl[i]),
                 cccl[i]);
        s[n].cccl = 1;
    }
    return n;
}

/* NVRTC against nvcc -cubin per source: without PCH (the prelude only where needed), a
 * first compile (an empty PCH folder: it creates the PCH), and steady state (the same
 * source again, its PCH made: what every later candidate with those headers pays). */
static void bench_nvrtc(char **tasks, int nt, const char *arch, const char *only) {
    nv_src s[80];
    int n = nv_sources(tasks, nt, s, 80), k = 0;
    for (int i = 0; i < n; i++) /* only: the sources whose path contains it */
        if (!only || strstr(s[i].path, only)) s[k++] = s[i];
    n = k;
    char tmpl[] = "/tmp/specgen-bench-pch-XXXXXX";
    if (!mkdtemp(tmpl)) return;
    printf("\n== NVRTC vs nvcc -cubin, %s (ms per source; ratios NVRTC / nvcc, goal <= 0.1)\n",
           arch);
    printf("%-40s %9s %9s %9s %9s %7s %7s\n", "source", "nvcc", "no PCH", "first", "steady",
           "first", "steady");
    double sum[2][4] = {{0}};
    int cnt[2] = {0, 0};
    for (int i = 0; i < n; i++) {
        char *src = slurp(s[i].path);
        if (!src) continue;
        char dir[700];
        snprintf(dir, sizeof dir, "%s/%d", tmpl, i); /* a fresh, empty PCH folder */
        double t[4] = {nvcc_ms(arch, s[i].path), nvrtc_ms(arch, "off", &s[i], src),
                       nvrtc_ms(arch, dir, &s[i], src), nvrtc_ms(arch, dir, &s[i], src)};
        free(src);
        const char *name = s[i].path + (s[i].cccl ? strlen("tests/fixtures/") : strlen("suites/"));
        if (t[0] < 0 || t[1] < 0 || t[2] < 0 || t[3] < 0) {
            printf("%-40s error\n", name);
            continue;
        }
        printf("%-40s %9.1f %9.1f %9.1f %9.1f %6.2fx %6.2fx\n", name, t[0], t[1], t[2], t[3],
               t[2] / t[0], t[3] / t[0]);
        for (int k = 0; k < 4; k++) sum[s[i].cccl][k] += t[k];
        cnt[s[i].cccl]++;
    }
    char rm[800];
    snprintf(rm, sizeof rm, "rm -rf %s", tmpl);
    if (system(rm) != 0) fprintf(stderr, "could not remove %s\n", tmpl);
    static const char *const label[2] = {"builtin baselines", "CCCL kernels"};
    for (int c = 0; c < 2; c++) {
        if (!cnt[c]) continue;
        printf("%-40s %9.1f %9.1f %9.1f %9.1f %6.2fx %6.2fx  (mean of %d)\n", label[c],
               sum[c][0] / cnt[c], sum[c][1] / cnt[c], sum[c][2] / cnt[c], sum[c][3] / cnt[c],
               sum[c][2] / sum[c][0], sum[c][3] / sum[c][0], cnt[c]);
        printf("goal: NVRTC <= 0.1x nvcc, %s, steady state (issue 29): %s, %.2fx (nvcc/NVRTC "
               "%.1f)\n",
               label[c], sum[c][3] / sum[c][0] <= 0.1 ? "met" : "missed", sum[c][3] / sum[c][0],
               sum[c][0] / sum[c][3]);
        printf("goal: NVRTC <= 0.1x nvcc, %s, first compile (PCH made): %s, %.2fx\n", label[c],
               sum[c][2] / sum[c][0] <= 0.1 ? "met" : "missed", sum[c][2] / sum[c][0]);
    }
}

static void bench_cache(void) {
    sg_dev_opts o;
    sg_dev_opts_default(&o);
    sg_dev d = {0};
    sg_err err;
    if (sg_dev_open(&d, &o, &err) < 0) {
        printf("cache: OpenCL not available (%s)\n", err.msg);
        return;
    }
    char *src = slurp("suites/builtin/softmax/baseline.cl");
    const char *names[] = {"softmax"};
    sg_be_prog *p;
    int hit;
    char hash[33];
    sg_buf log = {0};
    double t0 = now_ms();
    sg_dev_cache_get(d.cache, src, "suites/builtin/softmax", names, 1, "opencl", &p, &hit, hash,
                     &log, &err);
    double miss = now_ms() - t0;
    int reps = 2000;
    t0 = now_ms();
    for (int i = 0; i < reps; i++)
        sg_dev_cache_get(d.cache, src, "suites/builtin/softmax", names, 1, "opencl", &p, &hit, hash,
                         &log, &err);
    double per = (now_ms() - t0) / reps;
    printf("\n== compile cache (softmax baseline, OpenCL on PoCL)\n");
    printf("miss (real compile): %.1f ms; hit: %.3f ms (%.0f us); ratio %.0fx\n", miss, per,
           per * 1e3, miss / per);
    sg_buf_free(&log);
    free(src);
    sg_dev_close(&d);
}

static void bench_pool(char **tasks, int nt) {
    sg_dev_opts o;
    sg_dev_opts_default(&o);
    sg_val_pool *pool;
    sg_err err;
    if (sg_val_pool_new(&o, &pool, &err) < 0) return;
    sg_val_pool_ping(pool, 0, &err); /* start the worker */
    int reps = 2000;
    double t0 = now_ms();
    for (int i = 0; i < reps; i++)
        if (sg_val_pool_ping(pool, 0, &err) < 0) {
            printf("ping failed: %s\n", err.msg);
            break;
        }
    double per = (now_ms() - t0) / reps;
    printf("\n== worker round trip (length-prefixed JSON over a socketpair)\n");
    printf("empty job: %.3f ms per round trip (goal < 2 ms)\n", per);
    printf("\n== PoCL validation per task (baseline vs reference, 3 shapes; warm worker)\n");
    printf("%-26s %10s %10s %10s %10s\n", "task", "cold ms", "warm ms", "compile", "run");
    double tot = 0;
    for (int i = 0; i < nt; i++) {
        sg_val_job job = {.task_dir = tasks[i], .seed = 1};
        sg_val_result r;
        double a = now_ms();
        sg_val_pool_validate(pool, 0, &job, &r, &err);
        double cold = now_ms() - a;
        a = now_ms();
        sg_val_pool_validate(pool, 0, &job, &r, &err);
        double warm = now_ms() - a;
        tot += warm;
        printf("%-26s %10.1f %10.1f %10.1f %10.1f %s\n", strrchr(tasks[i], '/') + 1, cold, warm,
               r.compile_ms, r.run_ms,
               r.verdict == SG_VAL_PASS ? "" : sg_val_verdict_name(r.verdict));
    }
    printf("%-26s %10s %10.1f  (mean warm %.1f ms)\n", "all", "", tot, nt ? tot / nt : 0);
    sg_val_pool_free(pool);
}

/* Kernel time of one source's plan at the task's main shape: median of `reps` runs. */
static double plan_time(sg_dev *d, const sg_val_task *t, const char *path, sg_be_mem **mem,
                        int reps, sg_err *err) {
    char *src = slurp(path);
    sg_val_plan plan;
    if (!src || sg_val_plan_parse(src, t, path, &plan, err) < 0) return -1;
    const char *names[8];
    for (int i = 0; i < plan.nlaunch && i < 8; i++) names[i] = plan.launch[i].kernel;
    sg_be_prog *prog;
    int hit;
    char hash[33];
    sg_buf log = {0};
    double best[64], med = -1;
    if (sg_dev_cache_get(d->cache, src, t->dir, names, plan.nlaunch, "opencl", &prog, &hit, hash,
                         &log, err) == 0) {
        sg_be_limits lim;
        d->ops->limits(d->be, &lim);
        sg_be_arg args[8];
        for (int a = 0; a < t->narg && a < 8; a++) {
            memset(&args[a], 0, sizeof args[a]);
            for (int b = 0; b < t->nbuf; b++)
                if (!strcmp(t->buf[b].name, t->args[a])) args[a].mem = mem[b];
            for (int s = 0; s < t->nscalar; s++)
                if (!strcmp(t->scalar[s].name, t->args[a]))
                    sg_val_scalar_arg(&t->scalar[s], &t->sizes, &args[a], err);
        }
        for (int r = 0; r < reps && r < 64; r++) {
            double t0 = now_ms();
            for (int i = 0; i < plan.nlaunch; i++) {
                sg_val_dims dm;
                sg_val_launch_dims(&plan.launch[i], &t->sizes, &lim, path, &dm, err);
                d->ops->launch(d->be, prog, i, args, t->narg, dm.grid, dm.block, dm.smem, err);
            }
            d->ops->finish(d->be, err);
            best[r] = now_ms() - t0;
        }
        for (int i = 0; i < reps; i++) /* insertion sort for the median */
            for (int j = i; j > 0 && best[j] < best[j - 1]; j--) {
                double x = best[j];
                best[j] = best[j - 1];
                best[j - 1] = x;
            }
        med = best[reps / 2];
    }
    sg_buf_free(&log);
    sg_val_plan_free(&plan);
    free(src);
    return med;
}

/* How much faster the demo task's plain baseline can get on PoCL (what `make demo` shows). */
static void bench_demo(void) {
    sg_dev_opts o;
    sg_dev_opts_default(&o);
    sg_dev d = {0};
    sg_val_task t;
    sg_err err;
    if (sg_val_task_load("suites/demo/vector_scale", &t, &err) < 0 ||
        sg_dev_open(&d, &o, &err) < 0) {
        printf("demo: %s\n", err.msg);
        return;
    }
    sg_be_mem *mem[2] = {0};
    int64_t n = 0;
    sg_val_sizes_get(&t.sizes, "N", &n);
    for (int b = 0; b < 2; b++) d.ops->alloc(d.be, (size_t)n * 4, &mem[b], &err);
    double base = plan_time(&d, &t, "suites/demo/vector_scale/baseline.cl", mem, 15, &err);
    double good = plan_time(&d, &t, "tests/hostile/opencl/good.cl", mem, 15, &err);
    printf("\n== demo headroom: suites/demo/vector_scale on PoCL, N=%lld (median of 15 runs)\n",
           (long long)n);
    printf("baseline.cl %.2f ms; tests/hostile/opencl/good.cl %.2f ms; speedup %.1fx\n", base, good,
           base / good);
    for (int b = 0; b < 2; b++) d.ops->free_mem(d.be, mem[b]);
    sg_dev_close(&d);
    sg_val_task_free(&t);
}

int main(int argc, char **argv) {
    const char *arch = argc > 1 ? argv[1] : "sm_90";
    setenv("POCL_KERNEL_CACHE", "0", 1); /* a compile must be a real one, not PoCL's disk cache */
    char *tasks[64];
    int nt = list_tasks("suites/builtin", tasks, 64);
    if (nt == 0) {
        fprintf(stderr, "bench_validate: run from the repository root (no suites/builtin)\n");
        return 1;
    }
    /* "nvrtc" or "cache": that part alone; after "nvrtc", a text the sources' paths must
     * contain (e.g. "fixtures": the CCCL kernels only) */
    const char *part = argc > 2 ? argv[2] : "";
    if (!*part) {
        bench_pool(tasks, nt);
        bench_demo();
    }
    if (!*part || !strcmp(part, "cache")) bench_cache();
    if (!*part || !strcmp(part, "nvrtc")) bench_nvrtc(tasks, nt, arch, argc > 3 ? argv[3] : NULL);
    for (int i = 0; i < nt; i++) free(tasks[i]);
    return 0;
}
