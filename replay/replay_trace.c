/* Replay traces: loading JSON lines, cutting text into tokens, choosing a trace and a
 * fork answer for a request. */
#include "replay/replay.h"

#include "common/buf.h"
#include "common/json.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static uint32_t add_sat(uint32_t a, uint32_t b) { return a > UINT32_MAX - b ? UINT32_MAX : a + b; }

/* Append text as tokens: leading blanks + at most 6 bytes, never cutting UTF-8. The
 * seq's text is rebuilt at the end (sg_replay_seq_seal), so tokens hold offsets first. */
static void seq_add(sg_replay_seq *q, const char *s, size_t n, uint32_t dt_us,
                    uint32_t *first_extra) {
    size_t i = 0;
    while (i < n) {
        size_t st = i;
        i = sg_replay_token_end(s, n, i);
        if (q->n == q->cap) {
            q->cap = q->cap ? q->cap * 2 : 64;
            q->tok = sg_xrealloc(q->tok, q->cap * sizeof *q->tok);
        }
        q->tok[q->n].text = (const char *)(uintptr_t)q->len; /* offset, sealed later */
        q->tok[q->n].len = (uint32_t)(i - st);
        q->tok[q->n].dt_us = add_sat(dt_us, *first_extra);
        *first_extra = 0;
        q->n++;
        q->text = sg_xrealloc(q->text, q->len + (i - st) + 1);
        memcpy(q->text + q->len, s + st, i - st);
        q->len += i - st;
        q->text[q->len] = '\0';
    }
}

size_t sg_replay_token_end(const char *s, size_t n, size_t i) {
    while (i < n && strchr(" \t\r\n", s[i])) i++;
    size_t word = 0;
    while (i < n && word < 6 && !strchr(" \t\r\n", s[i])) i++, word++;
    while (i < n && ((unsigned char)s[i] & 0xC0) == 0x80) i++; /* finish the character */
    return i;
}

static void seq_seal(sg_replay_seq *q) {
    for (size_t i = 0; i < q->n; i++) q->tok[i].text = q->text + (uintptr_t)q->tok[i].text;
}

static void seq_free(sg_replay_seq *q) {
    free(q->tok);
    free(q->text);
}

