/* replay-llm's token ids, as vLLM gives and takes them: a vocabulary built as tokens are
 * seen (the trace's cut: blanks + at most 6 bytes), prompts given as ids, the ids a stream
 * returns with return_token_ids (prompt_token_ids on the first chunk, token_ids on each),
 * /tokenize, and --cached-prefix counted by ids: the leading ids a prompt shares with a
 * sequence served before (its prompt and the ids it streamed), as a prefix cache holds
 * generated tokens too. */
#include "replay/replay_impl.h"

#include "common/json.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static void ids_push(sg_replay_ids *a, int32_t id) {
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 64;
        a->v = sg_xrealloc(a->v, a->cap * sizeof *a->v);
    }
    a->v[a->n++] = id;
}

static void rehash(sg_replay_vocab *v) {
    free(v->slot);
    v->nslot = v->nslot ? 2 * v->nslot : 1024;
    v->slot = sg_xcalloc(v->nslot, sizeof *v->slot);
    for (size_t id = 0; id < v->n; id++) {
        size_t k = hash(v->str[id], v->len[id]) & (v->nslot - 1);
        while (v->slot[k]) k = (k + 1) & (v->nslot - 1);
        v->slot[k] = (int32_t)id + 1;
    }
}

/* The id of a token's text, given one when first seen. Under s->mu. */
static int32_t vocab_id(sg_replay_vocab *v, const char *t, size_t n) {
    if (2 * (v->n + 1) > v->nslot) rehash(v);
    size_t k = hash(t, n) & (v->nslot - 1);
    for (; v->slot[k]; k = (k + 1) & (v->nslot - 1)) {
        int32_t id = v->slot[k] - 1;
        if (v->len[id] == n && !memcmp(v->str[id], t, n)) return id;
    }
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 1024;
        v->str = sg_xrealloc(v->str, v->cap * sizeof *v->str);
        v->len = sg_xrealloc(v->len, v->cap * sizeof *v->len);
    }
    v->str[v->n] = sg_xmalloc(n + 1);
    memcpy(v->str[v->n], t, n);
    v->str[v->n][n] = '\0';
    v->len[v->n] = (uint32_t)n;
    v->slot[k] = (int32_t)v->n + 1;
    return (int32_t)v->n++;
}

static void ids_of(sg_replay_vocab *v, const char *t, size_t n, sg_replay_ids *out) {
    for (size_t i = 0; i < n;) {
        size_t e = sg_replay_token_end(t, n, i);
        if (e == i) e = i + 1; /* a NUL byte: a token of its own */
        ids_push(out, vocab_id(v, t + i, e - i));
        i = e;
    }
}

int sg_replay_ids_request(sg_replay_rq *r, json_t *req, int chat, char **prompt, sg_err *err) {
    sg_replay_server *s = r->s;
    int ret = json_is_true(json_object_get(req, "return_token_ids"));
    if (ret && chat && s->cfg.dialect == SG_DIALECT_SGLANG) /* serving_chat.py refuses it */
        return sg_errf(err, "return_token_ids is not supported with streaming on "
                            "/v1/chat/completions. Please set stream=false when using "
                            "return_token_ids=true.");
    r->fmt.return_ids =
        ret && (s->cfg.dialect == SG_DIALECT_VLLM || s->cfg.dialect == SG_DIALECT_RAW);
    json_t *p = json_object_get(req, "prompt");
    r->has_ids = r->fmt.return_ids;
    if (chat || !json_is_array(p) || !json_is_integer(json_array_get(p, 0))) return 0;
    sg_buf text = {0};
    size_t i;
    json_t *x;
    pthread_mutex_lock(&s->mu);
    json_array_foreach(p, i, x) {
        json_int_t id = json_is_integer(x) ? json_integer_value(x) : -1;
        if (id < 0 || (size_t)id >= s->vocab.n) {
            pthread_mutex_unlock(&s->mu);
            sg_buf_free(&text);
            return sg_errf(err, "prompt[%zu]: token id %lld is not one this server gave out", i,
                           (long long)id);
        }
        sg_buf_append(&text, s->vocab.str[id], s->vocab.len[id]);
        ids_push(&r->pids, (int32_t)id);
    }
    pthread_mutex_unlock(&s->mu);
    free(*prompt);
    *prompt = sg_buf_steal(&text);
    if (!*prompt) *prompt = sg_xstrdup("");
    r->has_ids = 1;
    return 0;
}

/* A chunk of ids only (no text) at step i's time, before it. */
static void insert_ids_step(sg_replay_rq *r, size_t i, const char *tag) {
    r->steps = sg_xrealloc(r->steps, (r->nsteps + 1) * sizeof *r->steps);
    memmove(r->steps + i + 1, r->steps + i, (r->nsteps - i) * sizeof *r->steps);
    r->nsteps++;
    r->steps[i] =
        (sg_replay_step){SG_RF_IDS, tag, (uint32_t)strlen(tag), r->steps[i + 1].at_us, 0, 0};
}

