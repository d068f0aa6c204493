#include "kvstore/store.h"

#include "common/assert.h"
#include "common/buf.h"
#include "common/log.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MIN_BUCKETS 1024

struct sg_kv_store {
    pthread_mutex_t mu;
    sg_kv_backend *be;
    sg_kv_slab *slab;
    uint64_t seed;
    sg_kv_entry **buckets;
    uint64_t nbuckets, count, expires;
    sg_kv_entry *lru_head, *lru_tail; /* head: most recently used */
    sg_kv_val *arriving;              /* values whose bytes are still coming in */
    uint64_t expire_cursor;
    sg_kv_stats st;
};

static uint64_t hash_key(uint64_t seed, const char *k, size_t n) {
    uint64_t h = 1469598103934665603ull ^ seed;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)k[i]) * 1099511628211ull;
    h ^= h >> 33; /* spread the high bits into the low ones the table uses */
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

sg_kv_store *sg_kv_store_new(sg_kv_backend *be, uint64_t hash_seed) {
    uint32_t chunk_pages = (uint32_t)(be->chunk_bytes >> SG_KV_PAGE_SHIFT);
    sg_kv_slab *slab = sg_kv_slab_new(be->capacity, chunk_pages ? chunk_pages : 1);
    if (!slab) return NULL;
    sg_kv_store *st = sg_xcalloc(1, sizeof *st);
    pthread_mutex_init(&st->mu, NULL);
    st->be = be;
    st->slab = slab;
    st->seed = hash_seed;
    st->nbuckets = MIN_BUCKETS;
    st->buckets = sg_xcalloc(st->nbuckets, sizeof *st->buckets);
    return st;
}

void sg_kv_store_lock(sg_kv_store *st) { pthread_mutex_lock(&st->mu); }
void sg_kv_store_unlock(sg_kv_store *st) { pthread_mutex_unlock(&st->mu); }
sg_kv_backend *sg_kv_store_backend(sg_kv_store *st) { return st->be; }

/* ---- values ---- */

static void release_chunks(sg_kv_store *st) {
    int64_t c;
    while ((c = sg_kv_slab_releasable_chunk(st->slab)) >= 0) {
        sg_err err;
        if (st->be->ops->release(st->be, (uint32_t)c, &err) != 0) {
            sg_warn("kvstore", "%s", err.msg);
            return;
        }
        sg_kv_slab_mark_chunk(st->slab, (uint32_t)c, 0);
        st->st.released_bytes += st->be->chunk_bytes;
    }
}

static void lru_unlink(sg_kv_store *st, sg_kv_entry *e) {
    if (e->lprev)
        e->lprev->lnext = e->lnext;
    else
        st->lru_head = e->lnext;
    if (e->lnext)
        e->lnext->lprev = e->lprev;
    else
        st->lru_tail = e->lprev;
    e->lprev = e->lnext = NULL;
}

static void lru_push(sg_kv_store *st, sg_kv_entry *e) {
    e->lprev = NULL;
    e->lnext = st->lru_head;
    if (st->lru_head) st->lru_head->lprev = e;
    st->lru_head = e;
    if (!st->lru_tail) st->lru_tail = e;
}

static void remove_entry(sg_kv_store *st, sg_kv_entry *e) {
    sg_kv_entry **pp = &st->buckets[e->hash & (st->nbuckets - 1)];
    while (*pp != e) pp = &(*pp)->hnext;
    *pp = e->hnext;
    lru_unlink(st, e);
    st->count--;
    if (e->expire_ms) st->expires--;
    e->val->entry = NULL;
    sg_kv_val_unref(st, e->val);
    SG_ASSERT(st->st.meta_bytes >= sizeof *e + e->klen);
    st->st.meta_bytes -= sizeof *e + e->klen;
    free(e);
}

static int evict_one(sg_kv_store *st) {
    if (!st->lru_tail) return -1;
    remove_entry(st, st->lru_tail);
    st->st.evicted++;
    return 0;
}

/* Allocate n bytes for v into ext, evicting least-recently-used keys until they fit.
 * Returns the extent count, or -1 with a message. */
