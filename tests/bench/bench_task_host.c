/* bench_task_host: the host's share of checking a task at its GPU shape ("sizes"), which no
 * CPU-device run measures (PoCL uses cpu_sizes): per input distribution, generating every
 * in and inout buffer (validator/rng.c, as a check does), then per output the scan for
 * non-finite reference values and the comparison with the reference (validator/compare.c,
 * here on equal data: the full scan a passing check does). Device transfers and kernels are
 * not included; the bytes moved are printed so they can be estimated. One validation at
 * the main shape does all of this once per distribution (docs/gpu-checks.md).
 * Usage: bench_task_host [TASK_DIR...] (default, as `make bench` runs it: three tasks, one
 * f32 element-wise, one bf16 row-wise, one bf16 GEMM; `make bench-task-host`: all). */
#include "validator/validator.h"
#include "validator/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One task: prints a row; returns the host seconds of one validation at the main shape. */
static double bench(const char *dir) {
    sg_val_task t;
    sg_err err;
    if (sg_val_task_load(dir, &t, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 0;
    }
    int nd = sg_val_task_ndist(&t);
    double in_mb = 0, out_mb = 0, fill_s = 0, cmp_s = 0;
    for (int d = 0; d < nd; d++) {
        sg_val_rng rng = {(uint64_t)d + 1};
        for (int i = 0; i < t.nbuf; i++) {
            int64_t n;
            if (sg_val_expr_eval(t.buf[i].count, &t.sizes, &n, &err) < 0) {
                fprintf(stderr, "%s: %s\n", dir, err.msg);
                sg_val_task_free(&t);
                return 0;
            }
            size_t bytes = (size_t)n * sg_val_type_size(t.buf[i].type);
            unsigned char *a = sg_xmalloc(bytes + 1), *b = sg_xmalloc(bytes + 1);
            double t0 = now();
            sg_val_fill(&rng, &t.buf[i], d, &t.sizes, a, (size_t)n); /* outputs: stand-in values */
            double t1 = now();
            if (t.buf[i].role != SG_VAL_OUT) fill_s += t1 - t0;
            if (t.buf[i].role != SG_VAL_IN) {
                memcpy(b, a, bytes);
                sg_val_cmp c;
                t0 = now();
                (void)sg_val_first_nonfinite(t.buf[i].type, b, (size_t)n);
                (void)sg_val_compare(&t.buf[i], a, b, (size_t)n, &c);
                cmp_s += now() - t0;
            }
            if (d == 0) *(t.buf[i].role == SG_VAL_OUT ? &out_mb : &in_mb) += bytes / 1e6;
            if (d == 0 && t.buf[i].role == SG_VAL_INOUT) out_mb += bytes / 1e6;
            free(a);
            free(b);
        }
    }
    char shape[256];
    sg_val_sizes_format(&t.sizes, shape, sizeof shape);
    printf("%-22s %-34s %9.1f %9.1f %5d %9.0f %9.0f %9.0f\n", t.name, shape, in_mb, out_mb, nd,
           1e3 * fill_s, 1e3 * cmp_s, 1e3 * (fill_s + cmp_s));
    fflush(stdout);
    sg_val_task_free(&t);
    return fill_s + cmp_s;
}

int main(int argc, char **argv) {
    static const char *const quick[] = {"suites/builtin/gelu", "suites/builtin/layernorm_bf16",
                                        "suites/builtin/gemm_bf16_nt"};
    const char *const *dirs = argc > 1 ? (const char *const *)argv + 1 : quick;
    int n = argc > 1 ? argc - 1 : 3;
    printf("%-22s %-34s %9s %9s %5s %9s %9s %9s\n", "task", "sizes (GPU)", "in MB", "out MB",
           "dists", "fill ms", "check ms", "host ms");
    double total = 0;
    for (int i = 0; i < n; i++) total += bench(dirs[i]);
    printf("host part of one validation of these tasks at their GPU sizes: %.1f s\n", total);
    return 0;
}
