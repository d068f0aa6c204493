/* llm_scan.c — sg_llm_chunk_scan (llm_chunk.h): one pass over a streamed chunk's bytes
 * that fills the same sg_llm_chunk as jansson + sg_llm_chunk_decode, without building a
 * tree. It validates as strictly as jansson does (UTF-8, escapes, surrogates, control
 * characters, literals, number grammar, nothing after the value) and declines (returns
 * 0, the caller then uses jansson) wherever matching jansson exactly would take more:
 * an "error" field, a key of interest given twice or spelled with an escape, numbers with
 * an exponent or out of int64's range, nesting past MAX_DEPTH, any malformed input.
 *
 * Token ids (an array's integers) go as int32 into the scratch buffer after the strings.
 *
 * Adding a field: a K_ name, a KEY row (the object it sits in, its name; CHILD if
 * it is an object or array to look into), and read its val in fill(). */
#include "llm/llm_chunk.h"

#include <string.h>

enum { MAX_DEPTH = 64 };

/* The objects whose keys matter; C_SKIP: only validated. */
enum ctx { C_SKIP, C_ROOT, C_USAGE, C_CTD, C_PTD, C_CHOICE, C_DELTA };

enum key {
    K_NONE,
    K_ERROR,
    K_USAGE,
    K_TIMINGS,
    K_FP,
    K_CHOICES,
    K_PROMPT,
    K_COMPLETION,
    K_CTD,
    K_USAGE_RT,
    K_PTD,
    K_CTD_RT,
    K_CACHED,
    K_STOP_REASON,
    K_MATCHED_STOP,
    K_FINISH,
    K_DELTA,
    K_TEXT,
    K_REASONING,
    K_REASONING_CONTENT,
    K_CONTENT,
    K_PROMPT_IDS,
    K_CHOICE_PROMPT_IDS,
    K_TOKEN_IDS,
    K_N
};

#define KEY(ctx, key, name)                                                                        \
    { ctx, key, sizeof name - 1, name }
static const struct {
    unsigned char ctx, key, len;
    const char *name;
} KEYS[] = {
    KEY(C_ROOT, K_ERROR, "error"),
    KEY(C_ROOT, K_USAGE, "usage"),
    KEY(C_ROOT, K_TIMINGS, "timings"),
    KEY(C_ROOT, K_FP, "system_fingerprint"),
    KEY(C_ROOT, K_CHOICES, "choices"),
    KEY(C_ROOT, K_PROMPT_IDS, "prompt_token_ids"),
    KEY(C_USAGE, K_PROMPT, "prompt_tokens"),
    KEY(C_USAGE, K_COMPLETION, "completion_tokens"),
    KEY(C_USAGE, K_CTD, "completion_tokens_details"),
    KEY(C_USAGE, K_USAGE_RT, "reasoning_tokens"),
    KEY(C_USAGE, K_PTD, "prompt_tokens_details"),
    KEY(C_CTD, K_CTD_RT, "reasoning_tokens"),
    KEY(C_PTD, K_CACHED, "cached_tokens"),
    KEY(C_CHOICE, K_STOP_REASON, "stop_reason"),
    KEY(C_CHOICE, K_MATCHED_STOP, "matched_stop"),
    KEY(C_CHOICE, K_FINISH, "finish_reason"),
    KEY(C_CHOICE, K_DELTA, "delta"),
    KEY(C_CHOICE, K_TEXT, "text"),
    KEY(C_CHOICE, K_CHOICE_PROMPT_IDS, "prompt_token_ids"),
    KEY(C_CHOICE, K_TOKEN_IDS, "token_ids"),
    KEY(C_DELTA, K_REASONING, "reasoning"),
    KEY(C_DELTA, K_REASONING_CONTENT, "reasoning_content"),
    KEY(C_DELTA, K_CONTENT, "content"),
};