static int alloc_evicting(sg_kv_store *st, sg_kv_val *v, uint64_t n, sg_kv_ext *ext, uint64_t whole,
                          sg_err *err) {
    int k;
    while ((k = sg_kv_slab_alloc(st->slab, n, v, ext)) < 0) {
        if (st->st.policy == SG_KV_NOEVICTION || evict_one(st) != 0) {
            sg_errf(err, "no room for a value of %llu bytes: %llu of %llu bytes used%s",
                    (unsigned long long)whole, (unsigned long long)sg_kv_slab_used(st->slab),
                    (unsigned long long)sg_kv_slab_limit(st->slab),
                    st->st.policy == SG_KV_NOEVICTION ? " and the policy is noeviction"
                                                      : " by values in flight");
            return -1;
        }
    }
    return k;
}

static sg_kv_val *val_alloc(sg_kv_store *st, uint64_t len, sg_err *err) {
    uint64_t limit = sg_kv_slab_limit(st->slab);
    if (len > limit) {
        sg_errf(err, "a value of %llu bytes is larger than maxmemory (%llu bytes)",
                (unsigned long long)len, (unsigned long long)limit);
        return NULL;
    }
    uint32_t max_ext = sg_kv_slab_max_ext(len);
    sg_kv_val *v = sg_xcalloc(1, sizeof *v + max_ext * sizeof(sg_kv_ext));
    v->len = len;
    v->refs = 1;
    st->st.meta_bytes += sizeof *v + max_ext * sizeof(sg_kv_ext);
    return v;
}

static void val_free(sg_kv_store *st, sg_kv_val *v) {
    SG_ASSERT(st->st.meta_bytes >= sizeof *v + sg_kv_slab_max_ext(v->len) * sizeof(sg_kv_ext));
    st->st.meta_bytes -= sizeof *v + sg_kv_slab_max_ext(v->len) * sizeof(sg_kv_ext);
    free(v);
}

sg_kv_val *sg_kv_val_new(sg_kv_store *st, uint64_t len, sg_err *err) {
    sg_kv_val *v = val_alloc(st, len, err);
    if (!v) return NULL;
    int n = alloc_evicting(st, v, len, v->ext, len, err);
    if (n < 0) {
        val_free(st, v);
        return NULL;
    }
    v->n_ext = (uint32_t)n;
    v->room = len;
    st->st.value_bytes += len;
    return v;
}

static void arriving_unlink(sg_kv_store *st, sg_kv_val *v) {
    if (!v->arriving) return;
    if (v->aprev)
        v->aprev->anext = v->anext;
    else
        st->arriving = v->anext;
    if (v->anext) v->anext->aprev = v->aprev;
    v->aprev = v->anext = NULL;
    v->arriving = 0;
}

/* Give the value's region memory back (it keeps its references). */
static void val_release_memory(sg_kv_store *st, sg_kv_val *v) {
    sg_kv_slab_release(st->slab, v->ext, v->n_ext);
    SG_ASSERT(st->st.value_bytes >= v->room); /* the budget counts every byte once */
    st->st.value_bytes -= v->room;
    v->n_ext = 0;
    v->room = 0;
    if (sg_kv_slab_limit(st->slab) < sg_kv_slab_capacity(st->slab)) release_chunks(st);
}

sg_kv_val *sg_kv_val_new_arriving(sg_kv_store *st, uint64_t len, sg_err *err) {
    sg_kv_val *v = val_alloc(st, len, err);
    if (!v) return NULL;
    v->arriving = 1;
    v->anext = st->arriving;
    if (st->arriving) st->arriving->aprev = v;
    st->arriving = v;
    return v;
}

int sg_kv_val_reserve(sg_kv_store *st, sg_kv_val *v, uint64_t upto, sg_err *err) {
    if (v->dropped)
        return sg_errf(err, "maxmemory was lowered to %llu bytes while the value arrived",
                       (unsigned long long)sg_kv_slab_limit(st->slab));
    if (upto > v->len) upto = v->len;
    /* The value's whole pages come one step at a time, then its tail: the extents end up
     * exactly as sg_kv_slab_alloc would lay out the whole value (at most max_ext). */
    uint64_t whole = v->len & ~(SG_KV_PAGE - 1);
    while (v->room < upto) {
        uint64_t n = v->room < whole ? (upto < whole ? upto : whole) - v->room : v->len - v->room;
        if (v->room < whole) n = (n + SG_KV_PAGE - 1) & ~(SG_KV_PAGE - 1);
        int k = alloc_evicting(st, v, n, v->ext + v->n_ext, v->len, err);
        if (k < 0) {
            val_release_memory(st, v);
            arriving_unlink(st, v);
            return -1;
        }
        v->n_ext += (uint32_t)k;
        SG_ASSERT(v->n_ext <= sg_kv_slab_max_ext(v->len)); /* the extents fit their array */
        v->room += n;
        st->st.value_bytes += n;
    }
    v->writing = 1;
    return 0;
}

