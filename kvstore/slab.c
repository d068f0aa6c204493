#include "kvstore/slab.h"

#include "common/assert.h"
#include "common/buf.h"

#include <stdlib.h>
#include <string.h>

/* Size classes: 64 B .. 512 KiB, four per power of two (64, 80, 96, 112, 128, 160, ...). */
#define NCLASSES 53
#define NONE UINT32_MAX

enum { PG_FREE = 0, PG_WHOLE, PG_SLAB };

typedef struct slabpage {
    int cls;
    uint32_t nslots, nfree;
    uint32_t *freel;     /* stack of free slot indices */
    void **owners;       /* per slot; NULL when free */
    uint32_t prev, next; /* the class's list of pages with free slots */
    int listed;
} slabpage;

struct sg_kv_slab {
    uint32_t npages, limit, chunk_pages, nchunks;
    uint8_t *kind;
    void **owner;                   /* per page, for whole pages */
    slabpage **sp;                  /* per page, for slab pages */
    uint64_t *freemap;              /* bit set: page free */
    uint32_t hint;                  /* no free page below this index */
    uint32_t used_pages, used_high; /* used_high: used pages at or above the limit */
    uint32_t *chunk_used;
    uint8_t *chunk_held;
    uint32_t partial[NCLASSES];
    uint64_t slot_bytes;
};

int sg_kv_slab_nclasses(void) { return NCLASSES; }

uint32_t sg_kv_slab_class_size(int i) {
    uint32_t base = 1u << (6 + i / 4);
    return base + (uint32_t)(i % 4) * (base / 4);
}

