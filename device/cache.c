/* Compile cache: the normalized-source hash (plus options, architecture, kernels and
 * task folder) names a compiled program, or the compiler's refusal (a repeated broken
 * candidate costs no compile either); least recently used entries are dropped. */
#include "device/device.h"

#include "common/srcnorm.h"

#include <stdlib.h>
#include <string.h>

typedef struct entry {
    char hash[33];
    sg_be_prog *prog; /* NULL: the compile failed with msg and log */
    char *msg, *log;
    uint64_t used;
} entry;

struct sg_dev_cache {
    const sg_be_ops *ops;
    sg_be *be;
    int cap, n;
    uint64_t tick;
    entry *e;
};

static void drop(sg_dev_cache *c, entry *e) {
    if (e->prog) c->ops->free_prog(c->be, e->prog);
    free(e->msg);
    free(e->log);
    memset(e, 0, sizeof *e);
}

sg_dev_cache *sg_dev_cache_new(const sg_be_ops *ops, sg_be *be, int capacity) {
    sg_dev_cache *c = sg_xcalloc(1, sizeof *c);
    c->ops = ops;
    c->be = be;
    c->cap = capacity > 0 ? capacity : 1;
    c->e = sg_xcalloc((size_t)c->cap, sizeof *c->e);
    return c;
}

void sg_dev_cache_free(sg_dev_cache *c) {
    if (!c) return;
    for (int i = 0; i < c->n; i++) drop(c, &c->e[i]);
    free(c->e);
    free(c);
}

int sg_dev_cache_get(sg_dev_cache *c, const char *src, const char *dir, const char *const *kernels,
                     int nk, const char *opts, sg_be_prog **prog, int *hit, char hash[33],
                     sg_buf *log, sg_err *err) {
    sg_buf key = {0};
    sg_buf_printf(&key, "%s|%s|", opts ? opts : "", dir);
    for (int i = 0; i < nk; i++) sg_buf_printf(&key, "%s,", kernels[i]);
    sg_srcnorm_key(src, strlen(src), key.data, hash);
    sg_buf_free(&key);
    c->tick++;
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->e[i].hash, hash)) {
            entry *e = &c->e[i];
            e->used = c->tick;
            *hit = 1;
            if (!e->prog) {
                sg_buf_append_str(log, e->log);
                return sg_errf(err, "%s", e->msg);
            }
            *prog = e->prog;
            return 0;
        }
    *hit = 0;
    sg_be_prog *p = NULL;
    size_t log_start = log->len;
    int rc = c->ops->compile(c->be, src, dir, kernels, nk, &p, log, err);
    sg_dev_log_scrub(log, log_start);  /* before it is remembered or sent anywhere */
    if (rc == SG_BE_STICKY) return rc; /* the device, not the source: do not remember */
    int slot = c->n;
    if (c->n == c->cap) { /* evict the least recently used */
        slot = 0;
        for (int i = 1; i < c->n; i++)
            if (c->e[i].used < c->e[slot].used) slot = i;
        drop(c, &c->e[slot]);
    } else {
        c->n++;
    }
    entry *e = &c->e[slot];
    memcpy(e->hash, hash, 33);
    e->used = c->tick;
    e->prog = rc == 0 ? p : NULL;
    if (rc < 0) {
        e->msg = sg_xstrdup(err ? err->msg : "compile failed");
        e->log = sg_xstrdup(log->data ? log->data + log_start : "");
        return rc;
    }
    *prog = p;
    return 0;
}
