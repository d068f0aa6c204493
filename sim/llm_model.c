/* The LLM serving model (sim.h): instances, decode rate by batch, prefill, a prefix cache,
 * and text that the real trigger policy and extractor can read, on the (virtual) loop. */
#include "sim/sim.h"

#include "common/buf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Decoding is a fluid: the streams of an instance share one per-stream rate that follows
 * its batch, and the rate changes the moment a stream joins or leaves (each instance
 * keeps the tokens one stream has decoded since the start, `work`, and one timer for the
 * earliest chunk end). Text goes out in chunks that end at the reasoning's next cue or code
 * block (so the trigger policy sees each at the token it comes), else every CHUNK_MAX
 * tokens; an abort counts the tokens of the chunk decoded so far. */
#define CHUNK_MAX 64          /* reasoning tokens a chunk at most */
#define ANSWER_CHUNK 256      /* answer tokens a chunk */
#define CODE_TOKENS 40        /* a code block in the reasoning */
#define FORK_PREFIX_TOKENS 40 /* end-of-thinking and answer prefix, never cached */
#define FILLER_WORDS 4096     /* the filler text that chunks copy slices of */
#define TRACE_CHUNK 8         /* sim --traces: tokens a chunk (trigger points within 8 tokens) */

/* A reasoning stream's prefix in a tier of the KV cache: its own instance's prefix cache
 * (GPU memory, lost when squeezed) or the kvstore (the pool GPUs' spare memory, reached over
 * the network from any instance); each tier an LRU list, least recent first. */
typedef struct lru_link {
    struct ctx *prev, *next;
    uint64_t tokens; /* tokens of the prefix in that tier (prompt included) */
    int listed;
} lru_link;
typedef struct tier {
    uint64_t tokens;
    struct ctx *head, *tail;
} tier;
enum { OWN, STORE }; /* ctx.link[]: the instance's prefix cache, the kvstore */

typedef struct ctx {                 /* a reasoning stream's prefix */
    int iteration, stream, instance; /* of the task whose list holds it */
    uint64_t length;                 /* the whole reasoning, tokens */
    double floor;                    /* q_carry: the quality this iteration starts from (0: none) */
    int have_kernel;                 /* kernel_step: its last fork's step, quality and id */
    int64_t kernel_at;
    double kernel_q;
    uint64_t kernel_id;
    lru_link link[2];         /* in its instance's prefix cache, in the kvstore */
    struct sg_sim_gen *gen;   /* its reasoning stream while it runs */
    struct ctx *next_of_task; /* the task's contexts */
} ctx;

struct sg_sim_gen {
    sg_sim_llm *m;
    sg_sim_gen_cb cb;
    int instance, fork;
    ctx *ctx;                 /* a reasoning stream's prefix (NULL once it is gone) */
    uint64_t length, emitted; /* reasoning: its length, tokens out so far */
    sg_buf answer;            /* the answer's text, emitted after the reasoning */
    size_t answer_pos;
    uint64_t answer_tokens, answer_emitted;
    uint64_t prompt, cached;
    uint64_t next_code, next_cue;
    const sg_replay_trace *trace; /* sim --traces: its reasoning, replayed */
    uint64_t rng, timer;          /* timer: the prefill, before the first chunk */
    uint64_t seq;                 /* ties between chunks that end at once go in start order */
    int decoding;                 /* past its prefill: in its instance's heap, at heap_at */
    int heap_at;
    uint64_t chunk;                 /* tokens in the chunk being decoded */
    double chunk_end;               /* its instance's work when that chunk is done */
    int in_callback, aborted;       /* abort from inside its own callback frees it afterwards */
    struct sg_sim_gen *prev, *next; /* all generations */
    /* the KV capacity (kv_tokens > 0; else admitted at once and never preempted) */
    int admitted;                     /* counted in its instance's batch and KV */
    int waiting;                      /* in its instance's waiting queue (new or preempted) */
    struct sg_sim_gen *wprev, *wnext; /* that queue, in arrival order (seq) */
    uint64_t kv;                      /* KV tokens it holds */
    uint64_t kv_need;                 /* what admitting it takes */
    uint64_t fill;                    /* of that, what it prefills (the rest: cached, fetched) */
    double latency_s;                 /* the first-token latency, and any kvstore fetch */
    int task, iteration, stream;      /* a fork's reasoning stream, and its prefix (tokens, */
    uint64_t prefix;                  /* prompt included) */
    int resume;                       /* preempted while decoding: chunk_left still to do */
    double chunk_left;
};

typedef struct instance {
    sg_sim_llm *m;
    int running;       /* streams on it, prefill included: its batch */
    double rate;       /* tokens/s of each stream at that batch */
    double work;       /* tokens one stream has decoded since the start */
    int64_t work_at;   /* the loop time `work` is brought up to */
    uint64_t timer;    /* the earliest chunk end */
    int in_due;        /* inside that timer's callback: it re-arms once at the end */
    sg_sim_gen **heap; /* its decoding streams, earliest chunk end first */
    int nheap, capheap;
    tier cache; /* its prefix cache */
    /* the KV capacity (kv_tokens > 0) */
    uint64_t kv_active;                /* KV tokens of its admitted generations */
    sg_sim_gen *wait_head, *wait_tail; /* waiting for room, arrival order */
    int nwaiting;
    int64_t prefill_free_at; /* prefills run one at a time: when the next may start */
} instance;

