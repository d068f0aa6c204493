/* The device side of a worker: backend, compile cache, architecture. */
#include "device/device.h"

#include <stdio.h>

#define CACHE_ENTRIES 64

int sg_dev_open(sg_dev *d, const sg_dev_opts *o, sg_err *err) {
    d->opts = *o;
    d->lang = o->device;
    d->ops = sg_be_ops_for(o->device);
    int rc = d->ops->open(&d->be, o, err);
    if (rc < 0) return rc;
    sg_be_limits lim;
    d->ops->limits(d->be, &lim);
    snprintf(d->arch, sizeof d->arch, "%s", lim.arch);
    d->cache = sg_dev_cache_new(d->ops, d->be, CACHE_ENTRIES);
    return 0;
}

void sg_dev_close(sg_dev *d) {
    sg_dev_cache_free(d->cache);
    if (d->be) d->ops->close(d->be);
    d->cache = NULL;
    d->be = NULL;
}
