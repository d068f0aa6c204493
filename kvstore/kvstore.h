/* kvstore.h — a KV cache store served over the Redis protocol (RESP2; RESP3
 * for clients that ask with HELLO 3), as a library.
 *
 * Contract: sg_kv_server_start binds the listening socket, opens the memory backend
 * (host memory or a GPU's memory), and starts the I/O threads; sg_kv_server_run then
 * accepts connections on the calling thread until sg_kv_server_stop is called (from any
 * thread or a signal handler: it only writes an eventfd). sg_kv_server_free stops the
 * threads, closes every connection and releases the memory.
 *
 * Embedding (the pool agent): instead of sg_kv_server_run, sg_kv_server_attach puts the
 * acceptor and the expiry timer on the caller's sg_loop (one fd watched). Connections
 * stay on kvstore's own I/O threads: a 512 MiB value takes a while to copy and the
 * store's lock is theirs, and the embedder's loop (its scheduler, its HTTP server) must
 * never wait on either. The budget (sg_kv_server_set_maxmemory) and the counters
 * (sg_kv_server_memory) are thread-safe and cheap, so the embedder calls them from its
 * loop.
 *
 * Security: listening on an address other than loopback without a password is refused
 * (like Redis's protected mode); with a password every connection must AUTH (or HELLO
 * ... AUTH) first, and passwords are compared in constant time.
 *
 * The commands, the memory model (slab pages, LRU eviction, elastic maxmemory) and
 * their limits are described in docs/kv-cache.md. */
#ifndef SG_KVSTORE_H
#define SG_KVSTORE_H

#include "common/err.h"
#include "common/loop.h"

#include <stddef.h>
#include <stdint.h>

#define SG_KV_DEFAULT_REPLY_LIMIT ((uint64_t)64 << 20)
#define SG_KV_DEFAULT_REQUEST_TIMEOUT_MS 30000

typedef struct sg_kv_config {
    const char *listen;         /* "HOST:PORT"; port 0 picks a free one */
    uint64_t memory;            /* bytes of the value region; 0: auto */
    const char *backend;        /* "host", "host-staged" or "cuda:N" */
    const char *password;       /* NULL: none (then loopback only) */
    int io_threads;             /* >= 1 */
    int maxclients;             /* >= 1 */
    int64_t idle_timeout_ms;    /* 0: never close idle clients */
    uint64_t hash_seed;         /* keyspace hash seed (random in the command) */
    uint64_t reply_limit;       /* pending reply bytes of a client that pause reading its
                                   requests; 0: SG_KV_DEFAULT_REPLY_LIMIT */
    int64_t request_timeout_ms; /* close a client stalled this long inside a request (part
                                   of it or of a value received) or with replies it does not
                                   read; 0: SG_KV_DEFAULT_REQUEST_TIMEOUT_MS; < 0: never */
} sg_kv_config;

typedef struct sg_kv_server sg_kv_server;

int sg_kv_server_start(const sg_kv_config *cfg, sg_kv_server **out, sg_err *err);
int sg_kv_server_port(const sg_kv_server *s);
/* One line: backend, region size, huge pages or device name. */
const char *sg_kv_server_describe(const sg_kv_server *s);
int sg_kv_server_run(sg_kv_server *s, sg_err *err);
void sg_kv_server_stop(sg_kv_server *s);
/* Detaches from a loop first (call it on that loop's thread). */
void sg_kv_server_free(sg_kv_server *s);

/* Serve from the caller's loop (instead of sg_kv_server_run): accept connections and run
 * the expiry timer when the loop says the server's fd is ready. Call on the loop's
 * thread; detach (or free) before the loop is freed. Fails when already attached or
 * running. */
int sg_kv_server_attach(sg_kv_server *s, sg_loop *loop, sg_err *err);
void sg_kv_server_detach(sg_kv_server *s);

/* The memory budget, for an embedder (a pool agent) that gives a GPU's memory back to
 * validation jobs and takes it again later: what CONFIG SET maxmemory does over RESP.
 * Lowering evicts down to the new limit (values living above it first, then the least
 * recently used) and releases the emptied chunks to the backend; clients keep working.
 * bytes 0: the whole region. Fails, changing nothing, above the region or below 1 MiB
 * (and under the noeviction policy, below the memory in use). Thread-safe. */
int sg_kv_server_set_maxmemory(sg_kv_server *s, uint64_t bytes, sg_err *err);

typedef struct sg_kv_memory {
    uint64_t capacity; /* the region (--memory) */
    uint64_t limit;    /* the budget (maxmemory) */
    uint64_t used;     /* region bytes in use (whole 1 MiB pages) */
    uint64_t released; /* region bytes given back to the backend */
    uint64_t keys;
    uint64_t hits, misses;  /* lookups (GET, EXISTS, ...) that found / missed a key */
    uint64_t evicted;       /* keys evicted for room or by a lowered budget */
    uint64_t connected;     /* clients connected now */
    uint64_t free_at_start; /* the backend's free memory before the region was taken (a
                               GPU's free memory; host: MemAvailable): the memory that the
                               kvstore and the node's jobs share, for the budget policy */
} sg_kv_memory;
void sg_kv_server_memory(sg_kv_server *s, sg_kv_memory *out); /* thread-safe */

/* Constant-time comparison of a candidate password with the configured one (time
 * depends only on the candidate's length). Returns 1 when equal. */
int sg_kv_password_equal(const char *want, size_t want_len, const char *got, size_t got_len);

/* The password of a --requirepass-file style option: the file's first line (CR LF or LF
 * ends it; the rest, a comment say, is ignored), read with a size limit. opt names the
 * option in messages ("--kv-requirepass-file"). *out is malloc'ed (caller frees). Warns
 * when the file is readable by other users. */
int sg_kv_password_file(const char *opt, const char *path, char **out, sg_err *err);

/* `specgen kvstore` (kvstore/cmd_kvstore.c): the store as a daemon. */
int sg_cmd_kvstore(int argc, char **argv);

#endif