struct sg_sim_llm {
    sg_loop *loop;
    sg_sim_workload w;
    uint64_t seed, forks, ids, seqs;
    int closing; /* sg_sim_llm_free: no more timers */
    instance *in;
    tier store;    /* the kvstore (kvstore_tokens > 0), shared by the instances */
    ctx **by_task; /* each task's contexts, by task number */
    int ntasks;
    sg_sim_gen *gens;
    sg_buf text;         /* a chunk's text, reused */
    char *filler;        /* FILLER_WORDS words */
    uint32_t *filler_at; /* where word i starts (FILLER_WORDS + 1 offsets) */
    uint64_t decoded, prefilled, saved;
    uint64_t preemptions, recomputed, fork_queries, fork_hits, fork_fetches, fetched;
    const sg_replay_traces *traces; /* sim --traces (borrowed), or NULL */
    int q_task, q_iteration;        /* sg_sim_llm_prompt_quality's, for the next reasoning */
    double q_best;
};

void sg_sim_llm_traces(sg_sim_llm *m, const sg_replay_traces *traces) { m->traces = traces; }

void sg_sim_llm_prompt_quality(sg_sim_llm *m, int task, int iteration, double q_best) {
    m->q_task = task;
    m->q_iteration = iteration;
    m->q_best = q_best;
}

/* A kernel's quality before noise: the workload's curve at fraction f of the reasoning
 * (f = 1 and q_end = q_final for the final answer), lifted to start from the given
 * kernel's quality and end q_iter above it under q_carry. */
static double quality(const sg_sim_workload *w, int iteration, double floor, double f,
                      double q_end) {
    double it = w->q_iter * (iteration - 1);
    double lo = w->q0 + it, hi = q_end + it;
    if (floor > lo) lo = floor;
    if (floor > 0 && floor + w->q_iter > hi) hi = floor + w->q_iter;
    return lo + (hi - lo) * pow(f, w->q_gamma);
}

static uint64_t mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static uint64_t next(uint64_t *s) { return mix(*s += 0x9e3779b97f4a7c15ULL); }
static double uni(uint64_t *s) { return ((double)(next(s) >> 11) + 0.5) / 9007199254740992.0; }
static double normal(uint64_t *s) { return sqrt(-2 * log(uni(s))) * cos(2 * M_PI * uni(s)); }
static double exp_draw(uint64_t *s, double mean) { return -mean * log(uni(s)); }

static const char *const words[] = {" the", " load", " tile", " thread", " block", " memory",
                                    " so",  " each", " row",  " then",   " sum",   " store"};
#define NWORDS (sizeof words / sizeof *words)

/* The filler is drawn once from a fixed generator: the same text in every run. */
static void make_filler(sg_sim_llm *m) {
    sg_buf b = {0};
    uint64_t s = 0x51ed;
    m->filler_at = sg_xcalloc(FILLER_WORDS + 1, sizeof *m->filler_at);
    for (int i = 0; i < FILLER_WORDS; i++) {
        m->filler_at[i] = (uint32_t)b.len;
        sg_buf_append_str(&b, words[next(&s) % NWORDS]);
    }
    m->filler_at[FILLER_WORDS] = (uint32_t)b.len;
    m->filler = sg_buf_steal(&b);
}

/* n filler tokens (words) from a random place in the filler. */
static void filler(sg_sim_llm *m, uint64_t *rng, uint64_t n, sg_buf *out) {
    while (n > 0) {
        uint64_t k = n < FILLER_WORDS ? n : FILLER_WORDS;
        uint64_t from = next(rng) % (FILLER_WORDS - k + 1);
        sg_buf_append(out, m->filler + m->filler_at[from],
                      m->filler_at[from + k] - m->filler_at[from]);
        n -= k;
    }
}

sg_sim_llm *sg_sim_llm_new(sg_loop *loop, const sg_sim_workload *w, uint64_t seed) {
    sg_sim_llm *m = sg_xcalloc(1, sizeof *m);
    m->loop = loop;
    m->w = *w;
    m->seed = seed;
    m->in = sg_xcalloc((size_t)w->instances, sizeof *m->in);
    for (int i = 0; i < w->instances; i++) m->in[i].m = m;
    make_filler(m);
    return m;
}

/* ---- the fluid decode clock of an instance ---- */
static void advance(instance *in) {
    int64_t now = sg_loop_now(in->m->loop);
    if (now > in->work_at) in->work += (double)(now - in->work_at) / SG_SEC * in->rate;
    in->work_at = now;
}

/* ---- each instance's decoding streams: a binary heap by (chunk end, start order) ---- */
static int before(const sg_sim_gen *a, const sg_sim_gen *b) {
    return a->chunk_end < b->chunk_end || (a->chunk_end == b->chunk_end && a->seq < b->seq);
}

