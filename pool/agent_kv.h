/* pool/agent_kv.h — the node agent's kvstore (internal to pool/): a kvstore embedded in
 * the memory its jobs leave spare, its budget moved around the jobs (pool.h's policy).
 *
 * Contract
 *  - On CUDA one kvstore per GPU, in its memory (`cuda:N`), each with its own budget moved
 *    by the jobs on that GPU only: --kv-listen HOST:PORT serves the agent's device i (its
 *    i-th in --devices) at PORT + i (port 0: each its own free port). On OpenCL one kvstore
 *    in host memory at PORT (PoCL runs on the CPU, so jobs on every OpenCL device use the
 *    memory it shares). All run on the agent's loop (kvstore.h: sg_kv_server_attach).
 *  - The hooks (agent.h) run on the loop: before a job starts, its need
 *    (sg_pool_job_memory) is counted and, when it exceeds the free memory, the budget is
 *    lowered by the deficit (LRU keys evicted) before the job's worker is asked to run;
 *    when it ends the budget grows back. Each job_start / job_end event carries a "kv"
 *    object: need, budget before and after, deficit, evictions meanwhile.
 *  - /metrics gets each kvstore's gauges and counters (specgen_kv_*{device="cuda:N"|"host"});
 *    the "kv" object of an event names its kvstore's device too.
 *  - Beyond loopback the kvstore needs a password (--kv-requirepass-file), as
 *    `specgen kvstore` does; on loopback it is optional. */
#ifndef SG_POOL_AGENT_KV_H
#define SG_POOL_AGENT_KV_H

#include "pool/agent.h"

typedef struct sg_agent_kv_config {
    const char *listen;        /* --kv-listen HOST:PORT */
    int is_auto;               /* --kv-memory auto */
    uint64_t size;             /* --kv-memory SIZE */
    const char *password_file; /* --kv-requirepass-file, or NULL */
    sg_dev_lang lang;          /* the agent's devices */
    int ndevices;
    const int *devices; /* their numbers (CUDA: one kvstore each) */
} sg_agent_kv_config;

typedef struct sg_agent_kv sg_agent_kv;
int sg_agent_kv_start(sg_loop *loop, const sg_agent_kv_config *cfg, sg_agent_kv **out, sg_err *err);
/* One line for the agent's start message: address, backend, budget. */
const char *sg_agent_kv_describe(const sg_agent_kv *k);
/* The hooks to put in sg_agent_config (they use k until sg_agent_free). */
sg_agent_hooks sg_agent_kv_hooks(sg_agent_kv *k);
void sg_agent_kv_free(sg_agent_kv *k);

#endif