/* The object a key's value is read as (for "choices": its first element). */
static const unsigned char CHILD[K_N] = {
    [K_USAGE] = C_USAGE, [K_CTD] = C_CTD,        [K_PTD] = C_PTD,
    [K_DELTA] = C_DELTA, [K_CHOICES] = C_CHOICE,
};

/* Keys whose string values are kept (unescaped, NUL-terminated, in the scratch buffer). */
static const unsigned char KEEP[K_N] = {
    [K_FP] = 1,      [K_FINISH] = 1, [K_TEXT] = 1, [K_REASONING] = 1, [K_REASONING_CONTENT] = 1,
    [K_CONTENT] = 1,
};

/* Keys whose arrays' integers are kept (as int32, in the scratch buffer). */
static const unsigned char IDS[K_N] = {
    [K_PROMPT_IDS] = 1,
    [K_CHOICE_PROMPT_IDS] = 1,
    [K_TOKEN_IDS] = 1,
};

enum kind { V_NONE, V_STR, V_INT, V_REAL, V_OBJ, V_ARR, V_TRUE, V_FALSE, V_NULL };

typedef struct val {
    unsigned char kind;
    int first_obj; /* an array whose first element is an object */
    const char *s;
    size_t n; /* a string's length, an ids array's count */
    int64_t i;
    int32_t *ids;
} val;

typedef struct scan {
    const unsigned char *p, *e;
    char *out;    /* where kept strings go */
    int32_t *ids; /* where kept ids go */
    int depth;
    val v[K_N];
} scan;

static int value(scan *s, int key, val *v);

static void ws(scan *s) {
    while (s->p < s->e && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t')) s->p++;
}

/* The length of the valid UTF-8 sequence at p (jansson's rules: no overlong forms, no
 * surrogates, nothing past U+10FFFF), or 0. */
static int utf8_len(const unsigned char *p, const unsigned char *e) {
    unsigned c = p[0], n, v;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, v = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, v = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, v = c & 0x07;
    else
        return 0;
    if ((size_t)(e - p) < n) return 0;
    for (unsigned i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) return 0;
        v = v << 6 | (p[i] & 0x3f);
    }
    if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
    if ((n == 3 && v < 0x800) || (n == 4 && v < 0x10000)) return 0;
    return (int)n;
}

static int hex4(const unsigned char *p, const unsigned char *e, unsigned *out) {
    if (e - p < 4) return -1;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = p[i], d = c >= '0' && c <= '9'   ? c - '0'
                               : c >= 'a' && c <= 'f' ? c - 'a' + 10
                               : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                      : 16;
        if (d == 16) return -1;
        v = v << 4 | d;
    }
    *out = v;
    return 0;
}

/* A \u escape at p (after the backslash and 'u'): the code point, a surrogate pair
 * joined; U+0000 and lone surrogates are refused, as jansson refuses them. */
static int unicode_escape(scan *s, const unsigned char **pp, char **o) {
    const unsigned char *p = *pp;
    unsigned cp, lo;
    if (hex4(p, s->e, &cp) < 0 || cp == 0 || (cp >= 0xdc00 && cp <= 0xdfff)) return -1;
    p += 4;
    if (cp >= 0xd800 && cp <= 0xdbff) {
        if (s->e - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, s->e, &lo) < 0 ||
            lo < 0xdc00 || lo > 0xdfff)
            return -1;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        p += 6;
    }
    *pp = p;
    if (!o) return 0;
    char *w = *o;
    if (cp < 0x80) {
        *w++ = (char)cp;
    } else if (cp < 0x800) {
        *w++ = (char)(0xc0 | cp >> 6), *w++ = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        *w++ = (char)(0xe0 | cp >> 12), *w++ = (char)(0x80 | (cp >> 6 & 0x3f));
        *w++ = (char)(0x80 | (cp & 0x3f));
    } else {
        *w++ = (char)(0xf0 | cp >> 18), *w++ = (char)(0x80 | (cp >> 12 & 0x3f));
        *w++ = (char)(0x80 | (cp >> 6 & 0x3f)), *w++ = (char)(0x80 | (cp & 0x3f));
    }
    *o = w;
    return 0;
}