int sg_kv_val_written(sg_kv_store *st, sg_kv_val *v, int complete) {
    v->writing = 0;
    if (v->dropped) {
        val_release_memory(st, v);
        arriving_unlink(st, v);
        return -1;
    }
    if (complete) arriving_unlink(st, v);
    return 0;
}

void sg_kv_val_ref(sg_kv_val *v) { v->refs++; }

void sg_kv_val_unref(sg_kv_store *st, sg_kv_val *v) {
    if (--v->refs) return;
    arriving_unlink(st, v);
    val_release_memory(st, v);
    val_free(st, v);
}

/* Walk the extents covering [off, off + n): fn(region offset, value offset, length). */
#define FOR_EXTENTS(v, off, n, ROFF, VOFF, LEN, BODY)                                              \
    do {                                                                                           \
        uint64_t base_ = 0, end_ = (off) + (n);                                                    \
        for (uint32_t i_ = 0; i_ < (v)->n_ext && base_ < end_; i_++) {                             \
            uint64_t elen_ = (v)->ext[i_].len;                                                     \
            if (base_ + elen_ > (off)) {                                                           \
                uint64_t from_ = (off) > base_ ? (off)-base_ : 0;                                  \
                uint64_t to_ = end_ - base_ < elen_ ? end_ - base_ : elen_;                        \
                uint64_t ROFF = (v)->ext[i_].off + from_, VOFF = base_ + from_;                    \
                uint64_t LEN = to_ - from_;                                                        \
                BODY                                                                               \
            }                                                                                      \
            base_ += elen_;                                                                        \
        }                                                                                          \
    } while (0)

int sg_kv_val_write(sg_kv_store *st, const sg_kv_val *v, uint64_t off, const void *src, size_t n,
                    sg_err *err) {
    FOR_EXTENTS(v, off, n, roff, voff, len, {
        if (st->be->ops->write(st->be, roff, (const char *)src + (voff - off), len, err) != 0)
            return -1;
    });
    return 0;
}

int sg_kv_val_read(sg_kv_store *st, const sg_kv_val *v, uint64_t off, void *dst, size_t n,
                   sg_err *err) {
    FOR_EXTENTS(v, off, n, roff, voff, len, {
        if (st->be->ops->read(st->be, roff, (char *)dst + (voff - off), len, err) != 0) return -1;
    });
    return 0;
}

int sg_kv_val_iov(sg_kv_store *st, const sg_kv_val *v, uint64_t off, uint64_t max_bytes,
                  struct iovec *iov, int max_iov) {
    int k = 0;
    uint64_t n = v->len - off < max_bytes ? v->len - off : max_bytes;
    FOR_EXTENTS(v, off, n, roff, voff, len, {
        (void)voff;
        if (k == max_iov) return k;
        iov[k].iov_base = st->be->host_base + roff;
        iov[k].iov_len = len;
        k++;
    });
    return k;
}

/* ---- keyspace ---- */

static void resize(sg_kv_store *st, uint64_t n) {
    sg_kv_entry **nb = sg_xcalloc(n, sizeof *nb);
    for (uint64_t b = 0; b < st->nbuckets; b++) {
        for (sg_kv_entry *e = st->buckets[b], *next; e; e = next) {
            next = e->hnext;
            e->hnext = nb[e->hash & (n - 1)];
            nb[e->hash & (n - 1)] = e;
        }
    }
    free(st->buckets);
    st->buckets = nb;
    st->nbuckets = n;
}

static int expired(const sg_kv_entry *e, int64_t now) {
    return e->expire_ms && e->expire_ms <= now;
}

