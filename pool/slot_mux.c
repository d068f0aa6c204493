/* Two sets of slots behind one scheduler: local slots first, remote ones after (pool.h). */
#include "pool/pool.h"

static int part(const sg_pool_mux *m, int slot) { return slot >= m->n0 && m->ops[1] ? 1 : 0; }

static int mux_start(void *impl, int slot, const sg_pool_job *job, sg_err *err) {
    sg_pool_mux *m = impl;
    int k = part(m, slot);
    return m->ops[k]->start(m->impl[k], slot, job, err);
}

static void mux_kill(void *impl, int slot) {
    sg_pool_mux *m = impl;
    int k = part(m, slot);
    m->ops[k]->kill(m->impl[k], slot);
}

static void mux_role(void *impl, int slot, sg_pool_role role) {
    sg_pool_mux *m = impl;
    int k = part(m, slot);
    if (m->ops[k]->role) m->ops[k]->role(m->impl[k], slot, role);
}

const sg_pool_slot_ops sg_pool_mux_ops = {mux_start, mux_kill, mux_role};