static int class_of(uint64_t n) {
    int lo = 0, hi = NCLASSES - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (sg_kv_slab_class_size(mid) >= n)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

sg_kv_slab *sg_kv_slab_new(uint64_t capacity, uint32_t chunk_pages) {
    uint64_t np = capacity >> SG_KV_PAGE_SHIFT;
    if (np == 0 || np > UINT32_MAX / 2 || chunk_pages == 0) return NULL;
    sg_kv_slab *s = sg_xcalloc(1, sizeof *s);
    s->npages = s->limit = (uint32_t)np;
    s->chunk_pages = chunk_pages;
    s->nchunks = (uint32_t)((np + chunk_pages - 1) / chunk_pages);
    s->kind = sg_xcalloc(np, 1);
    s->owner = sg_xcalloc(np, sizeof *s->owner);
    s->sp = sg_xcalloc(np, sizeof *s->sp);
    s->freemap = sg_xcalloc((np + 63) / 64, 8);
    for (uint64_t p = 0; p < np; p++) s->freemap[p / 64] |= 1ull << (p % 64);
    s->chunk_used = sg_xcalloc(s->nchunks, sizeof *s->chunk_used);
    s->chunk_held = sg_xcalloc(s->nchunks, 1);
    memset(s->chunk_held, 1, s->nchunks);
    for (int i = 0; i < NCLASSES; i++) s->partial[i] = NONE;
    return s;
}

void sg_kv_slab_destroy(sg_kv_slab *s) {
    if (!s) return;
    for (uint32_t p = 0; p < s->npages; p++) {
        if (s->sp[p]) {
            free(s->sp[p]->freel);
            free(s->sp[p]->owners);
            free(s->sp[p]);
        }
    }
    free(s->kind);
    free(s->owner);
    free(s->sp);
    free(s->freemap);
    free(s->chunk_used);
    free(s->chunk_held);
    free(s);
}

uint32_t sg_kv_slab_max_ext(uint64_t n) { return (uint32_t)((n >> SG_KV_PAGE_SHIFT) + 2); }

static uint32_t free_below(const sg_kv_slab *s) {
    return s->limit - (s->used_pages - s->used_high);
}

static uint32_t take_page(sg_kv_slab *s) {
    for (uint32_t w = s->hint / 64; w * 64 < s->limit; w++) {
        if (!s->freemap[w]) continue;
        uint32_t p = w * 64 + (uint32_t)__builtin_ctzll(s->freemap[w]);
        if (p >= s->limit) break;
        SG_ASSERT(s->kind[p] == PG_FREE);
        s->freemap[w] &= ~(1ull << (p % 64));
        s->hint = p;
        s->used_pages++;
        s->chunk_used[p / s->chunk_pages]++;
        return p;
    }
    /* Every caller checked free_below() first: no free page below the limit means the
     * free map and used_pages disagree. */
    SG_UNREACHABLE("take_page: no free page below the limit though free_below() said so");
}

static void put_page(sg_kv_slab *s, uint32_t p) {
    SG_ASSERT(p < s->npages && s->kind[p] != PG_FREE); /* released twice, or never taken */
    SG_ASSERT(s->used_pages > 0 && s->chunk_used[p / s->chunk_pages] > 0);
    SG_ASSERT(p < s->limit || s->used_high > 0);
    s->kind[p] = PG_FREE;
    s->owner[p] = NULL;
    s->freemap[p / 64] |= 1ull << (p % 64);
    if (p < s->hint) s->hint = p;
    s->used_pages--;
    if (p >= s->limit) s->used_high--;
    s->chunk_used[p / s->chunk_pages]--;
}

static void list_add(sg_kv_slab *s, uint32_t p) {
    slabpage *sp = s->sp[p];
    SG_ASSERT(!sp->listed && sp->nfree > 0);
    sp->prev = NONE;
    sp->next = s->partial[sp->cls];
    if (sp->next != NONE) s->sp[sp->next]->prev = p;
    s->partial[sp->cls] = p;
    sp->listed = 1;
}

static void list_del(sg_kv_slab *s, uint32_t p) {
    slabpage *sp = s->sp[p];
    SG_ASSERT(sp->listed);
    if (sp->prev != NONE)
        s->sp[sp->prev]->next = sp->next;
    else
        s->partial[sp->cls] = sp->next;
    if (sp->next != NONE) s->sp[sp->next]->prev = sp->prev;
    sp->listed = 0;
}

static uint32_t partial_below_limit(const sg_kv_slab *s, int cls) {
    for (uint32_t p = s->partial[cls]; p != NONE; p = s->sp[p]->next)
        if (p < s->limit) return p;
    return NONE;
}

static uint32_t new_slab_page(sg_kv_slab *s, int cls) {
    uint32_t p = take_page(s);
    slabpage *sp = sg_xcalloc(1, sizeof *sp);
    sp->cls = cls;
    sp->nslots = sp->nfree = (uint32_t)(SG_KV_PAGE / sg_kv_slab_class_size(cls));
    sp->freel = sg_xmalloc(sp->nslots * sizeof *sp->freel);
    sp->owners = sg_xcalloc(sp->nslots, sizeof *sp->owners);
    for (uint32_t i = 0; i < sp->nslots; i++) sp->freel[i] = sp->nslots - 1 - i;
    s->kind[p] = PG_SLAB;
    s->sp[p] = sp;
    list_add(s, p);
    return p;
}

int sg_kv_slab_alloc(sg_kv_slab *s, uint64_t n, void *owner, sg_kv_ext *ext) {
    uint64_t full = n >> SG_KV_PAGE_SHIFT, tail = n & (SG_KV_PAGE - 1);
    if (tail > SG_KV_PAGE / 2) { /* a big tail takes a whole page of its own */
        full++;
        tail = 0;
    }
    int cls = tail ? class_of(tail) : -1;
    uint32_t spage = cls >= 0 ? partial_below_limit(s, cls) : NONE;
    uint64_t need = full + (cls >= 0 && spage == NONE);
    if (need > free_below(s)) return -1;
    int ne = 0;
    uint64_t left = n - tail;
    for (uint64_t k = 0; k < full; k++) {
        uint32_t p = take_page(s);
        uint64_t len = left < SG_KV_PAGE ? left : SG_KV_PAGE;
        left -= len;
        s->kind[p] = PG_WHOLE;
        s->owner[p] = owner;
        uint64_t off = (uint64_t)p << SG_KV_PAGE_SHIFT;
        sg_kv_ext *last = ne ? &ext[ne - 1] : NULL;
        if (last && last->off + last->len == off && last->len % SG_KV_PAGE == 0 &&
            p % s->chunk_pages != 0)
            last->len += len;
        else
            ext[ne++] = (sg_kv_ext){off, len};
    }
    if (cls >= 0) {
        if (spage == NONE) spage = new_slab_page(s, cls);
        slabpage *sp = s->sp[spage];
        SG_ASSERT(sp->cls == cls && sp->nfree > 0 && sp->listed);
        uint32_t slot = sp->freel[--sp->nfree];
        SG_ASSERT(slot < sp->nslots && sp->owners[slot] == NULL);
        sp->owners[slot] = owner;
        if (sp->nfree == 0) list_del(s, spage);
        uint32_t size = sg_kv_slab_class_size(cls);
        s->slot_bytes += size;
        ext[ne++] =
            (sg_kv_ext){((uint64_t)spage << SG_KV_PAGE_SHIFT) + (uint64_t)slot * size, tail};
    }
    return ne;
}

void sg_kv_slab_release(sg_kv_slab *s, const sg_kv_ext *ext, uint32_t n_ext) {
    for (uint32_t i = 0; i < n_ext; i++) {
        uint32_t p = (uint32_t)(ext[i].off >> SG_KV_PAGE_SHIFT);
        SG_ASSERT(p < s->npages);
        SG_ASSERT(s->kind[p] != PG_FREE); /* an extent released twice, or never allocated */
        if (s->kind[p] == PG_WHOLE) {
            uint64_t np = (ext[i].len + SG_KV_PAGE - 1) >> SG_KV_PAGE_SHIFT;
            for (uint64_t k = 0; k < np; k++) put_page(s, p + (uint32_t)k);
            continue;
        }
        slabpage *sp = s->sp[p];
        uint32_t size = sg_kv_slab_class_size(sp->cls);
        uint32_t slot = (uint32_t)((ext[i].off - ((uint64_t)p << SG_KV_PAGE_SHIFT)) / size);
        SG_ASSERT(slot < sp->nslots && sp->owners[slot] != NULL); /* a slot released twice */
        SG_ASSERT(sp->nfree < sp->nslots && s->slot_bytes >= size);
        sp->owners[slot] = NULL;
        sp->freel[sp->nfree++] = slot;
        s->slot_bytes -= size;
        if (sp->nfree == sp->nslots) { /* empty: the page goes back to the pool */
            if (sp->listed) list_del(s, p);
            free(sp->freel);
            free(sp->owners);
            free(sp);
            s->sp[p] = NULL;
            put_page(s, p);
        } else if (!sp->listed) {
            list_add(s, p);
        }
    }
}

uint64_t sg_kv_slab_capacity(const sg_kv_slab *s) {
    return (uint64_t)s->npages << SG_KV_PAGE_SHIFT;
}
uint64_t sg_kv_slab_used(const sg_kv_slab *s) {
    return (uint64_t)s->used_pages << SG_KV_PAGE_SHIFT;
}
uint64_t sg_kv_slab_limit(const sg_kv_slab *s) { return (uint64_t)s->limit << SG_KV_PAGE_SHIFT; }
uint64_t sg_kv_slab_slot_bytes(const sg_kv_slab *s) { return s->slot_bytes; }

void sg_kv_slab_set_limit(sg_kv_slab *s, uint64_t bytes) {
    uint64_t l = bytes >> SG_KV_PAGE_SHIFT;
    s->limit = l < s->npages ? (uint32_t)l : s->npages;
    s->used_high = 0;
    for (uint32_t p = s->limit; p < s->npages; p++) s->used_high += s->kind[p] != PG_FREE;
}

size_t sg_kv_slab_owners_above(const sg_kv_slab *s, void ***out) {
    size_t n = 0, cap = 16;
    void **v = sg_xmalloc(cap * sizeof *v);
    for (uint32_t p = s->limit; p < s->npages; p++) {
        if (s->kind[p] == PG_FREE) continue;
        uint32_t k = s->kind[p] == PG_WHOLE ? 1 : s->sp[p]->nslots;
        for (uint32_t i = 0; i < k; i++) {
            void *o = s->kind[p] == PG_WHOLE ? s->owner[p] : s->sp[p]->owners[i];
            if (!o) continue;
            if (n == cap) v = sg_xrealloc(v, (cap *= 2) * sizeof *v);
            v[n++] = o;
        }
    }
    *out = v;
    return n;
}

uint32_t sg_kv_slab_chunks(const sg_kv_slab *s) { return s->nchunks; }
uint32_t sg_kv_slab_chunk_pages(const sg_kv_slab *s) { return s->chunk_pages; }

int64_t sg_kv_slab_releasable_chunk(const sg_kv_slab *s) {
    for (uint32_t c = s->nchunks; c-- > 0;) {
        if ((uint64_t)c * s->chunk_pages < s->limit) break;
        if (s->chunk_held[c] && s->chunk_used[c] == 0) return c;
    }
    return -1;
}

void sg_kv_slab_mark_chunk(sg_kv_slab *s, uint32_t chunk, int held) {
    s->chunk_held[chunk] = held != 0;
}
int sg_kv_slab_chunk_held(const sg_kv_slab *s, uint32_t chunk) { return s->chunk_held[chunk]; }