static int fork_cmp(const void *a, const void *b) {
    const sg_replay_fork *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* A fork's offset from "after": the token that completes the first occurrence. */
static int resolve_after(const sg_replay_seq *r, const char *after, size_t *at) {
    const char *hit = strstr(r->text ? r->text : "", after);
    if (!hit) return -1;
    size_t end = (size_t)(hit - r->text) + strlen(after), acc = 0, i = 0;
    while (i < r->n && acc < end) acc += r->tok[i++].len;
    *at = i;
    return 0;
}

/* A time in ms; past an hour its microseconds would not fit the token delays' 32 bits. */
#define MAX_MS 3600000
static int time_ok(double ms) { return ms >= 0 && ms <= MAX_MS; }

typedef struct pending_fork {
    char *after;
    int64_t at;
    char *text;
    uint32_t dt_us;
    int line;
} pending_fork;

/* What load_file carries from one line of a trace to the next. */
typedef struct trace_reader {
    sg_replay_trace *t;
    double ms_tok, first_ms, fork_first_ms;
    uint32_t extra, extra_a;
    pending_fork *pf;
    size_t npf;
    int line, header;
} trace_reader;

/* The header line: the model, the match and the default times. */
static int read_header(trace_reader *r, json_t *o, const char *where, sg_err *err) {
    const char *model = NULL, *match = NULL;
    r->header = 1;
    if (sg_json_get_str(o, "model", 0, &model, where, err) < 0 ||
        sg_json_get_str(o, "match", 0, &match, where, err) < 0 ||
        sg_json_get_num(o, "ms_per_token", 0, &r->ms_tok, where, err) < 0 ||
        sg_json_get_num(o, "first_token_ms", 0, &r->first_ms, where, err) < 0 ||
        sg_json_get_num(o, "fork_first_token_ms", 0, &r->fork_first_ms, where, err) < 0)
        return -1;
    if (model) r->t->model = sg_xstrdup(model);
    if (match) r->t->match = sg_xstrdup(match);
    if (!time_ok(r->ms_tok) || !time_ok(r->first_ms) || !time_ok(r->fork_first_ms))
        return sg_errf(err, "%s: times must be from 0 to %d ms (an hour)", where, MAX_MS);
    return 0;
}

/* One line of the trace, parsed into o (at `where`): 0, or -1 with err. */
static int read_line(trace_reader *r, json_t *o, const char *where, sg_err *err) {
    sg_replay_trace *t = r->t;
    const char *s = NULL, *ans = NULL, *after = NULL;
    double ms = r->ms_tok, pause = 0;
    int64_t at = -1;
    if (!json_is_object(o)) return sg_errf(err, "%s: each line must be a JSON object", where);
    if (json_object_get(o, "trace") && r->header) /* its model would be lost */
        return sg_errf(err, "%s: a second header line (a trace file holds one trace)", where);
    if (json_object_get(o, "trace")) return read_header(r, o, where, err);
    if (sg_json_get_num(o, "ms_per_token", 0, &ms, where, err) < 0 ||
        sg_json_get_num(o, "pause_ms", 0, &pause, where, err) < 0)
        return -1;
    if (!time_ok(ms) || !time_ok(pause))
        return sg_errf(err, "%s: times must be from 0 to %d ms (an hour)", where, MAX_MS);
    if (json_object_get(o, "fork_after") || json_object_get(o, "fork_at")) {
        if (sg_json_get_str(o, "fork_after", 0, &after, where, err) < 0 ||
            sg_json_get_int(o, "fork_at", 0, &at, where, err) < 0 ||
            sg_json_get_str(o, "answer", 1, &ans, where, err) < 0)
            return -1;
        if (!after && at < 0) return sg_errf(err, "%s: fork_at must be >= 0", where);
        r->pf = sg_xrealloc(r->pf, (r->npf + 1) * sizeof *r->pf);
        r->pf[r->npf++] = (pending_fork){after ? sg_xstrdup(after) : NULL, at, sg_xstrdup(ans),
                                         (uint32_t)(ms * 1000), r->line};
    } else if (json_object_get(o, "reasoning")) {
        if (sg_json_get_str(o, "reasoning", 1, &s, where, err) < 0) return -1;
        r->extra = add_sat(r->extra, (uint32_t)(pause * 1000));
        seq_add(&t->reasoning, s, strlen(s), (uint32_t)(ms * 1000), &r->extra);
    } else if (json_object_get(o, "answer")) {
        if (sg_json_get_str(o, "answer", 1, &s, where, err) < 0) return -1;
        r->extra_a = add_sat(r->extra_a, (uint32_t)(pause * 1000));
        seq_add(&t->answer, s, strlen(s), (uint32_t)(ms * 1000), &r->extra_a);
    } else {
        return sg_errf(err,
                       "%s: a line needs one of \"trace\", \"reasoning\", \"answer\", "
                       "\"fork_after\" or \"fork_at\"",
                       where);
    }
    return 0;
}

/* The pending forks into t->forks, by their place in the reasoning (a fork_after text
 * that does not occur is an error when rc is still 0); frees them. Returns rc. */
static int place_forks(trace_reader *r, const char *path, int rc, sg_err *err) {
    sg_replay_trace *t = r->t;
    t->forks = sg_xcalloc(r->npf ? r->npf : 1, sizeof *t->forks);
    for (size_t i = 0; i < r->npf; i++) {
        pending_fork *pf = &r->pf[i];
        sg_replay_fork *f = &t->forks[t->n_forks];
        if (!rc && pf->after && resolve_after(&t->reasoning, pf->after, &f->at) < 0)
            rc = sg_errf(err, "%s:%d: fork_after text \"%.60s\" does not occur in the reasoning",
                         path, pf->line, pf->after);
        if (!pf->after) f->at = (size_t)pf->at;
        uint32_t none = 0;
        seq_add(&f->answer, pf->text, strlen(pf->text), pf->dt_us, &none);
        seq_seal(&f->answer);
        t->n_forks++;
        free(pf->after);
        free(pf->text);
    }
    free(r->pf);
    qsort(t->forks, t->n_forks, sizeof *t->forks, fork_cmp);
    return rc;
}

static int load_file(const char *path, sg_replay_trace *t, sg_err *err) {
    memset(t, 0, sizeof *t);
    t->file = sg_xstrdup(path);
    sg_buf b = {0};
    if (sg_buf_read_file_max(&b, path, SG_TRACE_MAX) < 0) {
        char why[sizeof err->msg];
        sg_buf_free(&b);
        return sg_errf(err, "%s", sg_read_error(why, sizeof why, path, SG_TRACE_MAX));
    }
    trace_reader r = {.t = t, .ms_tok = 10, .first_ms = 100, .fork_first_ms = 30};
    int rc = 0;
    char *save = NULL;
    for (char *l = strtok_r(b.data ? b.data : "", "\n", &save); l && !rc;
         l = strtok_r(NULL, "\n", &save)) {
        r.line++;
        while (*l == ' ' || *l == '\t' || *l == '\r') l++;
        if (!*l) continue;
        char where[1100];
        snprintf(where, sizeof where, "%s:%d", path, r.line);
        json_t *o = sg_json_parse(l, strlen(l), where, err);
        if (!o) {
            rc = -1;
            break;
        }
        rc = read_line(&r, o, where, err);
        json_decref(o);
    }
    sg_buf_free(&b);
    if (!rc && !r.header) rc = sg_errf(err, "%s: no header line ({\"trace\": 1, ...})", path);
    if (!rc && !t->answer.n) rc = sg_errf(err, "%s: no answer line", path);
    seq_seal(&t->reasoning);
    seq_seal(&t->answer);
    if (!rc) { /* else a refused header's times may lie out of range */
        t->first_token_us = (int64_t)(r.first_ms * 1000);
        t->fork_first_token_us = (int64_t)(r.fork_first_ms * 1000);
    }
    rc = place_forks(&r, path, rc, err);
    if (!t->model) { /* default model name: the file's stem */
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        t->model = sg_xstrdup(base);
        char *dot = strrchr(t->model, '.');
        if (dot) *dot = '\0';
    }
    return rc;
}

static int name_cmp(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int sg_replay_load(const char *path, sg_replay_traces *out, sg_err *err) {
    memset(out, 0, sizeof *out);
    struct stat st;
    if (stat(path, &st) < 0) return sg_errf(err, "trace '%s': %m", path);
    char **files = NULL;
    size_t nf = 0;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (!d) return sg_errf(err, "trace folder '%s': %m", path);
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t n = strlen(e->d_name);
            if (n < 7 || strcmp(e->d_name + n - 6, ".jsonl")) continue;
            files = sg_xrealloc(files, (nf + 1) * sizeof *files);
            sg_buf p = {0};
            sg_buf_printf(&p, "%s/%s", path, e->d_name);
            files[nf++] = sg_buf_steal(&p);
        }
        closedir(d);
        qsort(files, nf, sizeof *files, name_cmp);
        if (!nf) return sg_errf(err, "trace folder '%s' holds no *.jsonl file", path);
    } else {
        files = sg_xmalloc(sizeof *files);
        files[nf++] = sg_xstrdup(path);
    }
    out->t = sg_xcalloc(nf, sizeof *out->t);
    int rc = 0;
    for (size_t i = 0; i < nf; i++) {
        if (!rc) {
            out->n++;
            rc = load_file(files[i], &out->t[i], err);
        }
        free(files[i]);
    }
    free(files);
    if (rc) sg_replay_traces_free(out);
    return rc;
}