/* The live entry for key, or NULL (an expired one is removed on the way). */
static sg_kv_entry *find(sg_kv_store *st, const char *key, size_t klen, int64_t now) {
    uint64_t h = hash_key(st->seed, key, klen);
    for (sg_kv_entry *e = st->buckets[h & (st->nbuckets - 1)]; e; e = e->hnext) {
        if (e->hash != h || e->klen != klen || memcmp(e->key, key, klen) != 0) continue;
        if (expired(e, now)) {
            remove_entry(st, e);
            st->st.expired++;
            return NULL;
        }
        return e;
    }
    return NULL;
}

static sg_kv_entry *lookup_touch(sg_kv_store *st, const char *key, size_t klen, int64_t now) {
    sg_kv_entry *e = find(st, key, klen, now);
    if (!e) {
        st->st.misses++;
        return NULL;
    }
    st->st.hits++;
    lru_unlink(st, e);
    lru_push(st, e);
    return e;
}

sg_kv_val *sg_kv_get(sg_kv_store *st, const char *key, size_t klen, int64_t now_ms) {
    sg_kv_entry *e = lookup_touch(st, key, klen, now_ms);
    return e ? e->val : NULL;
}

int sg_kv_exists(sg_kv_store *st, const char *key, size_t klen, int64_t now_ms) {
    return lookup_touch(st, key, klen, now_ms) != NULL;
}

static void set_expire(sg_kv_store *st, sg_kv_entry *e, int64_t at) {
    st->expires += (at != 0) - (e->expire_ms != 0);
    e->expire_ms = at;
}

/* Whether the value has bytes in pages at or above the limit (it was allocated before
 * maxmemory was lowered). */
static int above_limit(sg_kv_store *st, const sg_kv_val *v) {
    uint64_t limit = sg_kv_slab_limit(st->slab);
    for (uint32_t i = 0; i < v->n_ext; i++)
        if (v->ext[i].off + v->ext[i].len > limit) return 1;
    return 0;
}

int sg_kv_set(sg_kv_store *st, const char *key, size_t klen, sg_kv_val *v, int64_t expire_ms,
              int flags, int64_t now_ms) {
    sg_kv_entry *e = find(st, key, klen, now_ms);
    if ((e && (flags & SG_KV_NX)) || (!e && (flags & SG_KV_XX))) return 0;
    if (above_limit(st, v)) { /* stored and evicted at once, so the region above can go */
        if (e) remove_entry(st, e);
        st->st.evicted++;
        return 1;
    }
    sg_kv_val_ref(v);
    v->entry = NULL;
    if (e) {
        sg_kv_val *old = e->val;
        old->entry = NULL;
        e->val = v;
        v->entry = e;
        sg_kv_val_unref(st, old);
        lru_unlink(st, e);
        lru_push(st, e);
        if (!(flags & SG_KV_KEEPTTL)) set_expire(st, e, expire_ms);
        return 1;
    }
    e = sg_xmalloc(sizeof *e + klen);
    e->hash = hash_key(st->seed, key, klen);
    e->klen = (uint32_t)klen;
    memcpy(e->key, key, klen);
    e->val = v;
    v->entry = e;
    e->expire_ms = 0;
    set_expire(st, e, expire_ms);
    e->hnext = st->buckets[e->hash & (st->nbuckets - 1)];
    st->buckets[e->hash & (st->nbuckets - 1)] = e;
    lru_push(st, e);
    st->count++;
    st->st.meta_bytes += sizeof *e + klen;
    if (st->count > st->nbuckets) resize(st, st->nbuckets * 2);
    return 1;
}

int sg_kv_del(sg_kv_store *st, const char *key, size_t klen, int64_t now_ms) {
    sg_kv_entry *e = find(st, key, klen, now_ms);
    if (!e) return 0;
    remove_entry(st, e);
    return 1;
}

int sg_kv_expire_at(sg_kv_store *st, const char *key, size_t klen, int64_t at_ms, int64_t now_ms) {
    sg_kv_entry *e = find(st, key, klen, now_ms);
    if (!e) return 0;
    if (at_ms <= now_ms) {
        remove_entry(st, e);
        return 1;
    }
    set_expire(st, e, at_ms);
    return 1;
}

int sg_kv_persist(sg_kv_store *st, const char *key, size_t klen, int64_t now_ms) {
    sg_kv_entry *e = find(st, key, klen, now_ms);
    if (!e || !e->expire_ms) return 0;
    set_expire(st, e, 0);
    return 1;
}

