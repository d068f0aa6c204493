/* The LLM serving model (sim.h): instances, decode rate by batch, prefill, a prefix cache,
 * and text that the real trigger policy and extractor can read. Generations advance in
 * chunks of CHUNK tokens, each a timer on the (virtual) loop. */
#include "sim/sim.h"

#include "common/buf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 16              /* tokens a step */
#define CODE_TOKENS 40        /* a code block in the reasoning */
#define FORK_PREFIX_TOKENS 40 /* end-of-thinking and answer prefix, never cached */

typedef struct ctx { /* a reasoning stream's prefix in its instance's cache */
    int task, iteration, stream, instance;
    uint64_t length; /* the whole reasoning, tokens */
    uint64_t cached; /* tokens of it in the cache now (prompt included) */
    uint64_t used;   /* LRU clock */
    double floor;    /* q_carry: the quality this iteration starts from (0: none) */
} ctx;

struct sg_sim_gen {
    sg_sim_llm *m;
    sg_sim_gen_cb cb;
    int instance, fork;
    int task, iteration, stream;
    uint64_t length, emitted; /* reasoning: its length, tokens out so far */
    sg_buf answer;            /* the answer's text, emitted after the reasoning */
    size_t answer_pos;
    uint64_t answer_tokens, answer_emitted;
    uint64_t prompt, cached;
    uint64_t next_code, next_cue;
    uint64_t rng, timer;
    int in_callback, aborted; /* abort from inside its own callback frees it afterwards */
    struct sg_sim_gen *prev, *next;
};

struct sg_sim_llm {
    sg_loop *loop;
    sg_sim_workload w;
    uint64_t seed, clock, ids;
    int *running; /* streams per instance */
    ctx *c;
    int nc, capc;
    sg_sim_gen *gens;
    uint64_t decoded, prefilled, saved;
    int q_task, q_iteration; /* sg_sim_llm_prompt_quality's, for the next reasoning */
    double q_best;
};

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

sg_sim_llm *sg_sim_llm_new(sg_loop *loop, const sg_sim_workload *w, uint64_t seed) {
    sg_sim_llm *m = sg_xcalloc(1, sizeof *m);
    m->loop = loop;
    m->w = *w;
    m->seed = seed;
    m->running = sg_xcalloc((size_t)w->instances, sizeof *m->running);
    return m;
}

static void gen_free(sg_sim_gen *g) {
    sg_sim_llm *m = g->m;
    if (g->timer) sg_loop_timer_cancel(m->loop, g->timer);
    if (g->prev) g->prev->next = g->next;
    if (g->next) g->next->prev = g->prev;
    if (m->gens == g) m->gens = g->next;
    m->running[g->instance]--;
    sg_buf_free(&g->answer);
    free(g);
}

void sg_sim_llm_free(sg_sim_llm *m) {
    if (!m) return;
    while (m->gens) gen_free(m->gens);
    free(m->running);
    free(m->c);
    free(m);
}

void sg_sim_llm_counts(const sg_sim_llm *m, uint64_t *decoded, uint64_t *prefilled,
                       uint64_t *cached) {
    *decoded = m->decoded;
    *prefilled = m->prefilled;
    *cached = m->saved;
}

/* ---- the prefix cache ---- */
static ctx *find_ctx(sg_sim_llm *m, int task, int iteration, int stream) {
    for (int i = 0; i < m->nc; i++)
        if (m->c[i].task == task && m->c[i].iteration == iteration && m->c[i].stream == stream)
            return &m->c[i];
    return NULL;
}

/* Make room on an instance: least recently used prefixes leave the cache first. */
static void fit_cache(sg_sim_llm *m, int instance) {
    for (;;) {
        uint64_t total = 0;
        ctx *lru = NULL;
        for (int i = 0; i < m->nc; i++) {
            ctx *c = &m->c[i];
            if (c->instance != instance || !c->cached) continue;
            total += c->cached;
            if (!lru || c->used < lru->used) lru = c;
        }
        if ((double)total <= m->w.cache_tokens || !lru) return;
        lru->cached = 0;
    }
}