void sg_replay_traces_free(sg_replay_traces *ts) {
    for (size_t i = 0; i < ts->n; i++) {
        sg_replay_trace *t = &ts->t[i];
        free(t->file);
        free(t->model);
        free(t->match);
        seq_free(&t->reasoning);
        seq_free(&t->answer);
        for (size_t k = 0; k < t->n_forks; k++) seq_free(&t->forks[k].answer);
        free(t->forks);
    }
    free(ts->t);
    memset(ts, 0, sizeof *ts);
}

const sg_replay_trace *sg_replay_select(const sg_replay_traces *ts, const char *model,
                                        const char *prompt) {
    int any_model = 1;
    for (size_t i = 0; i < ts->n; i++)
        if (model && !strcmp(ts->t[i].model, model)) any_model = 0;
    const sg_replay_trace *fallback = NULL;
    for (size_t i = 0; i < ts->n; i++) {
        const sg_replay_trace *t = &ts->t[i];
        if (!any_model && strcmp(t->model, model)) continue;
        if (t->match && prompt && strstr(prompt, t->match)) return t;
        if (!fallback || (fallback->match && !t->match)) fallback = t;
    }
    return fallback;
}

size_t sg_replay_prefix_tokens(const sg_replay_trace *t, const char *text, size_t len) {
    const sg_replay_seq *r = &t->reasoning;
    size_t a = 0, b = 0;
    while (a < len && strchr(" \t\r\n", text[a])) a++;
    while (b < r->len && strchr(" \t\r\n", r->text[b])) b++;
    while (a < len && b < r->len && text[a] == r->text[b]) a++, b++;
    size_t acc = 0, n = 0; /* tokens wholly inside the common prefix */
    while (n < r->n && acc + r->tok[n].len <= b) acc += r->tok[n++].len;
    return n;
}

const sg_replay_fork *sg_replay_fork_for(const sg_replay_trace *t, size_t n) {
    const sg_replay_fork *best = NULL;
    for (size_t i = 0; i < t->n_forks && t->forks[i].at <= n; i++) best = &t->forks[i];
    return best;
}
