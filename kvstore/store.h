/* store.h — kvstore's keyspace: hash table, LRU, expiry, values in the backend region
 * (internal to kvstore/; the embedding API is kvstore.h).
 *
 * Contract: one store, shared by all I/O threads, guarded by one mutex
 * (sg_kv_store_lock/unlock). Every function here needs the lock held except the
 * sg_kv_val_write/read/iov data functions, which may run without it on a value the
 * caller holds a reference to (that is what keeps big copies out of the lock).
 *
 * A value (sg_kv_val) is counted by references: the key that holds it, each reply
 * still sending it and the connection receiving it. Memory is freed when the last
 * reference goes, so DEL, eviction or overwrite never pull bytes out from under a
 * reply in flight; such bytes stay counted as used until then.
 *
 * Memory budget (maxmemory) covers the value region exactly, in whole slab pages; key
 * and bookkeeping memory on the host is reported apart (meta_bytes). Allocation evicts
 * least-recently-used keys (policy allkeys-lru) until the value fits, or fails (policy
 * noeviction, or nothing left to evict). Lowering maxmemory evicts down to it and gives
 * the memory above it back to the backend. Time comes from the caller (now_ms). */
#ifndef SG_KV_STORE_H
#define SG_KV_STORE_H

#include "kvstore/backend.h"
#include "kvstore/slab.h"

#include "common/err.h"

#include <stdint.h>
#include <sys/uio.h>

typedef struct sg_kv_entry sg_kv_entry;

typedef struct sg_kv_val {
    uint64_t len;
    uint64_t room; /* bytes with region memory (len, except while arriving) */
    uint32_t refs;
    uint32_t n_ext;
    uint8_t arriving; /* its bytes are still being received (see sg_kv_val_new_arriving) */
    uint8_t writing;  /* its receiver copies into it without the lock right now */
    uint8_t dropped;  /* a lowered maxmemory took its memory: the request fails */
    struct sg_kv_val *aprev, *anext; /* the store's list of arriving values */
    sg_kv_entry *entry;              /* the key holding it, or NULL */
    sg_kv_ext ext[];
} sg_kv_val;

struct sg_kv_entry {
    sg_kv_entry *hnext, *lprev, *lnext;
    uint64_t hash;
    int64_t expire_ms; /* absolute; 0: none */
    sg_kv_val *val;
    uint32_t klen;
    char key[];
};

typedef enum { SG_KV_ALLKEYS_LRU = 0, SG_KV_NOEVICTION } sg_kv_policy;
enum { SG_KV_NX = 1, SG_KV_XX = 2, SG_KV_KEEPTTL = 4 };

typedef struct sg_kv_stats {
    uint64_t keys, expires;
    uint64_t hits, misses, evicted, expired;
    uint64_t moved; /* values moved below a lowered maxmemory instead of evicted */
    uint64_t used, maxmemory, capacity; /* region bytes */
    uint64_t value_bytes;               /* bytes of live values (incl. in flight) */
    uint64_t meta_bytes;                /* host bytes of keys and bookkeeping */
    uint64_t released_bytes;            /* region given back to the backend */
    sg_kv_policy policy;
} sg_kv_stats;

typedef struct sg_kv_store sg_kv_store;

/* The store uses (does not own) the backend. */
sg_kv_store *sg_kv_store_new(sg_kv_backend *be, uint64_t hash_seed);
void sg_kv_store_free(sg_kv_store *st);
void sg_kv_store_lock(sg_kv_store *st);
void sg_kv_store_unlock(sg_kv_store *st);
sg_kv_backend *sg_kv_store_backend(sg_kv_store *st);

/* A new unlinked value of len bytes holding one reference (the caller's); evicts as
 * needed. NULL with a message when it cannot fit. */
sg_kv_val *sg_kv_val_new(sg_kv_store *st, uint64_t len, sg_err *err);
/* A value whose bytes are still to arrive over the network: it starts with no region
 * memory and gets it as the bytes come in (sg_kv_val_reserve), so a client that
 * announces a 512 MiB value and stalls holds only what it has sent. Fails (NULL, with
 * a message) only when len is above maxmemory. */
