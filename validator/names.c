/* Names of languages, element types and verdicts, both ways. */
#include "validator/validator.h"

#include <string.h>

static const char *const langs[] = {"cuda", "opencl"};
static const char *const types[] = {"f32", "f64", "i32", "u32", "i64"};
static const size_t type_sizes[] = {4, 8, 4, 4, 8};
static const char *const verdicts[] = {
    "pass",    "compiled", "rejected", "compile_error", "compile_timeout", "launch_error",
    "timeout", "crash",    "mismatch", "out_of_bounds", "input_modified",  "no_device"};

const char *sg_val_lang_name(sg_val_lang l) { return l < SG_VAL_NLANG ? langs[l] : "?"; }

int sg_val_lang_parse(const char *s, sg_val_lang *out, sg_err *err) {
    for (int i = 0; i < SG_VAL_NLANG; i++)
        if (!strcmp(s, langs[i])) {
            *out = (sg_val_lang)i;
            return 0;
        }
    return sg_errf(err, "unknown device '%s' (expected cuda or opencl)", s);
}

int sg_val_lang_of_path(const char *path, sg_val_lang *out) {
    const char *dot = strrchr(path, '.');
    if (!dot) return -1;
    if (!strcmp(dot, ".cu") || !strcmp(dot, ".cuh"))
        *out = SG_VAL_CUDA;
    else if (!strcmp(dot, ".cl"))
        *out = SG_VAL_OPENCL;
    else
        return -1;
    return 0;
}

size_t sg_val_type_size(sg_val_type t) { return type_sizes[t]; }
const char *sg_val_type_name(sg_val_type t) { return types[t]; }

int sg_val_type_parse(const char *s, sg_val_type *out) {
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (!strcmp(s, types[i])) {
            *out = (sg_val_type)i;
            return 0;
        }
    return -1;
}

const char *sg_val_verdict_name(sg_val_verdict v) {
    return v < SG_VAL_NVERDICT ? verdicts[v] : "?";
}
