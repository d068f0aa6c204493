/* Several kernels of one file launched in order (a two-pass reduction: a partial kernel
 * and a finish kernel): the chain shows in the parameters. A pointer parameter name that
 * one kernel writes and a later kernel reads, and that no kernel after that reader
 * writes again, is scratch between them (//@scratch), not a task buffer. The file is a
 * chain when every kernel after the first reads scratch written before it; then init
 * writes one //@launch line per kernel, in file order. Pure: kernels and bodies in. */
#include "validator/infer.h"

#include <stdio.h>
#include <string.h>

static int param_of(const sg_infer_kernel *k, const char *name) {
    for (int i = 0; i < k->np; i++)
        if (k->p[i].pointer && !strcmp(k->p[i].name, name)) return i;
    return -1;
}

static int reads(const sg_infer_kernel *k, const sg_infer_body *b, int i) {
    return k->p[i].is_const || !b->written[i] || b->read[i];
}

int sg_infer_find_chain(const sg_infer_kernel *ks, const sg_infer_body *bs, int nk,
                        sg_infer_chain *c) {
    memset(c, 0, sizeof *c);
    if (nk < 2) return 0;
    for (int i = 0; i < nk; i++)
        if (ks[i].tparams[0] || ks[i].bad[0]) return 0; /* templates: one at a time */
    for (int w = 0; w < nk; w++)
        for (int p = 0; p < ks[w].np; p++) {
            const char *name = ks[w].p[p].name;
            if (!ks[w].p[p].pointer || !bs[w].written[p] || c->nscratch == SG_INFER_MAX_SCRATCH)
                continue;
            int last_reader = -1, rewritten = 0, dup = 0;
            for (int s = 0; s < c->nscratch; s++) dup |= !strcmp(c->name[s], name);
            for (int r = w + 1; r < nk; r++) {
                int q = param_of(&ks[r], name);
                if (q < 0) continue;
                if (last_reader >= 0 && bs[r].written[q]) rewritten = 1;
                if (reads(&ks[r], &bs[r], q) && !bs[r].written[q]) last_reader = r;
            }
            if (dup || last_reader < 0 || rewritten) continue;
            snprintf(c->name[c->nscratch], sizeof c->name[0], "%s", name);
            c->writer[c->nscratch] = w;
            c->writer_param[c->nscratch++] = p;
        }
    for (int r = 1; r < nk; r++) { /* every later kernel reads scratch written before it */
        int linked = 0;
        for (int s = 0; s < c->nscratch; s++) {
            int q = param_of(&ks[r], c->name[s]);
            linked |= c->writer[s] < r && q >= 0 && reads(&ks[r], &bs[r], q);
        }
        if (!linked) {
            c->nscratch = 0;
            return 0;
        }
    }
    c->n = nk;
    return nk;
}

int sg_infer_chain_scratch(const sg_infer_chain *c, const char *name) {
    for (int s = 0; s < c->nscratch; s++)
        if (!strcmp(c->name[s], name)) return s;
    return -1;
}