static ctx *add_ctx(sg_sim_llm *m, int task, int iteration, int stream, int instance,
                    uint64_t length) {
    for (int i = 0; i < m->nc; i++) /* the task's older iterations are never forked again */
        if (m->c[i].task == task && m->c[i].iteration < iteration) m->c[i] = m->c[--m->nc], i--;
    if (m->nc == m->capc) {
        m->capc = m->capc ? 2 * m->capc : 64;
        m->c = sg_xrealloc(m->c, (size_t)m->capc * sizeof *m->c);
    }
    ctx *c = &m->c[m->nc++];
    *c = (ctx){task, iteration, stream, instance, length, 0, ++m->clock, 0};
    return c;
}

static int least_loaded(const sg_sim_llm *m) {
    int best = 0;
    for (int i = 1; i < m->w.instances; i++)
        if (m->running[i] < m->running[best]) best = i;
    return best;
}

/* ---- text ---- */
static const char *const words[] = {" the", " load", " tile", " thread", " block", " memory",
                                    " so",  " each", " row",  " then",   " sum",   " store"};

static void reasoning_text(sg_sim_gen *g, uint64_t k, sg_buf *out) {
    for (uint64_t i = 0; i < k; i++) {
        uint64_t at = g->emitted + i;
        if (at == g->next_code) {
            sg_buf_append_str(
                out, "\n```c\n__kernel void draft(__global float *y) { y[0] = 0; }\n```\n");
            g->next_code =
                at + CODE_TOKENS + 1 + (uint64_t)exp_draw(&g->rng, g->m->w.code_every_tokens);
        } else if (at == g->next_cue) {
            sg_buf_append_str(out, ".\n\nWait,");
            g->next_cue = at + 1 + (uint64_t)exp_draw(&g->rng, g->m->w.cue_every_tokens);
        } else {
            sg_buf_append_str(out, words[next(&g->rng) % (sizeof words / sizeof *words)]);
        }
    }
}

/* The answer: filler, then the kernel, whose quality q and unique id are in its source. */
static void make_answer(sg_sim_gen *g, double q, uint64_t tokens) {
    q = q < 0 ? 0 : q > 1 ? 1 : q;
    uint64_t id = ++g->m->ids;
    for (uint64_t i = 0; i + 30 < tokens; i++)
        sg_buf_append_str(&g->answer, words[next(&g->rng) % (sizeof words / sizeof *words)]);
    /* in code, not a comment: a comment would be folded away and every kernel a duplicate */
    sg_buf_printf(&g->answer,
                  "\n\n```opencl\n#define SIM_Q %.4f\n#define SIM_ID %llu\n//@launch k grid=N "
                  "block=256\n__kernel void k(__global float *y) { y[0] = SIM_Q; }\n```\n",
                  q, (unsigned long long)id);
    g->answer_tokens = tokens;
}

/* ---- stepping ---- */
static void step(sg_loop *loop, void *arg);

static void schedule(sg_sim_gen *g, double extra_s) {
    double rate = sg_sim_decode_rate(&g->m->w, g->m->running[g->instance]);
    double s = CHUNK / rate + extra_s;
    g->timer = sg_loop_timer(g->m->loop, (int64_t)(s * SG_SEC), step, g);
}

static void step(sg_loop *loop, void *arg) {
    (void)loop;
    sg_sim_gen *g = arg;
    sg_sim_llm *m = g->m;
    g->timer = 0;
    sg_buf text = {0};
    if (!g->fork && g->emitted < g->length) { /* reasoning */
        uint64_t k = g->length - g->emitted < CHUNK ? g->length - g->emitted : CHUNK;
        reasoning_text(g, k, &text);
        g->emitted += k;
        m->decoded += k;
        ctx *c = find_ctx(m, g->task, g->iteration, g->stream);
        if (c) {
            c->cached = (uint64_t)m->w.prompt_tokens + g->emitted;
            c->used = ++m->clock;
            fit_cache(m, g->instance);
        }
        g->in_callback = 1;
        g->cb.reasoning(g->cb.arg, text.data, text.len, g->emitted);
        g->in_callback = 0;
    } else if (g->answer_pos < g->answer.len) { /* the answer, in chunks of text */
        uint64_t left =
            g->answer_tokens > g->answer_emitted ? g->answer_tokens - g->answer_emitted : 1;
        size_t n = (g->answer.len - g->answer_pos) * (CHUNK < left ? CHUNK : left) / left;
        if (n == 0) n = g->answer.len - g->answer_pos;
        uint64_t k = CHUNK < left ? CHUNK : left;
        g->answer_emitted += k;
        m->decoded += k;
        size_t at = g->answer_pos;
        g->answer_pos += n;
        g->in_callback = 1;
        g->cb.content(g->cb.arg, g->answer.data + at, n);
        g->in_callback = 0;
    } else {
        sg_sim_gen_cb cb = g->cb;
        uint64_t r = g->fork ? 0 : g->emitted, a = g->answer_emitted, p = g->prompt,
                 cached = g->cached;
        gen_free(g);
        cb.done(cb.arg, r, a, p, cached);
        sg_buf_free(&text);
        return;
    }
    sg_buf_free(&text);
    if (g->aborted) {
        gen_free(g);
        return;
    }
    schedule(g, 0);
}