static void decoding_set(instance *in, int i, sg_sim_gen *g) {
    in->heap[i] = g;
    g->heap_at = i;
}

static void decoding_up(instance *in, int i) {
    sg_sim_gen *g = in->heap[i];
    while (i > 0 && before(g, in->heap[(i - 1) / 2])) {
        decoding_set(in, i, in->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    decoding_set(in, i, g);
}

static void decoding_down(instance *in, int i) {
    sg_sim_gen *g = in->heap[i];
    for (;;) {
        int c = 2 * i + 1;
        if (c >= in->nheap) break;
        if (c + 1 < in->nheap && before(in->heap[c + 1], in->heap[c])) c++;
        if (!before(in->heap[c], g)) break;
        decoding_set(in, i, in->heap[c]);
        i = c;
    }
    decoding_set(in, i, g);
}

static void decoding_add(instance *in, sg_sim_gen *g) {
    if (in->nheap == in->capheap) {
        in->capheap = in->capheap ? 2 * in->capheap : 16;
        in->heap = sg_xrealloc(in->heap, (size_t)in->capheap * sizeof *in->heap);
    }
    decoding_set(in, in->nheap++, g);
    decoding_up(in, in->nheap - 1);
}

static void decoding_remove(instance *in, sg_sim_gen *g) {
    int i = g->heap_at;
    sg_sim_gen *last = in->heap[--in->nheap];
    if (last == g) return;
    decoding_set(in, i, last);
    decoding_up(in, i);
    decoding_down(in, last->heap_at);
}

static sg_sim_gen *earliest(const instance *in) { return in->nheap ? in->heap[0] : NULL; }

static void instance_due(sg_loop *loop, void *arg);

/* (Re)set the instance's timer to its earliest chunk end (work brought up to now). */
static void arm(instance *in) {
    sg_sim_llm *m = in->m;
    if (in->in_due || m->closing) return;
    if (in->timer) sg_loop_timer_cancel(m->loop, in->timer);
    in->timer = 0;
    sg_sim_gen *g = earliest(in);
    if (!g) return;
    double left = g->chunk_end - in->work;
    int64_t ns = left > 0 ? (int64_t)ceil(left / in->rate * SG_SEC) : 0;
    in->timer = sg_loop_timer(m->loop, ns, instance_due, in);
}

/* The batch changed: the rate changes from now on. */
static void rerate(instance *in) {
    advance(in);
    in->rate = in->running > 0 ? sg_sim_decode_rate(&in->m->w, in->running) : 0;
    arm(in);
}

/* Tokens of its current chunk that g has decoded by now. */
static uint64_t partial(sg_sim_gen *g) {
    if (!g->decoding) return 0;
    instance *in = &g->m->in[g->instance];
    advance(in);
    double done = in->work - (g->chunk_end - (double)g->chunk);
    return done <= 0 ? 0 : done >= (double)g->chunk ? g->chunk : (uint64_t)done;
}

static int kv_on(const sg_sim_llm *m) { return m->w.kv_tokens > 0; }
static void kv_dequeue(instance *in, sg_sim_gen *g);
static void kv_admit(instance *in);

static void gen_free(sg_sim_gen *g) {
    sg_sim_llm *m = g->m;
    instance *in = &m->in[g->instance];
    if (g->timer) sg_loop_timer_cancel(m->loop, g->timer);
    if (g->prev) g->prev->next = g->next;
    if (g->next) g->next->prev = g->prev;
    if (m->gens == g) m->gens = g->next;
    if (g->decoding) decoding_remove(in, g);
    if (g->ctx) g->ctx->gen = NULL;
    if (g->waiting) kv_dequeue(in, g);
    if (g->admitted) {
        in->running--;
        in->kv_active -= g->kv;
    }
    sg_buf_free(&g->answer);
    free(g);
    rerate(in);
    if (kv_on(m) && !m->closing) kv_admit(in); /* its room may let a waiting one in */
}

static void free_ctx(ctx *c);

void sg_sim_llm_free(sg_sim_llm *m) {
    if (!m) return;
    m->closing = 1;
    while (m->gens) gen_free(m->gens);
    for (int i = 0; i < m->w.instances; i++) {
        if (m->in[i].timer) sg_loop_timer_cancel(m->loop, m->in[i].timer);
        free(m->in[i].heap);
    }
    for (int t = 0; t < m->ntasks; t++)
        while (m->by_task[t]) {
            ctx *c = m->by_task[t];
            m->by_task[t] = c->next_of_task;
            free_ctx(c);
        }
    free(m->by_task);
    free(m->in);
    sg_buf_free(&m->text);
    free(m->filler);
    free(m->filler_at);
    free(m);
}

void sg_sim_llm_counts(const sg_sim_llm *m, uint64_t *decoded, uint64_t *prefilled,
                       uint64_t *cached) {
    *decoded = m->decoded;
    *prefilled = m->prefilled;
    *cached = m->saved;
}

/* ---- the tiers: an instance's prefix cache, and the kvstore; least recently used first ---- */
static void lru_unlink(tier *t, ctx *c, int k) {
    lru_link *l = &c->link[k];
    if (!l->listed) return;
    l->listed = 0;
    if (l->prev)
        l->prev->link[k].next = l->next;
    else
        t->head = l->next;
    if (l->next)
        l->next->link[k].prev = l->prev;
    else
        t->tail = l->prev;
    l->prev = l->next = NULL;
    t->tokens -= l->tokens;
    l->tokens = 0;
}

/* c's prefix now holds `tokens` in t and is its most recently used. */
static void lru_push(tier *t, ctx *c, int k, uint64_t tokens) {
    lru_link *l = &c->link[k];
    lru_unlink(t, c, k);
    l->tokens = tokens;
    t->tokens += tokens;
    l->listed = 1;
    l->prev = t->tail;
    if (t->tail)
        t->tail->link[k].next = c;
    else
        t->head = c;
    t->tail = c;
}

/* The prefix cache's room: its own size, and with a KV capacity what the admitted
 * generations leave of it (the cache is squeezed before any request is preempted). */
static double cache_cap(const instance *in) {
    const sg_sim_llm *m = in->m;
    if (!kv_on(m)) return m->w.cache_tokens;
    double room = m->w.kv_tokens - (double)in->kv_active;
    return room < 0 ? 0 : room < m->w.cache_tokens ? room : m->w.cache_tokens;
}

static void squeeze(instance *in) {
    while ((double)in->cache.tokens > cache_cap(in) && in->cache.head)
        lru_unlink(&in->cache, in->cache.head, OWN);
}

/* The prefix now holds `cached` tokens in its instance's cache and is the most recently
 * used; then make room. */
static void touch(sg_sim_llm *m, ctx *c, uint64_t cached) {
    instance *in = &m->in[c->instance];
    lru_push(&in->cache, c, OWN, cached);
    squeeze(in);
}

/* ---- the kvstore (kvstore_tokens > 0): every instance writes its reasoning prefixes there
 * in whole chunks as they are decoded (LMCache's store; free here: an ASSUMPTION), and any
 * instance reads them back over the network in fetch_s ---- */
static int store_on(const sg_sim_llm *m) { return m->w.kvstore_tokens > 0; }

/* The prefix has `tokens` tokens: its whole chunks go to the kvstore (least recent out). */
static void store_put(sg_sim_llm *m, ctx *c, uint64_t tokens) {
    if (!store_on(m)) return;
    uint64_t chunk = m->w.kvstore_chunk_tokens > 0 ? (uint64_t)m->w.kvstore_chunk_tokens : 1;
    lru_push(&m->store, c, STORE, tokens / chunk * chunk);
    while ((double)m->store.tokens > m->w.kvstore_tokens && m->store.head)
        lru_unlink(&m->store, m->store.head, STORE);
}

/* Of the first `want` tokens of c's prefix, how many the kvstore holds (refreshed). */
static uint64_t store_get(sg_sim_llm *m, ctx *c, uint64_t want) {
    if (!c || !c->link[STORE].listed) return 0;
    uint64_t have = c->link[STORE].tokens;
    lru_push(&m->store, c, STORE, have);
    return have < want ? have : want;
}

/* Seconds to read n tokens of KV from the kvstore: a request's latency, then the bytes over
 * the link. */
static double fetch_s(const sg_sim_llm *m, uint64_t n) {
    if (!n) return 0;
    return m->w.kvstore_latency_s + (double)n * m->w.kv_bytes_per_token / (m->w.kvstore_gb_s * 1e9);
}

static void free_ctx(ctx *c) {
    if (c->gen) c->gen->ctx = NULL;
    free(c);
}

static ctx *find_ctx(sg_sim_llm *m, int task, int iteration, int stream) {
    if (task < 0 || task >= m->ntasks) return NULL;
    for (ctx *c = m->by_task[task]; c; c = c->next_of_task)
        if (c->iteration == iteration && c->stream == stream) return c;
    return NULL;
}

static ctx *add_ctx(sg_sim_llm *m, int task, int iteration, int stream, int instance,
                    uint64_t length) {
    if (task >= m->ntasks) {
        int n = task + 1 > 2 * m->ntasks ? task + 1 : 2 * m->ntasks;
        m->by_task = sg_xrealloc(m->by_task, (size_t)n * sizeof *m->by_task);
        memset(m->by_task + m->ntasks, 0, (size_t)(n - m->ntasks) * sizeof *m->by_task);
        m->ntasks = n;
    }
    for (ctx **p = &m->by_task[task]; *p;) { /* older iterations are never forked again */
        ctx *c = *p;
        if (c->iteration < iteration) {
            *p = c->next_of_task;
            lru_unlink(&m->in[c->instance].cache, c, OWN);
            lru_unlink(&m->store, c, STORE);
            free_ctx(c);
        } else {
            p = &c->next_of_task;
        }
    }
    ctx *c = sg_xcalloc(1, sizeof *c);
    *c = (ctx){.iteration = iteration, .stream = stream, .instance = instance, .length = length};
    c->next_of_task = m->by_task[task];
    m->by_task[task] = c;
    return c;
}

static int least_loaded(const sg_sim_llm *m) {
    int best = 0;
    for (int i = 1; i < m->w.instances; i++)
        if (m->in[i].running + m->in[i].nwaiting < m->in[best].running + m->in[best].nwaiting)
            best = i;
    return best;
}

/* ---- text ---- */

/* The next chunk of the reasoning ends at its next cue or code block, else CHUNK_MAX on. */
static uint64_t reasoning_chunk(const sg_sim_gen *g) {
    uint64_t k = g->length - g->emitted;
    if (g->trace) return k < TRACE_CHUNK ? k : TRACE_CHUNK;
    if (k > CHUNK_MAX) k = CHUNK_MAX;
    uint64_t ev = g->next_code < g->next_cue ? g->next_code : g->next_cue;
    if (ev >= g->emitted && ev - g->emitted + 1 < k) k = ev - g->emitted + 1;
    return k;
}

static void reasoning_text(sg_sim_gen *g, uint64_t k, sg_buf *out) {
    uint64_t at = g->emitted, end = g->emitted + k;
    for (; g->trace && at < end; at++) /* a recorded trace: its own tokens */
        sg_buf_append(out, g->trace->reasoning.tok[at].text, g->trace->reasoning.tok[at].len);
    while (at < end) {
        uint64_t ev = g->next_code < g->next_cue ? g->next_code : g->next_cue;
        if (ev > at) { /* filler up to the event (or the chunk's end) */
            uint64_t n = (ev < end ? ev : end) - at;
            filler(g->m, &g->rng, n, out);
            at += n;
        } else if (g->next_code <= at) {
            sg_buf_append_str(
                out, "\n```c\n__kernel void draft(__global float *y) { y[0] = 0; }\n```\n");
            g->next_code =
                at + CODE_TOKENS + 1 + (uint64_t)exp_draw(&g->rng, g->m->w.code_every_tokens);
            at++;
        } else {
            sg_buf_append_str(out, ".\n\nWait,");
            g->next_cue = at + 1 + (uint64_t)exp_draw(&g->rng, g->m->w.cue_every_tokens);
            at++;
        }
    }
}

/* The answer: filler, then the kernel, whose quality q and id are in its source (id 0: a
 * new unique one). */
static void make_answer_id(sg_sim_gen *g, double q, uint64_t tokens, uint64_t id) {
    q = q < 0 ? 0 : q > 1 ? 1 : q;
    if (!id) id = ++g->m->ids;
    if (tokens > 30) filler(g->m, &g->rng, tokens - 30, &g->answer);
    /* in code, not a comment: a comment would be folded away and every kernel a duplicate */
    sg_buf_printf(&g->answer,
                  "\n\n```opencl\n#define SIM_Q %.4f\n#define SIM_ID %llu\n//@launch k grid=N "
                  "block=256\n__kernel void k(__global float *y) { y[0] = SIM_Q; }\n```\n",
                  q, (unsigned long long)id);
    g->answer_tokens = tokens;
}

static void make_answer(sg_sim_gen *g, double q, uint64_t tokens) {
    make_answer_id(g, q, tokens, 0);
}

/* kernel_step: the fork writes its stream's previous fork's kernel again when its quality
 * before noise q_mean is in the same step; else a new kernel of quality q, remembered. */
static void make_fork_answer(sg_sim_gen *g, ctx *c, double q_mean, double q) {
    double s = g->m->w.kernel_step;
    uint64_t tokens = (uint64_t)g->m->w.fork_tokens;
    if (!(s > 0) || !c) {
        make_answer(g, q, tokens);
        return;
    }
    int64_t at = (int64_t)floor(q_mean / s);
    if (c->have_kernel && c->kernel_at == at) {
        make_answer_id(g, c->kernel_q, tokens, c->kernel_id);
        return;
    }
    make_answer(g, q, tokens);
    c->have_kernel = 1;
    c->kernel_at = at;
    c->kernel_q = q;
    c->kernel_id = g->m->ids;
}

/* ---- stepping ---- */

static int in_reasoning(const sg_sim_gen *g) { return !g->fork && g->emitted < g->length; }

/* Answer tokens still to come (at least 1 while its text is not all out). */
static uint64_t answer_left(const sg_sim_gen *g) {
    return g->answer_tokens > g->answer_emitted ? g->answer_tokens - g->answer_emitted : 1;
}

/* Start g's next chunk (decoding from now): reasoning first, then the answer. */
static void next_chunk(sg_sim_gen *g) {
    instance *in = &g->m->in[g->instance];
    if (in_reasoning(g)) {
        g->chunk = reasoning_chunk(g);
    } else {
        uint64_t left = answer_left(g);
        g->chunk = left < ANSWER_CHUNK ? left : ANSWER_CHUNK;
    }
    advance(in);
    g->chunk_end = in->work + (double)g->chunk;
    if (g->decoding) {
        decoding_down(in, g->heap_at); /* its chunk end only ever moves later */
    } else {
        g->decoding = 1;
        decoding_add(in, g);
    }
    arm(in);
}

static void kv_grow(sg_sim_gen *g, uint64_t k) {
    if (!kv_on(g->m)) return;
    g->kv += k;
    g->m->in[g->instance].kv_active += k;
}

/* g's chunk is decoded: hand its text out; then the next chunk, or the end. */
static void chunk_done(sg_sim_gen *g) {
    sg_sim_llm *m = g->m;
    sg_buf *text = &m->text;
    text->len = 0;
    if (in_reasoning(g)) {
        uint64_t k = g->chunk;
        reasoning_text(g, k, text);
        g->emitted += k;
        m->decoded += k;
        kv_grow(g, k);
        if (g->ctx) {
            touch(m, g->ctx, (uint64_t)m->w.prompt_tokens + g->emitted);
            store_put(m, g->ctx, (uint64_t)m->w.prompt_tokens + g->emitted);
        }
        g->in_callback = 1;
        g->cb.reasoning(g->cb.arg, text->data, text->len, g->emitted);
        g->in_callback = 0;
    } else { /* the answer: a share of its text as large as the chunk's of its tokens */
        uint64_t left = answer_left(g), k = g->chunk; /* next_chunk: k <= left */
        size_t n =
            k < left ? (g->answer.len - g->answer_pos) * k / left : g->answer.len - g->answer_pos;
        g->answer_emitted += k;
        m->decoded += k;
        kv_grow(g, k);
        size_t at = g->answer_pos;
        g->answer_pos += n;
        g->in_callback = 1;
        if (n) g->cb.content(g->cb.arg, g->answer.data + at, n);
        g->in_callback = 0;
    }
    if (g->aborted) {
        gen_free(g);
        return;
    }
    if (g->answer_pos < g->answer.len || in_reasoning(g)) {
        next_chunk(g);
        return;
    }
    sg_sim_gen_cb cb = g->cb;
    uint64_t r = g->fork ? 0 : g->emitted, a = g->answer_emitted, p = g->prompt, cached = g->cached;
    gen_free(g);
    cb.done(cb.arg, r, a, p, cached);
}

static void kv_settle(instance *in);

static void instance_due(sg_loop *loop, void *arg) {
    (void)loop;
    instance *in = arg;
    in->timer = 0;
    in->in_due = 1;
    for (;;) {
        advance(in);
        sg_sim_gen *g = earliest(in);
        if (!g || g->chunk_end > in->work + 1e-6) break;
        chunk_done(g);
    }
    in->in_due = 0;
    if (kv_on(in->m)) kv_settle(in);
    arm(in);
}

/* The prefill is over: g decodes from now on. */
static void begin(sg_loop *loop, void *arg) {
    (void)loop;
    sg_sim_gen *g = arg;
    g->timer = 0;
    if (g->resume) { /* preempted mid-chunk: the rest of that chunk */
        instance *in = &g->m->in[g->instance];
        advance(in);
        g->resume = 0;
        g->chunk_end = in->work + g->chunk_left;
        g->decoding = 1;
        decoding_add(in, g);
        arm(in);
        return;
    }
    next_chunk(g);
}

/* ---- the KV capacity (kv_tokens > 0): admission, preemption and recompute, as vLLM ----
 * An instance admits waiting requests in arrival order while their KV fits (the first that
 * does not fit holds the rest back; an empty instance admits anyway). Each admitted
 * generation holds its context's KV (prompt or uncached fork prefix, then every token it
 * decodes); past the capacity the prefix cache is squeezed first, then the newest admitted
 * generations are preempted: their KV is dropped and they wait again, and on re-admission
 * they prefill their whole context again (vLLM's default recompute). Prefills of an
 * instance run one after another at prefill_tok_s. */
static void kv_enqueue(instance *in, sg_sim_gen *g) {
    sg_sim_gen *after = in->wait_tail; /* arrival order: a preempted one goes back in place */
    while (after && after->seq > g->seq) after = after->wprev;
    g->wprev = after;
    g->wnext = after ? after->wnext : in->wait_head;
    if (g->wnext)
        g->wnext->wprev = g;
    else
        in->wait_tail = g;
    if (after)
        after->wnext = g;
    else
        in->wait_head = g;
    g->waiting = 1;
    in->nwaiting++;
}

static void kv_dequeue(instance *in, sg_sim_gen *g) {
    if (g->wprev)
        g->wprev->wnext = g->wnext;
    else
        in->wait_head = g->wnext;
    if (g->wnext)
        g->wnext->wprev = g->wprev;
    else
        in->wait_tail = g->wprev;
    g->wprev = g->wnext = NULL;
    g->waiting = 0;
    in->nwaiting--;
}

static void kv_admit(instance *in) {
    sg_sim_llm *m = in->m;
    while (in->wait_head && !m->closing) {
        sg_sim_gen *g = in->wait_head;
        if (in->running > 0 && (double)(in->kv_active + g->kv_need) > m->w.kv_tokens) break;
        kv_dequeue(in, g);
        g->admitted = 1;
        g->kv = g->kv_need;
        in->kv_active += g->kv;
        in->running++;
        rerate(in);
        int64_t now = sg_loop_now(m->loop);
        int64_t start = in->prefill_free_at > now ? in->prefill_free_at : now;
        in->prefill_free_at = start + (int64_t)((double)g->fill / m->w.prefill_tok_s * SG_SEC);
        int64_t at = in->prefill_free_at + (int64_t)(g->latency_s * SG_SEC);
        g->latency_s = 0;
        g->timer = sg_loop_timer(m->loop, at - now, begin, g);
    }
    squeeze(in);
}

static void kv_preempt(instance *in, sg_sim_gen *g) {
    sg_sim_llm *m = in->m;
    if (g->timer) { /* still prefilling: it starts over */
        sg_loop_timer_cancel(m->loop, g->timer);
        g->timer = 0;
    } else if (g->decoding) { /* the rest of its chunk is decoded after it resumes */
        advance(in);
        double left = g->chunk_end - in->work;
        g->chunk_left = left > 0 ? left : 0;
        g->resume = 1;
        decoding_remove(in, g);
        g->decoding = 0;
    }
    in->kv_active -= g->kv;
    in->running--;
    g->kv = 0;
    g->admitted = 0;
    g->kv_need = g->prompt + (g->fork ? 0 : g->emitted) + g->answer_emitted;
    /* its prefix comes back from the kvstore where it is there, the rest is recomputed */
    ctx *c = g->fork ? find_ctx(m, g->task, g->iteration, g->stream) : g->ctx;
    uint64_t got = store_get(m, c, g->fork ? g->prefix : g->prompt + g->emitted);
    g->fill = g->kv_need - got;
    g->latency_s = fetch_s(m, got);
    m->fetched += got;
    m->preemptions++;
    m->recomputed += g->fill;
    kv_enqueue(in, g);
    rerate(in);
}

/* After its generations grew: squeeze the cache, preempt the newest while over capacity,
 * then admit what fits. */
static void kv_settle(instance *in) {
    sg_sim_llm *m = in->m;
    int idx = (int)(in - m->in);
    squeeze(in);
    while ((double)in->kv_active > m->w.kv_tokens && in->running > 1) {
        sg_sim_gen *newest = NULL;
        for (sg_sim_gen *g = m->gens; g; g = g->next)
            if (g->admitted && g->instance == idx && (!newest || g->seq > newest->seq)) newest = g;
        kv_preempt(in, newest);
    }
    kv_admit(in);
}

void sg_sim_llm_signals_get(const sg_sim_llm *m, sg_sim_llm_signals *s) {
    memset(s, 0, sizeof *s);
    s->instances = m->w.instances;
    for (int i = 0; i < m->w.instances; i++) {
        const instance *in = &m->in[i];
        s->running += in->running;
        s->waiting += in->nwaiting;
        double u = kv_on(m) ? (double)in->kv_active / m->w.kv_tokens : 0;
        if (u > s->kv_usage) s->kv_usage = u;
    }
    s->preemptions = m->preemptions;
    s->recomputed_tokens = m->recomputed;
    s->decoded = m->decoded;
    s->fork_queries = m->fork_queries;
    s->fork_hits = m->fork_hits;
    s->fork_fetches = m->fork_fetches;
    s->fetched_tokens = m->fetched;
}

static sg_sim_gen *gen_new(sg_sim_llm *m, int instance, const sg_sim_gen_cb *cb, uint64_t key) {
    sg_sim_gen *g = sg_xcalloc(1, sizeof *g);
    g->m = m;
    g->cb = *cb;
    g->instance = instance;
    g->rng = mix(m->seed ^ mix(key));
    g->seq = ++m->seqs;
    if (!kv_on(m)) { /* else admitted when there is room (kv_admit) */
        g->admitted = 1;
        m->in[instance].running++;
        rerate(&m->in[instance]);
    }
    g->next = m->gens;
    if (m->gens) m->gens->prev = g;
    m->gens = g;
    return g;
}

/* Decoding begins after latency_s (a fixed latency and any kvstore fetch) and `fill` tokens
 * of prefill; with a KV capacity, once admitted (holding kv_need tokens), its prefill queued
 * behind the instance's. */
static void start_after(sg_sim_gen *g, double latency_s, uint64_t kv_need, uint64_t fill) {
    if (!kv_on(g->m)) {
        double s = latency_s + (double)fill / g->m->w.prefill_tok_s;
        g->timer = sg_loop_timer(g->m->loop, (int64_t)(s * SG_SEC), begin, g);
        return;
    }
    instance *in = &g->m->in[g->instance];
    g->latency_s = latency_s;
    g->kv_need = kv_need;
    g->fill = fill;
    kv_enqueue(in, g);
    kv_admit(in);
}

sg_sim_gen *sg_sim_llm_reason(sg_sim_llm *m, int task, int iteration, int stream,
                              const sg_sim_gen_cb *cb) {
    uint64_t key = ((uint64_t)task << 40) ^ ((uint64_t)iteration << 20) ^ (uint64_t)stream;
    sg_sim_gen *g = gen_new(m, least_loaded(m), cb, key);
    double mu = log(m->w.reasoning_tokens) - log(1 + m->w.reasoning_cv * m->w.reasoning_cv) / 2;
    double sd = sqrt(log(1 + m->w.reasoning_cv * m->w.reasoning_cv));
    double len = exp(mu + sd * normal(&g->rng));
    g->length = len < 200 ? 200 : (uint64_t)len;
    g->next_code = (uint64_t)exp_draw(&g->rng, m->w.code_every_tokens);
    g->next_cue = (uint64_t)exp_draw(&g->rng, m->w.cue_every_tokens);
    g->prompt = (uint64_t)m->w.prompt_tokens;
    m->prefilled += g->prompt;
    double floor = m->w.q_carry > 0 && m->q_task == task && m->q_iteration == iteration
                       ? m->w.q_carry * m->q_best
                       : 0;
    double q_end = floor > 0 ? quality(&m->w, iteration, floor, 1, m->w.q_final)
                             : m->w.q_final + m->w.q_iter * (iteration - 1);
    make_answer(g, q_end + m->w.q_sd * normal(&g->rng), (uint64_t)m->w.final_tokens);
    if (m->traces && m->traces->n) { /* sim --traces: a recorded reasoning, task by task */
        g->trace = &m->traces->t[(size_t)task % m->traces->n];
        g->length = g->trace->reasoning.n;
    }
    g->ctx = add_ctx(m, task, iteration, stream, g->instance, g->length);
    g->ctx->floor = floor;
    g->ctx->gen = g;
    start_after(g, m->w.first_token_s, g->prompt, g->prompt);
    return g;
}

/* Where a fork is served (kv_placement): on the instance that holds its prefix (`own`, -1:
 * none) unless that one is loaded past the threshold N (more requests, running and waiting,
 * than the least loaded by more than N and by more than half again, as SGLang's cache-aware
 * router), else on the least loaded. */
static int place(const sg_sim_llm *m, int own) {
    int low = least_loaded(m);
    if (own < 0 || m->w.kv_placement < 0) return low;
    double lo = m->in[low].running + m->in[low].nwaiting;
    double load = m->in[own].running + m->in[own].nwaiting;
    return load - lo > m->w.kv_placement && load > 1.5 * lo ? low : own;
}

sg_sim_gen *sg_sim_llm_fork(sg_sim_llm *m, int task, int iteration, int stream,
                            uint64_t prefix_tokens, const sg_sim_gen_cb *cb) {
    ctx *c = find_ctx(m, task, iteration, stream);
    uint64_t prefix = (uint64_t)m->w.prompt_tokens + prefix_tokens;
    int own = c && c->link[OWN].tokens >= prefix;
    /* with a KV capacity, a running reasoning's own blocks serve its forks (vLLM shares them) */
    if (kv_on(m) && c && c->gen && c->gen->admitted && c->gen->kv >= prefix) own = 1;
    uint64_t key = ((uint64_t)task << 40) ^ ((uint64_t)iteration << 20) ^ (uint64_t)stream ^
                   (prefix_tokens << 8) ^ 0x5f0f;
    int at = place(m, own ? c->instance : -1);
    int hit = own && at == c->instance;
    m->fork_queries++;
    m->fork_hits += hit;
    sg_sim_gen *g = gen_new(m, at, cb, key ^ ++m->forks);
    g->fork = 1;
    g->task = task, g->iteration = iteration, g->stream = stream, g->prefix = prefix;
    g->prompt = prefix + FORK_PREFIX_TOKENS;
    /* its prefix: in the instance's own cache (free), else what the kvstore holds (fetched),
     * the rest prefilled */
    uint64_t got = hit ? 0 : store_get(m, c, prefix);
    g->cached = hit ? prefix : got;
    uint64_t fill = g->prompt - g->cached;
    m->fork_fetches += got > 0;
    m->fetched += got;
    m->prefilled += fill;
    m->saved += g->cached;
    if (hit) touch(m, c, c->link[OWN].tokens);
    double f = c && c->length ? (double)prefix_tokens / (double)c->length : 0.5;
    f = f > 1 ? 1 : f;
    double q_mean = quality(&m->w, iteration, c ? c->floor : 0, f, m->w.q1);
    double q = q_mean + m->w.q_sd * normal(&g->rng);
    make_fork_answer(g, c, q_mean, q);
    start_after(g, m->w.first_token_s * 0.3 + fetch_s(m, got), hit ? fill : g->prompt, fill);
    return g;
}

void sg_sim_llm_abort(sg_sim_llm *m, sg_sim_gen *g, uint64_t *reasoning, uint64_t *content) {
    /* the chunk under way counts as far as it got (none of it after its own callback) */
    uint64_t part = g->in_callback ? 0 : partial(g);
    int reasoning_part = in_reasoning(g);
    m->decoded += part;
    if (reasoning) *reasoning = g->fork ? 0 : g->emitted + (reasoning_part ? part : 0);
    if (content) *content = g->answer_emitted + (reasoning_part ? 0 : part);
    if (g->in_callback) {
        g->aborted = 1; /* chunk_done frees it when the callback returns */
        return;
    }
    gen_free(g);
}