int64_t sg_kv_ttl_ms(sg_kv_store *st, const char *key, size_t klen, int64_t now_ms) {
    sg_kv_entry *e = find(st, key, klen, now_ms);
    if (!e) return -2;
    return e->expire_ms ? e->expire_ms - now_ms : -1;
}

static uint64_t rev64(uint64_t v) {
    v = ((v >> 1) & 0x5555555555555555ull) | ((v & 0x5555555555555555ull) << 1);
    v = ((v >> 2) & 0x3333333333333333ull) | ((v & 0x3333333333333333ull) << 2);
    v = ((v >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((v & 0x0F0F0F0F0F0F0F0Full) << 4);
    return __builtin_bswap64(v);
}

uint64_t sg_kv_scan(sg_kv_store *st, uint64_t cursor, int count, int64_t now_ms,
                    void (*cb)(const sg_kv_entry *e, void *arg), void *arg) {
    uint64_t mask = st->nbuckets - 1, v = cursor;
    int n = 0;
    uint64_t visited = 0;
    if (count < 1) count = 10;
    do {
        for (sg_kv_entry *e = st->buckets[v & mask]; e; e = e->hnext)
            if (!expired(e, now_ms)) {
                cb(e, arg);
                n++;
            }
        /* Reverse-binary increment: stays correct when the table grows or shrinks
         * between calls (the Redis SCAN cursor). */
        v |= ~mask;
        v = rev64(v);
        v++;
        v = rev64(v);
    } while (v && n < count && ++visited < (uint64_t)count * 10);
    return v;
}

void sg_kv_flush(sg_kv_store *st) {
    while (st->lru_head) remove_entry(st, st->lru_head);
    free(st->buckets);
    st->nbuckets = MIN_BUCKETS;
    st->buckets = sg_xcalloc(st->nbuckets, sizeof *st->buckets);
}

uint64_t sg_kv_expire_cycle(sg_kv_store *st, int budget, int64_t now_ms) {
    uint64_t removed = 0;
    if (!st->expires) return 0;
    for (int i = 0; i < budget; i++) {
        uint64_t b = st->expire_cursor++ & (st->nbuckets - 1);
        for (sg_kv_entry *e = st->buckets[b], *next; e; e = next) {
            next = e->hnext;
            if (expired(e, now_ms)) {
                remove_entry(st, e);
                st->st.expired++;
                removed++;
            }
        }
    }
    return removed;
}

#define MOVE_WINDOW ((size_t)1 << 20)

/* Move a stored value out of the pages at or above the limit into free pages below it.
 * Not a value that a reply is still sending (it is read without the lock): -1, as when
 * there is no room below or the copy fails; the caller evicts it then. */
static int relocate(sg_kv_store *st, sg_kv_val *v) {
    if (v->refs > 1 || v->arriving) return -1;
    uint32_t max_ext = sg_kv_slab_max_ext(v->len);
    sg_kv_val *to = sg_xcalloc(1, sizeof *to + max_ext * sizeof(sg_kv_ext));
    int n = sg_kv_slab_alloc(st->slab, v->len, v, to->ext);
    if (n < 0) {
        free(to);
        return -1;
    }
    to->len = v->len;
    to->n_ext = (uint32_t)n;
    char *win = sg_xmalloc(MOVE_WINDOW);
    sg_err err;
    int rc = 0;
    for (uint64_t off = 0; off < v->len && rc == 0; off += MOVE_WINDOW) {
        size_t k = v->len - off < MOVE_WINDOW ? (size_t)(v->len - off) : MOVE_WINDOW;
        rc = sg_kv_val_read(st, v, off, win, k, &err);
        if (rc == 0) rc = sg_kv_val_write(st, to, off, win, k, &err);
    }
    free(win);
    if (rc != 0) {
        sg_warn("kvstore", "moving a value below a lowered maxmemory: %s", err.msg);
        sg_kv_slab_release(st->slab, to->ext, to->n_ext);
    } else {
        sg_kv_slab_release(st->slab, v->ext, v->n_ext);
        memcpy(v->ext, to->ext, (size_t)n * sizeof(sg_kv_ext));
        v->n_ext = (uint32_t)n;
        st->st.moved++;
    }
    free(to);
    return rc;
}

static int cmp_ptr(const void *a, const void *b) {
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return (x > y) - (x < y);
}

int sg_kv_set_maxmemory(sg_kv_store *st, uint64_t bytes, sg_err *err) {
    uint64_t cap = sg_kv_slab_capacity(st->slab), old = sg_kv_slab_limit(st->slab);
    if (bytes == 0) bytes = cap;
    if (bytes > cap)
        return sg_errf(err,
                       "maxmemory %llu is above the %llu-byte region this kvstore holds "
                       "(set by --memory)",
                       (unsigned long long)bytes, (unsigned long long)cap);
    if (bytes < SG_KV_PAGE)
        return sg_errf(err, "maxmemory %llu is below one 1 MiB page", (unsigned long long)bytes);
    uint32_t cp = sg_kv_slab_chunk_pages(st->slab);
    uint64_t want_pages = bytes >> SG_KV_PAGE_SHIFT;
    for (uint32_t c = 0; (uint64_t)c * cp < want_pages; c++) { /* growing: take chunks back */
        if (sg_kv_slab_chunk_held(st->slab, c)) continue;
        if (st->be->ops->acquire(st->be, c, err) != 0) return -1;
        sg_kv_slab_mark_chunk(st->slab, c, 1);
        st->st.released_bytes -= st->be->chunk_bytes;
    }
    void **owners;
    if (bytes < old && st->st.policy == SG_KV_NOEVICTION) {
        sg_kv_slab_set_limit(st->slab, bytes);
        size_t n = sg_kv_slab_owners_above(st->slab, &owners);
        free(owners);
        if (n || sg_kv_slab_used(st->slab) > sg_kv_slab_limit(st->slab)) {
            sg_kv_slab_set_limit(st->slab, old);
            return sg_errf(err,
                           "maxmemory %llu is below the memory in use and the policy is "
                           "noeviction",
                           (unsigned long long)bytes);
        }
    }
    sg_kv_slab_set_limit(st->slab, bytes);
    /* Least recently used keys go until the rest fits; the survivors living above the new
     * limit then move below it (so a shrink evicts by recency, not by address). */
    while (sg_kv_slab_used(st->slab) > sg_kv_slab_limit(st->slab) && evict_one(st) == 0) {}
    size_t n = sg_kv_slab_owners_above(st->slab, &owners);
    qsort(owners, n, sizeof *owners, cmp_ptr);
    for (size_t i = 0; i < n; i++) {
        if (i && owners[i] == owners[i - 1]) continue;
        sg_kv_val *v = owners[i];
        if (v->entry && relocate(st, v) != 0) {
            remove_entry(st, v->entry);
            st->st.evicted++;
        }
    }
    free(owners);
    /* An unfinished request must not pin memory above the new budget: its value is
     * dropped (the request will answer -OOM), now, or right after the copy in progress. */
    for (sg_kv_val *v = st->arriving, *next; v; v = next) {
        next = v->anext;
        if (!above_limit(st, v)) continue;
        v->dropped = 1;
        if (!v->writing) {
            val_release_memory(st, v);
            arriving_unlink(st, v);
        }
    }
    while (sg_kv_slab_used(st->slab) > sg_kv_slab_limit(st->slab) && evict_one(st) == 0) {}
    release_chunks(st);
    return 0;
}

void sg_kv_set_policy(sg_kv_store *st, sg_kv_policy p) { st->st.policy = p; }

void sg_kv_get_stats(sg_kv_store *st, sg_kv_stats *out) {
    *out = st->st;
    out->keys = st->count;
    out->expires = st->expires;
    out->used = sg_kv_slab_used(st->slab);
    out->maxmemory = sg_kv_slab_limit(st->slab);
    out->capacity = sg_kv_slab_capacity(st->slab);
}

void sg_kv_reset_stats(sg_kv_store *st) {
    st->st.hits = st->st.misses = st->st.evicted = st->st.expired = st->st.moved = 0;
}

void sg_kv_store_free(sg_kv_store *st) {
    if (!st) return;
    sg_kv_flush(st);
    free(st->buckets);
    sg_kv_slab_destroy(st->slab);
    pthread_mutex_destroy(&st->mu);
    free(st);
}
