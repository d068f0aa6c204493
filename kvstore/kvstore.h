/* kvstore.h — a KV cache store served over the Redis protocol (RESP2; RESP3
 * for clients that ask with HELLO 3), as a library.
 *
 * Contract: sg_kv_server_start binds the listening socket, opens the memory backend
 * (host memory or a GPU's memory), and starts the I/O threads; sg_kv_server_run then
 * accepts connections on the calling thread until sg_kv_server_stop is called (from any
 * thread or a signal handler: it only writes an eventfd). sg_kv_server_free stops the
 * threads, closes every connection and releases the memory.
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
void sg_kv_server_free(sg_kv_server *s);

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
} sg_kv_memory;
void sg_kv_server_memory(sg_kv_server *s, sg_kv_memory *out); /* thread-safe */

/* Constant-time comparison of a candidate password with the configured one (time
 * depends only on the candidate's length). Returns 1 when equal. */
int sg_kv_password_equal(const char *want, size_t want_len, const char *got, size_t got_len);

/* `specgen kvstore` (kvstore/cmd_kvstore.c): the store as a daemon. */
int sg_cmd_kvstore(int argc, char **argv);

#endif