static sg_sim_gen *gen_new(sg_sim_llm *m, int instance, const sg_sim_gen_cb *cb, uint64_t key) {
    sg_sim_gen *g = sg_xcalloc(1, sizeof *g);
    g->m = m;
    g->cb = *cb;
    g->instance = instance;
    g->rng = mix(m->seed ^ mix(key));
    m->running[instance]++;
    g->next = m->gens;
    if (m->gens) m->gens->prev = g;
    m->gens = g;
    return g;
}

sg_sim_gen *sg_sim_llm_reason(sg_sim_llm *m, int task, int iteration, int stream,
                              const sg_sim_gen_cb *cb) {
    uint64_t key = ((uint64_t)task << 40) ^ ((uint64_t)iteration << 20) ^ (uint64_t)stream;
    sg_sim_gen *g = gen_new(m, least_loaded(m), cb, key);
    g->task = task;
    g->iteration = iteration;
    g->stream = stream;
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
    add_ctx(m, task, iteration, stream, g->instance, g->length)->floor = floor;
    schedule(g, m->w.first_token_s + m->w.prompt_tokens / m->w.prefill_tok_s);
    return g;
}

sg_sim_gen *sg_sim_llm_fork(sg_sim_llm *m, int task, int iteration, int stream,
                            uint64_t prefix_tokens, const sg_sim_gen_cb *cb) {
    ctx *c = find_ctx(m, task, iteration, stream);
    uint64_t prefix = (uint64_t)m->w.prompt_tokens + prefix_tokens;
    int hit = c && c->cached >= prefix;
    uint64_t key = ((uint64_t)task << 40) ^ ((uint64_t)iteration << 20) ^ (uint64_t)stream ^
                   (prefix_tokens << 8) ^ 0x5f0f;
    sg_sim_gen *g = gen_new(m, hit ? c->instance : least_loaded(m), cb, key ^ ++m->clock);
    g->fork = 1;
    g->task = task;
    g->iteration = iteration;
    g->stream = stream;
    g->prompt = prefix + FORK_PREFIX_TOKENS;
    g->cached = hit ? prefix : 0;
    uint64_t fill = g->prompt - g->cached;
    m->prefilled += fill;
    m->saved += g->cached;
    if (hit) c->used = ++m->clock;
    double f = c && c->length ? (double)prefix_tokens / (double)c->length : 0.5;
    f = f > 1 ? 1 : f;
    double q =
        quality(&m->w, iteration, c ? c->floor : 0, f, m->w.q1) + m->w.q_sd * normal(&g->rng);
    make_answer(g, q, (uint64_t)m->w.fork_tokens);
    schedule(g, m->w.first_token_s * 0.3 + (double)fill / m->w.prefill_tok_s);
    return g;
}

void sg_sim_llm_abort(sg_sim_llm *m, sg_sim_gen *g, uint64_t *reasoning, uint64_t *content) {
    (void)m;
    if (reasoning) *reasoning = g->fork ? 0 : g->emitted;
    if (content) *content = g->answer_emitted;
    if (g->in_callback) {
        g->aborted = 1; /* step() frees it when the callback returns */
        return;
    }
    gen_free(g);
}
