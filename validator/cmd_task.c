/* `specgen task init KERNEL.cu|KERNEL.cl`: a task folder from a bare kernel file. */
#include "common/buf.h"
#include "common/cli.h"
#include "validator/validator.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char details[] =
    "The kernel's signature decides the task: const pointers are inputs, other pointers are\n"
    "outputs, integer parameters are sizes, float parameters are scalars (value 1.0). Every\n"
    "buffer gets the product of the sizes as its element count, and the kernel gets\n"
    "grid=ceil_div(<that count>,256) block=256 unless it has its own //@launch line. The\n"
    "kernel is both the baseline and the reference. Each guess is printed; edit task.json\n"
    "(format: docs/task-format.md) and check with `specgen validate DIR`.\n"
    "\n"
    "Examples:\n"
    "  specgen task init saxpy.cu --size n=1000000\n"
    "  specgen task init matmul.cl --size M=512 --size N=512 --size K=512 --out tasks/matmul\n";

static int add_size(const char *value, void *out, sg_err *err) {
    sg_val_sizes *s = out;
    const char *eq = strchr(value, '=');
    char *end = NULL;
    if (!eq || eq == value || (size_t)(eq - value) >= sizeof s->name[0])
        return sg_errf(err, "'%s' is not NAME=VALUE", value);
    errno = 0;
    long long v = strtoll(eq + 1, &end, 10);
    if (!eq[1] || *end || v < 1)
        return sg_errf(err, "'%s': the value must be a positive integer", value);
    if (errno == ERANGE) /* strtoll saturates: say so rather than use the limit */
        return sg_errf(err, "'%s': the value is too large (the most is %lld)", value, LLONG_MAX);
    if (s->n == SG_VAL_MAX_SIZES) return sg_errf(err, "too many sizes");
    snprintf(s->name[s->n], sizeof s->name[0], "%.*s", (int)(eq - value), value);
    s->value[s->n++] = v;
    return 0;
}

int sg_cmd_task(int argc, char **argv) {
    const char *out = NULL;
    sg_val_sizes sizes = {0};
    const sg_opt opts[] = {
        {"out", SG_OPT_STR, &out, "DIR", "output folder", "./KERNEL_NAME", NULL, 0},
        {"size", SG_OPT_FN, &sizes, "NAME=VALUE", "value of a size parameter (repeatable)", NULL,
         add_size, 0},
        {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
    };
    const sg_cmd_spec spec = {"task",
                              "init KERNEL.cu|KERNEL.cl",
                              "Make a task folder from a kernel file.",
                              details,
                              opts,
                              2,
                              2};
    char **pos;
    int npos;
    int rc = sg_cli_parse(&spec, argc, argv, &pos, &npos);
    if (rc == SG_CLI_HELP) return 0;
    if (rc != SG_CLI_OK) return 2;
    if (strcmp(pos[0], "init"))
        return sg_cli_fail(&spec, 2, "unknown subcommand '%s' (expected init)", pos[0]);
    char dflt[256];
    if (!out) {
        const char *b = strrchr(pos[1], '/');
        b = b ? b + 1 : pos[1];
        const char *dot = strrchr(b, '.');
        snprintf(dflt, sizeof dflt, "%.*s", (int)(dot ? dot - b : (long)strlen(b)), b);
        out = dflt;
    }
    sg_buf report = {0};
    sg_err err;
    rc = sg_val_task_init(pos[1], out, &sizes, &report, &err);
    if (rc < 0) {
        sg_buf_free(&report);
        return sg_cli_fail(&spec, 1, "%s", err.msg);
    }
    printf("wrote %s/task.json from %s; what was guessed:\n%s", out, pos[1],
           report.data ? report.data : "");
    printf("next: specgen validate %s\n", out);
    sg_buf_free(&report);
    return 0;
}