/* Bytes a string copies as they are: 0x20..0x7f but the quote (0x22) and the backslash
 * (0x5c), as a bitmap of the 128 ASCII codes. */
static const uint64_t PLAIN[2] = {0xfffffffb00000000ULL, 0xffffffffefffffffULL};
#define IS_PLAIN(c) ((c) < 0x80 && (PLAIN[(c) >> 6] >> ((c)&63) & 1))

/* The string at s->p (its opening quote), validated; unescaped into *o when o is given.
 * Each byte is looked at once: runs of plain ASCII are copied whole. */
static int string(scan *s, char **o) {
    const unsigned char *p = s->p + 1, *e = s->e;
    for (;;) {
        const unsigned char *q = p;
        while (q < e && IS_PLAIN(*q)) q++;
        if (o) memcpy(*o, p, (size_t)(q - p)), *o += q - p;
        if (q >= e || *q < 0x20) return -1;
        if (*q == '"') {
            s->p = q + 1;
            return 0;
        }
        if (*q == '\\') {
            if (++q >= e) return -1;
            static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
            const char *k = *q ? strchr(from, *q) : NULL;
            if (k) {
                if (o) *(*o)++ = to[k - from];
                p = q + 1;
            } else if (*q == 'u') {
                p = q + 1;
                if (unicode_escape(s, &p, o) < 0) return -1;
            } else {
                return -1;
            }
            continue;
        }
        int n = utf8_len(q, e);
        if (!n) return -1;
        if (o) memcpy(*o, q, (size_t)n), *o += n;
        p = q + n;
    }
}

/* A number: int64 (as jansson, no fraction or exponent), a plain decimal fraction, or -1
 * (also for an exponent or more than 18 digits: jansson's range checks decide those). */
static int number(scan *s, val *v) {
    const unsigned char *p = s->p, *e = s->e;
    int neg = p < e && *p == '-';
    p += neg;
    const unsigned char *digits = p;
    if (p < e && *p == '0') {
        p++;
        if (p < e && *p >= '0' && *p <= '9') return -1;
    } else {
        while (p < e && *p >= '0' && *p <= '9') p++;
    }
    if (p == digits || p - digits > 18) return -1;
    v->kind = V_INT;
    if (p < e && *p == '.') {
        const unsigned char *f = ++p;
        while (p < e && *p >= '0' && *p <= '9') p++;
        if (p == f || p - digits > 300) return -1;
        v->kind = V_REAL;
    }
    if (p < e && (*p == 'e' || *p == 'E')) return -1;
    int64_t x = 0;
    for (const unsigned char *d = digits; v->kind == V_INT && d < p; d++) x = x * 10 + (*d - '0');
    v->i = neg ? -x : x;
    s->p = p;
    return 0;
}

static int literal(scan *s, const char *word, int kind, val *v) {
    size_t n = strlen(word);
    if ((size_t)(s->e - s->p) < n || memcmp(s->p, word, n)) return -1;
    s->p += n;
    v->kind = (unsigned char)kind;
    return 0;
}

/* The key at s->p in an object of context ctx: its K_ id (K_NONE: not one we read). */
static int key(scan *s, int ctx, int *id) {
    const unsigned char *start = s->p + 1;
    if (string(s, NULL) < 0) return -1;
    *id = K_NONE;
    if (ctx == C_SKIP) return 0;
    size_t n = (size_t)(s->p - 1 - start);
    if (memchr(start, '\\', n)) return -1; /* an escaped name might be one of ours */
    for (size_t i = 0; i < sizeof KEYS / sizeof *KEYS; i++)
        if (KEYS[i].ctx == ctx && KEYS[i].len == n && !memcmp(KEYS[i].name, start, n)) {
            *id = KEYS[i].key;
            return 0;
        }
    return 0;
}

