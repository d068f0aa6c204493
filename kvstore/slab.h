/* slab.h — the allocator of kvstore's value region (internal to kvstore/).
 *
 * Contract: the region (capacity bytes, rounded down to whole pages) is cut into 1 MiB
 * pages. A value of n bytes gets n / page whole pages plus a tail: a tail of up to half
 * a page takes one slot of a size class (64 B ... 512 KiB, four classes per power of
 * two) carved from a page; a bigger tail takes a whole page. The value's bytes map, in
 * order, onto the extents returned; no extent crosses a chunk (the unit in which a
 * backend can give memory back). Allocation is all-or-nothing.
 *
 * Accounting is exact and in pages: used bytes = pages holding value data or slab slots
 * times the page size. The limit is a prefix of the page space: pages at or above it are
 * never handed out, so lowering the limit and freeing what lives above it (see
 * sg_kv_slab_owners_above) empties whole chunks that the backend may then release.
 * Not thread-safe: the store's lock covers every call. */
#ifndef SG_KV_SLAB_H
#define SG_KV_SLAB_H

#include <stddef.h>
#include <stdint.h>

#define SG_KV_PAGE_SHIFT 20
#define SG_KV_PAGE ((uint64_t)1 << SG_KV_PAGE_SHIFT)

typedef struct sg_kv_ext {
    uint64_t off; /* byte offset in the region */
    uint64_t len; /* bytes of the value stored there */
} sg_kv_ext;

typedef struct sg_kv_slab sg_kv_slab;

/* chunk_pages >= 1. Returns NULL when capacity is below one page. */
sg_kv_slab *sg_kv_slab_new(uint64_t capacity, uint32_t chunk_pages);
void sg_kv_slab_destroy(sg_kv_slab *s);

/* Upper bound on the extents a value of n bytes needs (size the ext array with it). */
uint32_t sg_kv_slab_max_ext(uint64_t n);
/* Allocate n bytes for owner (an opaque pointer reported back by owners_above).
 * Returns the number of extents written (0 for n == 0), or -1 when the free pages
 * below the limit do not suffice (nothing is allocated then). */
int sg_kv_slab_alloc(sg_kv_slab *s, uint64_t n, void *owner, sg_kv_ext *ext);
void sg_kv_slab_release(sg_kv_slab *s, const sg_kv_ext *ext, uint32_t n_ext);

uint64_t sg_kv_slab_capacity(const sg_kv_slab *s);   /* bytes, whole pages */
uint64_t sg_kv_slab_used(const sg_kv_slab *s);       /* bytes in used pages */
uint64_t sg_kv_slab_limit(const sg_kv_slab *s);      /* bytes */
uint64_t sg_kv_slab_slot_bytes(const sg_kv_slab *s); /* bytes of slots in use (<= used) */
/* Set the limit (rounded down to pages, at most the capacity). */
void sg_kv_slab_set_limit(sg_kv_slab *s, uint64_t bytes);

/* Owners with data in pages at or above the limit; each listed once per extent, so an
 * owner may repeat. Returns the count; *out is malloc'ed (caller frees). */
size_t sg_kv_slab_owners_above(const sg_kv_slab *s, void ***out);

/* Chunk bookkeeping for elastic budgets: a chunk is "held" by the backend or
 * released. Pages of released chunks are never handed out. */
uint32_t sg_kv_slab_chunks(const sg_kv_slab *s);
uint32_t sg_kv_slab_chunk_pages(const sg_kv_slab *s);
/* Next held chunk that lies wholly at or above the limit and has no used page, or -1;
 * the caller releases it in the backend and then calls sg_kv_slab_mark_chunk. */
int64_t sg_kv_slab_releasable_chunk(const sg_kv_slab *s);
void sg_kv_slab_mark_chunk(sg_kv_slab *s, uint32_t chunk, int held);
int sg_kv_slab_chunk_held(const sg_kv_slab *s, uint32_t chunk);

/* The size classes, for tests and INFO: count and the size of class i. */
int sg_kv_slab_nclasses(void);
uint32_t sg_kv_slab_class_size(int i);

#endif