void sg_replay_ids_plan(sg_replay_rq *r, const char *prompt) {
    if (!r->has_ids) return;
    if (r->fmt.chat && r->fmt.d != SG_DIALECT_RAW) { /* the tags the reasoning parser hides */
        size_t first = r->nsteps, last = r->nsteps;
        for (size_t i = 0; i < r->nsteps; i++)
            if (r->steps[i].kind == SG_RF_REASONING) last = i, first = first < i ? first : i;
        if (first < r->nsteps) {
            insert_ids_step(r, last + 1, "\n</think>\n\n");
            insert_ids_step(r, first, "<think>\n");
        }
    }
    sg_replay_server *s = r->s;
    pthread_mutex_lock(&s->mu);
    if (!r->pids.n) ids_of(&s->vocab, prompt, strlen(prompt), &r->pids);
    for (size_t i = 0; i < r->nsteps; i++) {
        sg_replay_step *st = &r->steps[i];
        st->id_off = (uint32_t)r->ids.n;
        if (st->kind == SG_RF_REASONING || st->kind == SG_RF_CONTENT || st->kind == SG_RF_IDS)
            ids_of(&s->vocab, st->text, st->len, &r->ids);
        st->id_n = (uint32_t)(r->ids.n - st->id_off);
    }
    pthread_mutex_unlock(&s->mu);
    r->fmt.prompt_tokens = (int64_t)r->pids.n;
    r->fmt.prompt_ids = r->pids.v;
    r->fmt.n_prompt_ids = r->fmt.return_ids ? r->pids.n : 0;
}

int64_t sg_replay_ids_cached(sg_replay_rq *r) {
    sg_replay_idcache *c = &r->s->idseen;
    size_t best = 0;
    for (size_t i = 0; i < c->n && best < r->pids.n; i++) {
        size_t k = 0, m = c->seq[i].n < r->pids.n ? c->seq[i].n : r->pids.n;
        while (k < m && c->seq[i].v[k] == r->pids.v[k]) k++;
        if (k > best) best = k;
    }
    size_t slot = c->n < SG_REPLAY_PREFIX_KEEP ? c->n++ : c->next; /* full: the oldest goes */
    if (c->n == SG_REPLAY_PREFIX_KEEP) c->next = (slot + 1) % SG_REPLAY_PREFIX_KEEP;
    c->seq[slot].n = 0;
    for (size_t i = 0; i < r->pids.n; i++) ids_push(&c->seq[slot], r->pids.v[i]);
    c->serial[slot] = r->id_serial = ++c->next_serial;
    r->id_slot = slot;
    return (int64_t)best;
}

void sg_replay_ids_streamed(sg_replay_rq *r, const sg_replay_step *st) {
    if (!r->id_serial || !st->id_n) return;
    sg_replay_server *s = r->s;
    pthread_mutex_lock(&s->mu);
    if (s->idseen.serial[r->id_slot] == r->id_serial)
        for (uint32_t i = 0; i < st->id_n; i++)
            ids_push(&s->idseen.seq[r->id_slot], r->ids.v[st->id_off + i]);
    pthread_mutex_unlock(&s->mu);
}

int sg_replay_tokenize(sg_replay_server *s, const char *body, size_t len, sg_buf *out,
                       sg_err *err) {
    json_t *req = sg_json_parse(body ? body : "", len, "request body", err);
    const char *prompt = NULL;
    if (!req || sg_json_get_str(req, "prompt", 1, &prompt, "request", err) < 0) {
        json_decref(req);
        return -1;
    }
    sg_replay_ids ids = {0};
    pthread_mutex_lock(&s->mu);
    ids_of(&s->vocab, prompt, strlen(prompt), &ids);
    pthread_mutex_unlock(&s->mu);
    json_decref(req);
    sg_buf_printf(out, "{\"count\":%zu,\"max_model_len\":32768,\"tokens\":[", ids.n);
    for (size_t i = 0; i < ids.n; i++) sg_buf_printf(out, i ? ",%d" : "%d", ids.v[i]);
    sg_buf_append_str(out, "],\"token_strs\":null}");
    free(ids.v);
    return 0;
}

void sg_replay_ids_free(sg_replay_server *s) {
    for (size_t i = 0; i < s->vocab.n; i++) free(s->vocab.str[i]);
    free(s->vocab.str);
    free(s->vocab.len);
    free(s->vocab.slot);
    for (size_t i = 0; i < s->idseen.n; i++) free(s->idseen.seq[i].v);
}