/* After a member or element: 1 after a comma, 0 after the closing bracket (the nesting
 * closed), -1 on anything else. */
static int next(scan *s, char close) {
    ws(s);
    if (s->p < s->e && *s->p == ',') return s->p++, 1;
    if (s->p >= s->e || *s->p != close) return -1;
    s->p++;
    s->depth--;
    return 0;
}

static int object(scan *s, int ctx) {
    if (++s->depth > MAX_DEPTH) return -1;
    s->p++;
    ws(s);
    if (s->p < s->e && *s->p == '}') return s->p++, s->depth--, 0;
    for (;;) {
        int id;
        ws(s);
        if (s->p >= s->e || *s->p != '"' || key(s, ctx, &id) < 0) return -1;
        if (id == K_ERROR || (id && s->v[id].kind)) return -1; /* jansson's: see the top */
        ws(s);
        if (s->p >= s->e || *s->p != ':') return -1;
        s->p++;
        val skip = {0};
        if (value(s, id, id ? &s->v[id] : &skip) < 0) return -1;
        int more = next(s, '}');
        if (more <= 0) return more;
    }
}

/* An array; its first element is read in context ctx when it is an object; with v->ids
 * set, its integers are kept there. */
static int array(scan *s, int ctx, val *v) {
    if (++s->depth > MAX_DEPTH) return -1;
    s->p++;
    ws(s);
    if (s->p < s->e && *s->p == ']') return s->p++, s->depth--, 0;
    for (int i = 0;; i++) {
        ws(s);
        val skip = {0};
        if (i == 0 && ctx && s->p < s->e && *s->p == '{') {
            if (object(s, ctx) < 0) return -1;
            v->first_obj = 1;
        } else if (value(s, K_NONE, &skip) < 0) {
            return -1;
        } else if (v->ids && skip.kind == V_INT) {
            v->ids[v->n++] = (int32_t)skip.i;
        }
        int more = next(s, ']');
        if (more <= 0) return more;
    }
}

/* The value at s->p (after blanks), read as key id asks (K_NONE: only validated). */
static int value(scan *s, int id, val *v) {
    ws(s);
    if (s->p >= s->e) return -1;
    switch (*s->p) {
    case '{': v->kind = V_OBJ; return object(s, CHILD[id] != C_CHOICE ? CHILD[id] : C_SKIP);
    case '[':
        v->kind = V_ARR;
        if (IDS[id]) v->ids = s->ids, v->n = 0;
        if (array(s, CHILD[id] == C_CHOICE ? C_CHOICE : C_SKIP, v) < 0) return -1;
        if (IDS[id]) s->ids += v->n;
        return 0;
    case '"':
        v->kind = V_STR;
        if (!KEEP[id]) return string(s, NULL);
        v->s = s->out;
        if (string(s, &s->out) < 0) return -1;
        v->n = (size_t)(s->out - v->s);
        *s->out++ = '\0';
        return 0;
    case 't': return literal(s, "true", V_TRUE, v);
    case 'f': return literal(s, "false", V_FALSE, v);
    case 'n': return literal(s, "null", V_NULL, v);
    default: return number(s, v);
    }
}

static int64_t int_of(const val *v) { return v->kind == V_INT ? v->i : 0; }

/* The ids of an array the chunk has (pointer and count), as decode_ids reads them. */
static void fill_ids(const scan *s, sg_llm_chunk *c) {
    const val *v = s->v, *p = &v[K_PROMPT_IDS], *g = &v[K_TOKEN_IDS];
    if (p->kind != V_ARR) p = &v[K_CHOICE_PROMPT_IDS];
    if (p->kind == V_ARR) c->prompt_ids = p->ids, c->n_prompt_ids = p->n;
    if (g->kind == V_ARR) c->gen_ids = g->ids, c->n_gen_ids = g->n;
}

