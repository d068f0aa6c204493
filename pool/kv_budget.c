/* The kvstore's budget beside the jobs (pool.h: the model). Pure: no I/O, no clock. */
#include "pool/pool.h"

#define MiB ((uint64_t)1 << 20)
#define GiB ((uint64_t)1 << 30)

int sg_pool_kv_budget_init(sg_pool_kv_budget *b, const sg_pool_kv_opts *o, sg_err *err) {
    *b = (sg_pool_kv_budget){0};
    b->floor = MiB;
    if (o->mem == SG_POOL_KV_HOST) {
        /* PoCL: --kv-memory is what the kvstore may use; jobs count against it. */
        b->shared = o->is_auto ? o->free_bytes / 2 : o->size;
        if (b->shared < 2 * MiB)
            return sg_errf(err, "--kv-memory: %llu bytes%s leave the kvstore less than 2 MiB",
                           (unsigned long long)b->shared,
                           o->is_auto ? " (auto: half the available host memory)" : "");
        b->capacity = b->shared;
    } else {
        if (o->free_bytes < 2 * MiB)
            return sg_errf(err, "--kv-memory: the GPU has only %llu bytes free",
                           (unsigned long long)o->free_bytes);
        b->shared = o->free_bytes;
        if (o->is_auto) {
            uint64_t reserve = o->reserve ? o->reserve : o->free_bytes / 10;
            if (!o->reserve && reserve < GiB) reserve = GiB;
            if (reserve + 2 * MiB > o->free_bytes)
                return sg_errf(err,
                               "--kv-memory auto: the GPU has %llu bytes free, not more than "
                               "the %llu kept for jobs; give a SIZE",
                               (unsigned long long)o->free_bytes, (unsigned long long)reserve);
            b->capacity = o->free_bytes - reserve;
        } else {
            if (o->size > o->free_bytes)
                return sg_errf(err, "--kv-memory %llu: above the %llu bytes free on the GPU",
                               (unsigned long long)o->size, (unsigned long long)o->free_bytes);
            b->capacity = o->size;
        }
    }
    if (b->capacity < 2 * MiB)
        return sg_errf(err, "--kv-memory: %llu bytes is below 2 MiB",
                       (unsigned long long)b->capacity);
    b->budget = b->capacity;
    return 0;
}

static uint64_t target(const sg_pool_kv_budget *b) {
    uint64_t t = b->need >= b->shared ? 0 : b->shared - b->need;
    if (t > b->capacity) t = b->capacity;
    return t < b->floor ? b->floor : t;
}

void sg_pool_kv_budget_set_capacity(sg_pool_kv_budget *b, uint64_t capacity) {
    b->capacity = capacity < b->shared ? capacity : b->shared;
    if (b->capacity < b->floor) b->capacity = b->floor;
    b->budget = target(b);
}

uint64_t sg_pool_kv_budget_free(const sg_pool_kv_budget *b) {
    uint64_t taken = b->budget + b->need;
    return taken >= b->shared ? 0 : b->shared - taken;
}

static int move(sg_pool_kv_budget *b, uint64_t need, uint64_t free_before, sg_pool_kv_change *ch) {
    uint64_t to = target(b);
    *ch =
        (sg_pool_kv_change){.from = b->budget, .to = to, .need = need, .free_before = free_before};
    if (to < b->budget) {
        uint64_t given = b->budget - to;
        ch->deficit = need > free_before ? need - free_before : 0;
        ch->uncovered = ch->deficit > given ? ch->deficit - given : 0;
    }
    int moved = to != b->budget;
    b->budget = to;
    return moved;
}

int sg_pool_kv_job_start(sg_pool_kv_budget *b, uint64_t need, sg_pool_kv_change *ch) {
    uint64_t free_before = sg_pool_kv_budget_free(b);
    b->need += need;
    b->jobs++;
    return move(b, need, free_before, ch);
}

int sg_pool_kv_job_end(sg_pool_kv_budget *b, uint64_t need, sg_pool_kv_change *ch) {
    uint64_t free_before = sg_pool_kv_budget_free(b);
    b->need = need > b->need ? 0 : b->need - need;
    if (b->jobs > 0) b->jobs--;
    return move(b, need, free_before, ch);
}
