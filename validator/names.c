/* Names of element types and verdicts, both ways. */
#include "validator/validator.h"

#include <string.h>

static const char *const types[] = {"f32",  "f64",      "i32",      "u32", "i64", "f16",
                                    "bf16", "fp8_e4m3", "fp8_e5m2", "u8",  "i8"};
static const size_t type_sizes[] = {4, 8, 4, 4, 8, 2, 2, 1, 1, 1, 1};
static const char *const verdicts[] = {
    "pass",    "compiled", "rejected", "compile_error", "compile_timeout", "launch_error",
    "timeout", "crash",    "mismatch", "out_of_bounds", "input_modified",  "no_device"};

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

int sg_val_verdict_parse(const char *s, sg_val_verdict *out) {
    for (int i = 0; s && i < SG_VAL_NVERDICT; i++)
        if (!strcmp(s, verdicts[i])) {
            *out = (sg_val_verdict)i;
            return 0;
        }
    return -1;
}
