/* libFuzzer target: task.json loading, then launch plans and size expressions against the
 * loaded task at every shape. The input is a task.json, optionally followed by a line
 * "//----" and a kernel source whose //@launch and //@scratch lines form the plan (else
 * the plan is "//@launch k grid=ceil_div(N,64) block=64"). Invariants: no crash, leak or
 * undefined behaviour; every failure leaves a message. */
#include "validator/validator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static void write_file(const char *name, const char *data, size_t n) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) abort();
    if (n && fwrite(data, 1, n, f) != n) abort();
    fclose(f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    snprintf(dir, sizeof dir, "/tmp/fuzz_task.XXXXXX");
    if (!mkdtemp(dir)) abort();
    /* the sources a task.json may name; the loader only checks that they exist */
    static const char *const names[] = {"baseline.cl", "baseline.cu", "reference.cl",
                                        "reference.cu"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) write_file(names[i], "x", 1);
    return 0;
}

static void check_err(const sg_err *e) {
    if (!e->msg[0]) abort(); /* a failure must say why */
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    const char *sep = memmem(data, size, "\n//----\n", 8);
    size_t json_len = sep ? (size_t)(sep - (const char *)data) : size;
    write_file("task.json", (const char *)data, json_len);
    sg_val_task t;
    sg_err err;
    err.msg[0] = 0;
    if (sg_val_task_load(dir, &t, &err) < 0) {
        check_err(&err);
        return 0;
    }
    char *src;
    if (sep) {
        size_t n = size - json_len - 8;
        src = malloc(n + 1);
        memcpy(src, sep + 8, n);
        src[n] = 0;
    } else {
        src = strdup("//@launch k grid=ceil_div(N,64) block=64\n");
    }
    sg_val_plan p;
    err.msg[0] = 0;
    if (sg_val_plan_parse(src, &t, "fuzz.cl", &p, &err) == 0) {
        sg_be_limits lim = {.max_block = 1024,
                            .max_grid = {2147483647, 65535, 65535},
                            .max_smem = 49152,
                            .align = 256};
        for (int k = 0; k <= t.ncheck; k++) {
            const sg_val_sizes *s = k < t.ncheck ? &t.check[k] : &t.sizes;
            for (int i = 0; i < p.nlaunch; i++) {
                sg_val_dims dm;
                err.msg[0] = 0;
                if (sg_val_launch_dims(&p.launch[i], s, &lim, "fuzz.cl", &dm, &err) < 0)
                    check_err(&err);
            }
            for (int i = 0; i < t.nscalar; i++) {
                sg_be_arg a;
                err.msg[0] = 0;
                if (sg_val_scalar_arg(&t.scalar[i], s, &a, &err) < 0) check_err(&err);
            }
            for (int i = 0; i < t.nbuf; i++) {
                int64_t v;
                err.msg[0] = 0;
                if (sg_val_expr_eval(t.buf[i].count, s, &v, &err) < 0) check_err(&err);
            }
            for (int i = 0; i < p.nscratch; i++) {
                int64_t v;
                err.msg[0] = 0;
                if (sg_val_expr_eval(p.scratch[i].count, s, &v, &err) < 0) check_err(&err);
            }
            char shape[256];
            sg_val_sizes_format(s, shape, sizeof shape);
        }
        sg_val_plan_free(&p);
    } else {
        check_err(&err);
    }
    free(src);
    sg_val_task_free(&t);
    return 0;
}