sg_kv_val *sg_kv_val_new_arriving(sg_kv_store *st, uint64_t len, sg_err *err);
/* Room for the value's bytes [0, upto) (upto <= len), evicting least-recently-used
 * keys as needed, and mark the value as being written: the caller then copies into it
 * without the lock and calls sg_kv_val_written. -1 with a message when the room cannot
 * be found (noeviction, or the rest is held by other values in flight) or when a lowered
 * maxmemory dropped the value; the value then holds no region memory and the caller
 * drops it (unref) and reads the rest of its bytes into nothing. */
int sg_kv_val_reserve(sg_kv_store *st, sg_kv_val *v, uint64_t upto, sg_err *err);
/* The copy that sg_kv_val_reserve allowed has ended; complete: all len bytes are in (the
 * value stops arriving). -1 when maxmemory was lowered under the copy: the value's memory
 * is freed now and the caller drops it as above. */
int sg_kv_val_written(sg_kv_store *st, sg_kv_val *v, int complete);
void sg_kv_val_ref(sg_kv_val *v);
void sg_kv_val_unref(sg_kv_store *st, sg_kv_val *v);

/* Data access (lock not needed; hold a reference). */
int sg_kv_val_write(sg_kv_store *st, const sg_kv_val *v, uint64_t off, const void *src, size_t n,
                    sg_err *err);
int sg_kv_val_read(sg_kv_store *st, const sg_kv_val *v, uint64_t off, void *dst, size_t n,
                   sg_err *err);
/* Host-addressable backends only: iovecs for bytes [off, off + max_bytes). */
int sg_kv_val_iov(sg_kv_store *st, const sg_kv_val *v, uint64_t off, uint64_t max_bytes,
                  struct iovec *iov, int max_iov);

/* Keyspace. Lookups drop expired keys and count hits/misses; get and exists mark the
 * key recently used. get returns a borrowed value (ref it to keep it past unlock). */
sg_kv_val *sg_kv_get(sg_kv_store *st, const char *key, size_t klen, int64_t now_ms);
int sg_kv_exists(sg_kv_store *st, const char *key, size_t klen, int64_t now_ms);
/* Returns 1 when stored, 0 when NX/XX said no. Takes its own reference on v. A value
 * with bytes above the limit (received while maxmemory was lowered) counts as stored
 * and is evicted at once, together with the key's old value. */
int sg_kv_set(sg_kv_store *st, const char *key, size_t klen, sg_kv_val *v, int64_t expire_ms,
              int flags, int64_t now_ms);
int sg_kv_del(sg_kv_store *st, const char *key, size_t klen, int64_t now_ms);
/* at_ms <= now_ms deletes the key. Returns 1 when the key exists. */
int sg_kv_expire_at(sg_kv_store *st, const char *key, size_t klen, int64_t at_ms, int64_t now_ms);
/* Drop the key's expiry. Returns 1 when it had one (Redis PERSIST). */
int sg_kv_persist(sg_kv_store *st, const char *key, size_t klen, int64_t now_ms);
/* -2: no key, -1: no expiry, else milliseconds left. */
int64_t sg_kv_ttl_ms(sg_kv_store *st, const char *key, size_t klen, int64_t now_ms);
/* Redis SCAN semantics: returns the next cursor (0 when done); every key present for
 * the whole scan is reported at least once, even if the table resizes meanwhile. */
uint64_t sg_kv_scan(sg_kv_store *st, uint64_t cursor, int count, int64_t now_ms,
                    void (*cb)(const sg_kv_entry *e, void *arg), void *arg);
void sg_kv_flush(sg_kv_store *st);
/* Check up to `budget` keys for expiry; returns how many were removed. */
uint64_t sg_kv_expire_cycle(sg_kv_store *st, int budget, int64_t now_ms);

/* bytes == 0: the whole region. Lowering evicts least-recently-used keys until the rest
 * fits (with noeviction it refuses instead), then moves the values that still live above
 * the new limit into free pages below it (a value a reply is sending is evicted); an
 * arriving value with memory above the new limit is dropped (its memory freed at once,
 * or right after the copy in progress), so memory pinned by unfinished requests never
 * outlives a lowered budget. */
int sg_kv_set_maxmemory(sg_kv_store *st, uint64_t bytes, sg_err *err);
void sg_kv_set_policy(sg_kv_store *st, sg_kv_policy p);
void sg_kv_get_stats(sg_kv_store *st, sg_kv_stats *out);
void sg_kv_reset_stats(sg_kv_store *st);

#endif
