/* launch.h — one launch-plan line evaluated at one shape (internal). */
#ifndef SG_VAL_LAUNCH_H
#define SG_VAL_LAUNCH_H

#include "validator/validator.h"

typedef struct sg_val_dims {
    uint64_t grid[3], block[3], smem;
} sg_val_dims;

/* Grid, block and smem at shape s, checked against the device limits; errors name the
 * source line, the shape and the limit. */
int sg_val_launch_dims(const sg_val_launch *l, const sg_val_sizes *s, const sg_be_limits *lim,
                       const char *where, sg_val_dims *out, sg_err *err);
/* A task scalar's bytes at shape s. */
int sg_val_scalar_arg(const sg_val_scalar *sc, const sg_val_sizes *s, sg_be_arg *a, sg_err *err);

#endif
