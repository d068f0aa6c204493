/* The hints of `task init` as command-line options: `specgen task init KERNEL` and
 * `specgen optimize KERNEL` take the same ones (--kernel, --size, --count, --launch,
 * --force), with the same help text. */
#include "common/cli.h"
#include "validator/validator.h"

static int add_size(const char *value, void *out, sg_err *err) {
    return sg_val_init_add_size(out, value, err);
}

static int add_count(const char *value, void *out, sg_err *err) {
    return sg_val_init_add_count(out, value, err);
}

int sg_val_init_cli_opts(sg_val_init_opts *io, struct sg_opt *out) {
    const sg_opt opts[SG_VAL_INIT_NOPTS] = {
        {"kernel", SG_OPT_STR, &io->kernel, "NAME",
         "which kernel of the file; NAME<ARGS> instantiates a template", "the first", NULL, 0},
        {"size", SG_OPT_FN, io, "NAME=VALUE", "value of a size (repeatable)", NULL, add_size, 0},
        {"count", SG_OPT_FN, io, "BUF=EXPR",
         "element count of a buffer, a size expression; new names become sizes (repeatable)",
         "inferred", add_count, 0},
        {"launch", SG_OPT_STR, &io->launch, "PLAN",
         "the launch line's keys: \"grid=... block=... [smem=...]\" (replaces the file's "
         "//@launch line)",
         "inferred", NULL, 0},
        {"force", SG_OPT_FLAG, &io->force, NULL, "overwrite the files of an existing task folder",
         NULL, NULL, 0},
    };
    for (int i = 0; i < SG_VAL_INIT_NOPTS; i++) out[i] = opts[i];
    return SG_VAL_INIT_NOPTS;
}

int sg_val_init_hinted(const sg_val_init_opts *io) {
    return io->kernel || io->launch || io->sizes.n || io->ncount;
}
