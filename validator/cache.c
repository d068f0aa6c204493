/* Compile cache: the normalized-source hash (plus options, architecture, kernels and
 * task folder) names a compiled program; least recently used entries are dropped. */
#include "validator/internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct entry {
    char hash[33];
    sg_be_prog *prog;
    uint64_t used;
} entry;

struct sg_val_cache {
    const sg_be_ops *ops;
    sg_be *be;
    int cap, n;
    uint64_t tick;
    entry *e;
};

sg_val_cache *sg_val_cache_new(const sg_be_ops *ops, sg_be *be, int capacity) {
    sg_val_cache *c = sg_xcalloc(1, sizeof *c);
    c->ops = ops;
    c->be = be;
    c->cap = capacity > 0 ? capacity : 1;
    c->e = sg_xcalloc((size_t)c->cap, sizeof *c->e);
    return c;
}

void sg_val_cache_free(sg_val_cache *c) {
    if (!c) return;
    for (int i = 0; i < c->n; i++) c->ops->free_prog(c->be, c->e[i].prog);
    free(c->e);
    free(c);
}

int sg_val_cache_get(sg_val_cache *c, const char *src, const char *dir, const char *const *kernels,
                     int nk, const char *opts, sg_be_prog **prog, int *hit, char hash[33],
                     sg_buf *log, sg_err *err) {
    sg_buf key = {0};
    sg_buf_printf(&key, "%s|%s|", opts ? opts : "", dir);
    for (int i = 0; i < nk; i++) sg_buf_printf(&key, "%s,", kernels[i]);
    sg_val_source_hash(src, strlen(src), key.data, hash);
    sg_buf_free(&key);
    c->tick++;
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->e[i].hash, hash)) {
            c->e[i].used = c->tick;
            *prog = c->e[i].prog;
            *hit = 1;
            return 0;
        }
    *hit = 0;
    sg_be_prog *p = NULL;
    int rc = c->ops->compile(c->be, src, dir, kernels, nk, &p, log, err);
    if (rc < 0) return rc;
    int slot = c->n;
    if (c->n == c->cap) { /* evict the least recently used */
        slot = 0;
        for (int i = 1; i < c->n; i++)
            if (c->e[i].used < c->e[slot].used) slot = i;
        c->ops->free_prog(c->be, c->e[slot].prog);
    } else {
        c->n++;
    }
    memcpy(c->e[slot].hash, hash, 33);
    c->e[slot].prog = p;
    c->e[slot].used = c->tick;
    *prog = p;
    return 0;
}