/* What sg_llm_chunk_decode reads from the same fields. */
static void fill(const scan *s, sg_llm_chunk *c) {
    const val *v = s->v;
    fill_ids(s, c);
    if (v[K_USAGE].kind == V_OBJ) {
        c->has_usage = 1;
        c->features |= SG_LLM_F_USAGE;
        c->usage.prompt_tokens = int_of(&v[K_PROMPT]);
        c->usage.completion_tokens = int_of(&v[K_COMPLETION]);
        c->usage.reasoning_tokens = v[K_CTD].kind == V_OBJ && v[K_CTD_RT].kind == V_INT
                                        ? v[K_CTD_RT].i
                                        : int_of(&v[K_USAGE_RT]);
        if (v[K_PTD].kind == V_OBJ && v[K_CACHED].kind == V_INT) {
            c->usage.cached_tokens = v[K_CACHED].i;
            c->usage.cached_reported = 1;
        }
    } else if (v[K_USAGE].kind == V_NULL) {
        c->features |= SG_LLM_F_USAGE_NULL;
    }
    if (v[K_TIMINGS].kind) c->features |= SG_LLM_F_TIMINGS;
    if (v[K_FP].kind == V_STR) {
        const char *fp = v[K_FP].s;
        if (!strncmp(fp, "fp_", 3))
            c->features |= SG_LLM_F_FP_DEEPSEEK;
        else if (fp[0] == 'b' && fp[1] >= '0' && fp[1] <= '9')
            c->features |= SG_LLM_F_FP_BUILD;
    }
    if (!v[K_CHOICES].first_obj) return;
    if (v[K_STOP_REASON].kind) c->features |= SG_LLM_F_STOP_REASON;
    if (v[K_MATCHED_STOP].kind) c->features |= SG_LLM_F_MATCHED_STOP;
    if (v[K_FINISH].kind == V_STR) c->finish_reason = v[K_FINISH].s;
    const val *r = &v[K_REASONING], *rc = &v[K_REASONING_CONTENT], *t = &v[K_CONTENT];
    if (v[K_DELTA].kind != V_OBJ) {
        t = &v[K_TEXT]; /* completions */
    } else if (r->kind == V_STR) {
        c->reasoning = r->s, c->reasoning_len = r->n;
        c->features |= SG_LLM_F_REASONING;
    } else if (rc->kind == V_STR) {
        c->reasoning = rc->s, c->reasoning_len = rc->n;
        c->features |= SG_LLM_F_REASONING_CONTENT;
    }
    if (t->kind == V_STR) c->content = t->s, c->content_len = t->n;
}

int sg_llm_chunk_scan(const char *data, size_t len, sg_llm_chunk *c, sg_buf *scratch) {
    memset(c, 0, sizeof *c);
    sg_buf_clear(scratch);
    /* Unescaped strings are never longer than quoted (len + 1 with their NULs); ids: each
     * takes a digit and all but one a comma, so at most (len + 1) / 2 of them, 4 bytes each,
     * after the strings, aligned. */
    size_t at_ids = (len + 1 + 3) & ~(size_t)3;
    sg_buf_reserve(scratch, at_ids + 2 * (len + 1) + 4);
    scan s = {.p = (const unsigned char *)data, .e = (const unsigned char *)data + len};
    s.out = scratch->data;
    s.ids = (int32_t *)(void *)(scratch->data + at_ids);
    ws(&s);
    if (s.p >= s.e || *s.p != '{' || object(&s, C_ROOT) < 0) return 0;
    ws(&s);
    if (s.p != s.e) return 0; /* jansson: "end of file expected" */
    if (s.v[K_CHOICES].kind && s.v[K_CHOICES].kind != V_ARR) return 0; /* decode's error */
    fill(&s, c);
    return 1;
}
