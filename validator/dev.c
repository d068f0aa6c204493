/* The device side of a worker: backend, compile cache, architecture. */
#include "validator/internal.h"

#include <stdio.h>

#define CACHE_ENTRIES 64

int sg_val_dev_open(sg_val_dev *d, const sg_val_pool_opts *o, sg_err *err) {
    d->opts = *o;
    d->lang = o->device;
    d->ops = sg_be_ops_for(o->device);
    int rc = d->ops->open(&d->be, o, err);
    if (rc < 0) return rc;
    sg_be_limits lim;
    d->ops->limits(d->be, &lim);
    snprintf(d->arch, sizeof d->arch, "%s", lim.arch);
    d->cache = sg_val_cache_new(d->ops, d->be, CACHE_ENTRIES);
    return 0;
}

void sg_val_dev_close(sg_val_dev *d) {
    sg_val_cache_free(d->cache);
    if (d->be) d->ops->close(d->be);
    d->cache = NULL;
    d->be = NULL;
}
