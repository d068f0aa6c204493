/* The hints of `task init` as command-line options: `specgen task init KERNEL` and
 * `specgen optimize KERNEL` take the same ones (--kernel, --size, --count, --launch,
 * --force), with the same help text; --precision and --baseline (a KernelBench problem's) are
 * the shared ones that `campaign` takes too (common/opts.h). */
#include "common/cli.h"
#include "common/opts.h"
#include "validator/validator.h"

static int add_size(const char *value, void *out, sg_err *err) {
    return sg_val_init_add_size(out, value, err);
}

static int add_count(const char *value, void *out, sg_err *err) {
    return sg_val_init_add_count(out, value, err);
}

int sg_val_init_cli_opts(sg_val_init_opts *io, struct sg_opt *out) {
    const sg_opt opts[SG_VAL_INIT_NOPTS] = {
        {.name = "kernel",
         .kind = SG_OPT_STR,
         .out = &io->kernel,
         .metavar = "NAME",
         .help = "which kernel of the file; NAME<ARGS> instantiates a template",
         .def = "the first"},
        {.name = "size",
         .kind = SG_OPT_FN,
         .out = io,
         .metavar = "NAME=VALUE",
         .help = "value of a size (repeatable)",
         .fn = add_size},
        {.name = "count",
         .kind = SG_OPT_FN,
         .out = io,
         .metavar = "BUF=EXPR",
         .help =
             "element count of a buffer, a size expression; new names become sizes (repeatable)",
         .def = "inferred",
         .fn = add_count},
        {.name = "launch",
         .kind = SG_OPT_STR,
         .out = &io->launch,
         .metavar = "PLAN",
         .help = "the launch line's keys: \"grid=... block=... [smem=...]\" (replaces the file's "
                 "//@launch line)",
         .def = "inferred"},
        {.name = "force",
         .kind = SG_OPT_FLAG,
         .out = &io->force,
         .help = "overwrite the files of an existing task folder"},
        sg_opt_shared(SG_OD_PRECISION, &io->precision),
        sg_opt_shared(SG_OD_TORCH_BASELINE, &io->baseline),
    };
    for (int i = 0; i < SG_VAL_INIT_NOPTS; i++) out[i] = opts[i];
    return SG_VAL_INIT_NOPTS;
}

int sg_val_init_hinted(const sg_val_init_opts *io) {
    return io->kernel || io->launch || io->sizes.n || io->ncount;
}
