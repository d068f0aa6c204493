/* Fuzz the validator's text parsers: launch-plan lines, size expressions, the include
 * scanner and the normalized hash, on arbitrary source text. */
#include "common/srcnorm.h"
#include "validator/validator.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *src = malloc(size + 1);
    memcpy(src, data, size);
    src[size] = 0;
    sg_val_buffer bufs[2] = {{.name = "x", .count = "N", .type = SG_VAL_F32, .role = SG_VAL_IN},
                             {.name = "y", .count = "B*N", .type = SG_VAL_F32, .role = SG_VAL_OUT}};
    sg_val_scalar sc[1] = {{.name = "N", .expr = "N", .type = SG_VAL_I32}};
    char *args[] = {"x", "y", "N"};
    sg_val_task t = {.dir = "/nonexistent",
                     .name = "fuzz",
                     .nbuf = 2,
                     .buf = bufs,
                     .nscalar = 1,
                     .scalar = sc,
                     .narg = 3,
                     .args = args};
    t.sizes.n = 2;
    strcpy(t.sizes.name[0], "N");
    t.sizes.value[0] = 1000;
    strcpy(t.sizes.name[1], "B");
    t.sizes.value[1] = 3;
    sg_val_plan p;
    sg_err err;
    if (sg_val_plan_parse(src, &t, "fuzz", &p, &err) == 0) sg_val_plan_free(&p);
    int64_t v;
    sg_val_expr_eval(src, &t.sizes, &v, &err);
    sg_val_check_source(src, size, SG_DEV_CUDA, "/nonexistent", &err);
    char hash[33];
    sg_srcnorm_key(src, size, "o", hash);
    free(src);
    return 0;
}
