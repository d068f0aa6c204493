#include "specgen/trigger.h"

#include "common/buf.h"
#include "common/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const rule_names[] = {"none", "code_block", "transition", "interval"};

const char *sg_rule_name(sg_rule r) { return r < SG_RULE_COUNT ? rule_names[r] : "unknown"; }

void sg_trigger_config_default(sg_trigger_config *c) {
    static const char *const cues[] = {"Wait",          "Alternatively", "Let me write",
                                       "So the kernel", "Let me try",    "Putting it together",
                                       "Here's the",    "Final kernel",  "Let me rewrite",
                                       "Another idea",  "Hmm",           "Now,"};
    memset(c, 0, sizeof *c);
    c->code_block = 1;
    c->transition = 1;
    c->interval_tokens = 1500;
    c->min_spacing_tokens = 150;
    c->transition_min_new_tokens = 300;
    c->max_in_flight = 4;
    c->dup_skip_after = 2;
    c->pending_stale_tokens = 300;
    for (size_t i = 0; i < sizeof cues / sizeof cues[0]; i++)
        snprintf(c->cues[c->ncues++], sizeof c->cues[0], "%s", cues[i]);
}

int sg_trigger_config_from_json(const json_t *obj, sg_trigger_config *c, const char *where,
                                sg_err *err) {
    static const char *const known[] = {"code_block",
                                        "transition",
                                        "interval_tokens",
                                        "min_spacing_tokens",
                                        "transition_min_new_tokens",
                                        "max_in_flight",
                                        "max_backlog",
                                        "max_in_flight_idle",
                                        "max_queue_per_slot",
                                        "dup_skip_after",
                                        "pending_stale_tokens",
                                        "cues",
                                        "comment",
                                        NULL};
    if (!json_is_object(obj)) return sg_errf(err, "%s: expected a JSON object", where);
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        int ok = 0;
        for (const char *const *k = known; *k; k++) ok |= strcmp(key, *k) == 0;
        if (!ok) return sg_errf(err, "%s: unknown field \"%s\"", where, key);
    }
    int64_t n;
    if (sg_json_get_bool(obj, "code_block", 0, &c->code_block, where, err) < 0) return -1;
    if (sg_json_get_bool(obj, "transition", 0, &c->transition, where, err) < 0) return -1;
    struct {
        const char *k;
        uint64_t *out;
    } u64s[] = {
        {"interval_tokens", &c->interval_tokens},
        {"min_spacing_tokens", &c->min_spacing_tokens},
        {"transition_min_new_tokens", &c->transition_min_new_tokens},
        {"pending_stale_tokens", &c->pending_stale_tokens},
    };
    for (size_t i = 0; i < sizeof u64s / sizeof u64s[0]; i++) {
        n = -1;
        if (sg_json_get_int(obj, u64s[i].k, 0, &n, where, err) < 0) return -1;
        if (json_object_get(obj, u64s[i].k)) {
            if (n < 0)
                return sg_errf(err, "%s: field \"%s\": must be >= 0, got %lld", where, u64s[i].k,
                               (long long)n);
            *u64s[i].out = (uint64_t)n;
        }
    }
    n = c->max_in_flight;
    if (sg_json_get_int(obj, "max_in_flight", 0, &n, where, err) < 0) return -1;
    if (n < 1 || n > 1024)
        return sg_errf(err, "%s: field \"max_in_flight\": must be 1..1024, got %lld", where,
                       (long long)n);
    c->max_in_flight = (int)n;
    n = c->max_backlog;
    if (sg_json_get_int(obj, "max_backlog", 0, &n, where, err) < 0) return -1;
    if (n < 0 || n > 1024)
        return sg_errf(err, "%s: field \"max_backlog\": must be 0..1024 (0: off), got %lld", where,
                       (long long)n);
    c->max_backlog = (int)n;
    n = c->max_in_flight_idle;
    if (sg_json_get_int(obj, "max_in_flight_idle", 0, &n, where, err) < 0) return -1;
    if (n < 0 || n > 1024)
        return sg_errf(err, "%s: field \"max_in_flight_idle\": must be 0..1024 (0: off), got %lld",
                       where, (long long)n);
    c->max_in_flight_idle = (int)n;
    double q = c->max_queue_per_slot;
    if (sg_json_get_num(obj, "max_queue_per_slot", 0, &q, where, err) < 0) return -1;
    if (!(q >= 0) || q > 1000)
        return sg_errf(err, "%s: field \"max_queue_per_slot\": must be 0..1000 (0: off), got %g",
                       where, q);
    c->max_queue_per_slot = q;
    n = c->dup_skip_after;
    if (sg_json_get_int(obj, "dup_skip_after", 0, &n, where, err) < 0) return -1;
    if (n < 0 || n > 100)
        return sg_errf(err, "%s: field \"dup_skip_after\": must be 0..100, got %lld", where,
                       (long long)n);
    c->dup_skip_after = (int)n;
    json_t *cues = NULL;
    if (sg_json_get_arr(obj, "cues", 0, &cues, where, err) < 0) return -1;
    if (cues) {
        if (json_array_size(cues) > SG_TRIGGER_MAX_CUES)
            return sg_errf(err, "%s: field \"cues\": at most %d phrases", where,
                           SG_TRIGGER_MAX_CUES);
        c->ncues = 0;
        size_t i;
        json_t *s;
        json_array_foreach(cues, i, s) {
            const char *p = json_string_value(s);
            if (!p || !*p || strlen(p) >= sizeof c->cues[0])
                return sg_errf(err,
                               "%s: field \"cues\"[%zu]: expected a phrase of 1..47 characters",
                               where, i);
            snprintf(c->cues[c->ncues++], sizeof c->cues[0], "%s", p);
        }
    }
    return 0;
}

int sg_trigger_config_load(const char *path, sg_trigger_config *c, sg_err *err) {
    json_t *j = sg_json_load_file(path, err);
    if (!j) return -1;
    int rc = sg_trigger_config_from_json(j, c, path, err);
    json_decref(j);
    return rc;
}

/* The detector keeps only what it needs: a window of recent text for phrase matching,
 * and the fence state of the current line. */
#define WINDOW 256

struct sg_trigger {
    sg_trigger_config cfg;
    char window[WINDOW]; /* last bytes of reasoning, NUL-terminated */
    size_t wlen;
    size_t total;          /* reasoning bytes seen */
    size_t scanned;        /* bytes of reasoning already examined for cues */
    int in_code;           /* inside a fenced block */
    size_t line_start_pos; /* absolute offset of the current line's start */
    int line_ticks;        /* leading backticks on the current line so far, -1: not a fence */
    uint64_t last_fork_tokens;
    int forked_yet;
    int in_flight;
    int backlog;             /* the task's candidates not yet judged (caller's count) */
    double pool_queue;       /* jobs waiting per slot, all tasks (caller's count) */
    int capped, fork_cap;    /* admission's cap on forks in flight (caller's), when capped */
    int pending_code_close;  /* a block closed and not yet turned into a fork */
    int pending_fresh;       /* it closed in the current delta: its position is not set yet */
    uint64_t pending_tokens; /* reasoning tokens when it closed */
    int dup_run[SG_RULE_COUNT];
    /* derived from cfg.cues for find_cue: their lengths, the longest, which bytes start
     * one, and whether one is empty (then find_cue_each does the search) */
    size_t cue_len[SG_TRIGGER_MAX_CUES];
    size_t max_cue_len;
    unsigned char cue_first[256];
    int cue_empty;
};

static void prepare_cues(sg_trigger *t) {
    for (size_t i = 0; i < t->cfg.ncues; i++) {
        size_t cl = strlen(t->cfg.cues[i]);
        t->cue_len[i] = cl;
        if (cl > t->max_cue_len) t->max_cue_len = cl;
        if (cl == 0) t->cue_empty = 1;
        t->cue_first[(unsigned char)t->cfg.cues[i][0]] = 1;
    }
}

sg_trigger *sg_trigger_new(const sg_trigger_config *cfg) {
    sg_trigger *t = sg_xcalloc(1, sizeof *t);
    t->cfg = *cfg;
    prepare_cues(t);
    return t;
}

void sg_trigger_free(sg_trigger *t) { free(t); }

void sg_trigger_reset(sg_trigger *t) {
    int dup[SG_RULE_COUNT];
    memcpy(dup, t->dup_run, sizeof dup);
    sg_trigger_config cfg = t->cfg;
    memset(t, 0, sizeof *t);
    t->cfg = cfg;
    memcpy(t->dup_run, dup, sizeof dup);
    prepare_cues(t);
}

int sg_trigger_in_flight(const sg_trigger *t) { return t->in_flight; }

void sg_trigger_set_pool_queue(sg_trigger *t, double queued_per_slot) {
    t->pool_queue = queued_per_slot > 0 ? queued_per_slot : 0;
}

void sg_trigger_set_fork_cap(sg_trigger *t, int n) {
    t->capped = n >= 0;
    t->fork_cap = n;
}

void sg_trigger_set_backlog(sg_trigger *t, int candidates) {
    t->backlog = candidates > 0 ? candidates : 0;
}

/* Track fences line by line: a line that starts with ``` toggles in_code. */
static void track_fences(sg_trigger *t, char c) {
    if (c == '\n') {
        if (t->line_ticks >= 3) {
            t->in_code = !t->in_code;
            /* A close is the latest cue; an open makes a pending one stale. */
            t->pending_code_close = !t->in_code;
            t->pending_fresh = !t->in_code;
        }
        t->line_ticks = 0;
        return;
    }
    if (t->line_ticks < 0) return;
    if (c == '`')
        t->line_ticks++;
    else if (t->line_ticks == 0 && (c == ' ' || c == '\t'))
        return; /* indentation */
    else if (t->line_ticks >= 3)
        t->line_ticks = 99; /* info string after the fence */
    else
        t->line_ticks = -1;
}

static void window_append(sg_trigger *t, const char *s, size_t n) {
    if (n >= WINDOW - 1) {
        memcpy(t->window, s + n - (WINDOW - 1), WINDOW - 1);
        t->wlen = WINDOW - 1;
    } else {
        size_t keep = t->wlen + n > WINDOW - 1 ? WINDOW - 1 - n : t->wlen;
        memmove(t->window, t->window + t->wlen - keep, keep);
        memcpy(t->window + keep, s, n);
        t->wlen = keep + n;
    }
    t->window[t->wlen] = '\0';
}

/* A cue counts at the start of a line or of a sentence (after ". ", "? ", "! "). */
static int at_boundary(const char *w, size_t pos) {
    if (pos == 0) return 1;
    char p = w[pos - 1];
    if (p == '\n') return 1;
    if ((p == ' ' || p == '\t') && pos >= 2) {
        char q = w[pos - 2];
        return q == '.' || q == '?' || q == '!' || q == '\n' || q == ':';
    }
    return 0;
}

/* find_cue one cue at a time, with strstr: for windows holding a NUL byte (strstr stops
 * there) and empty cues, where the one-pass scan below would not find the same cue. */
static const char *find_cue_each(sg_trigger *t, size_t fresh_from) {
    for (size_t i = 0; i < t->cfg.ncues; i++) {
        const char *cue = t->cfg.cues[i];
        size_t cl = strlen(cue);
        /* one that starts before here ends in the part scanned before */
        size_t from = fresh_from >= cl ? fresh_from - cl + 1 : 0;
        for (const char *p = t->window + from; (p = strstr(p, cue)); p++) {
            size_t pos = (size_t)(p - t->window);
            if (pos + cl <= fresh_from) continue; /* seen before */
            if (at_boundary(t->window, pos)) return cue;
        }
    }
    return NULL;
}

/* The cue a boundary at `pos` starts, if one that comes before `best` in the configured
 * order ends in the unscanned part (from fresh_from on): its index, else best. */
static size_t cue_at(const sg_trigger *t, size_t pos, size_t fresh_from, size_t best) {
    if (pos >= t->wlen || !t->cue_first[(unsigned char)t->window[pos]]) return best;
    for (size_t i = 0; i < best; i++) {
        size_t cl = t->cue_len[i];
        if (pos + cl > fresh_from && pos + cl <= t->wlen &&
            !memcmp(t->window + pos, t->cfg.cues[i], cl))
            return i;
    }
    return best;
}

/* Find a cue that ends in the unscanned part of the window: the first in the configured
 * order that does, as find_cue_each would, in one pass over the boundaries at_boundary
 * accepts: strcspn finds the bytes that make one ('\n', and ".?!:" or '\n' before a space),
 * and stops at a NUL inside the window, where strstr would stop (then find_cue_each). */
static const char *find_cue(sg_trigger *t, size_t new_bytes) {
    size_t fresh_from = t->wlen > new_bytes ? t->wlen - new_bytes : 0;
    size_t maxcl = t->max_cue_len;
    size_t from = fresh_from >= maxcl ? fresh_from - maxcl + 1 : 0;
    const char *w = t->window;
    if (t->cue_empty) return find_cue_each(t, fresh_from);
    size_t best = from == 0 ? cue_at(t, 0, fresh_from, t->cfg.ncues) : t->cfg.ncues;
    for (size_t k = from >= 2 ? from - 2 : 0; best > 0; k++) {
        k += strcspn(w + k, ".?!:\n");
        if (k >= t->wlen) break;
        if (!w[k]) return find_cue_each(t, fresh_from);
        if (w[k] == '\n' && k + 1 >= from) best = cue_at(t, k + 1, fresh_from, best);
        if (k + 2 >= from && k + 1 < t->wlen && (w[k + 1] == ' ' || w[k + 1] == '\t'))
            best = cue_at(t, k + 2, fresh_from, best);
    }
    return best < t->cfg.ncues ? t->cfg.cues[best] : NULL;
}

static int skip_for_duplicates(sg_trigger *t, sg_rule r) {
    if (t->cfg.dup_skip_after > 0 && t->dup_run[r] >= t->cfg.dup_skip_after) {
        t->dup_run[r] = 0; /* skip one cue, then try this rule again */
        return 1;
    }
    return 0;
}

/* Room for a fork now: below the caps and far enough from the last one. */
static int have_room(const sg_trigger *t, uint64_t since) {
    if (t->cfg.max_backlog > 0 && t->in_flight + t->backlog >= t->cfg.max_backlog) return 0;
    if (t->cfg.max_queue_per_slot > 0 && t->pool_queue >= t->cfg.max_queue_per_slot) return 0;
    if (t->capped && t->in_flight >= t->fork_cap) return 0;
    /* max_in_flight_idle: another cap while no job waits for a slot (the pool's queue, as
     * max_queue_per_slot reads it, is empty) */
    int cap = t->cfg.max_in_flight_idle > 0 && t->cfg.max_queue_per_slot > 0 && t->pool_queue <= 0
                  ? t->cfg.max_in_flight_idle
                  : t->cfg.max_in_flight;
    return t->in_flight < cap && since >= t->cfg.min_spacing_tokens;
}

/* The pending code-block cue: 1 to fork on it now; it stays pending while there is no
 * room, and is dropped when stale or skipped for duplicates. */
static int take_pending(sg_trigger *t, uint64_t tokens, int room) {
    if (!t->cfg.code_block || !t->pending_code_close) return 0;
    if (tokens > t->pending_tokens && tokens - t->pending_tokens > t->cfg.pending_stale_tokens) {
        t->pending_code_close = 0;
        return 0;
    }
    if (!room) return 0;
    t->pending_code_close = 0;
    return !skip_for_duplicates(t, SG_RULE_CODE_BLOCK);
}

static void fill_fire(const sg_trigger *t, sg_rule rule, uint64_t tokens, sg_trigger_fire *fire) {
    memset(fire, 0, sizeof *fire);
    fire->rule = rule;
    fire->tokens = tokens;
    fire->cue_tokens = rule == SG_RULE_CODE_BLOCK ? t->pending_tokens : tokens;
    fire->deferred = rule == SG_RULE_CODE_BLOCK && t->pending_tokens != tokens;
    fire->offset = t->total;
}

int sg_trigger_feed(sg_trigger *t, const char *delta, size_t len, uint64_t tokens,
                    sg_trigger_fire *fire) {
    for (size_t i = 0; i < len; i++) {
        if (t->line_ticks < 0) { /* the rest of this line cannot be a fence: skip to its end */
            const char *nl = memchr(delta + i, '\n', len - i);
            if (!nl) break;
            i = (size_t)(nl - delta);
        }
        track_fences(t, delta[i]);
    }
    if (t->pending_fresh) {
        t->pending_fresh = 0;
        t->pending_tokens = tokens;
    }
    window_append(t, delta, len);
    t->total += len;
    const char *cue = t->cfg.transition ? find_cue(t, len) : NULL;

    uint64_t since = t->forked_yet ? tokens - t->last_fork_tokens : tokens;
    int room = have_room(t, since);
    sg_rule rule = SG_RULE_NONE;
    if (take_pending(t, tokens, room)) rule = SG_RULE_CODE_BLOCK;
    if (!rule && cue && room && since >= t->cfg.transition_min_new_tokens &&
        !skip_for_duplicates(t, SG_RULE_TRANSITION))
        rule = SG_RULE_TRANSITION;
    if (!rule && t->cfg.interval_tokens && room && since >= t->cfg.interval_tokens)
        rule = SG_RULE_INTERVAL; /* the fallback is never skipped: it bounds the gap */
    if (!rule) return 0;
    fill_fire(t, rule, tokens, fire);
    if (rule == SG_RULE_TRANSITION) snprintf(fire->cue, sizeof fire->cue, "%s", cue);
    return 1;
}

int sg_trigger_poll(sg_trigger *t, uint64_t tokens, sg_trigger_fire *fire) {
    uint64_t since = t->forked_yet ? tokens - t->last_fork_tokens : tokens;
    if (!take_pending(t, tokens, have_room(t, since))) return 0;
    fill_fire(t, SG_RULE_CODE_BLOCK, tokens, fire);
    return 1;
}

void sg_trigger_fork_started(sg_trigger *t, const sg_trigger_fire *fire) {
    t->in_flight++;
    t->last_fork_tokens = fire->tokens;
    t->forked_yet = 1;
}

void sg_trigger_fork_aborted(sg_trigger *t) {
    if (t->in_flight > 0) t->in_flight--;
}

void sg_trigger_fork_finished(sg_trigger *t, sg_rule rule, int duplicate) {
    if (t->in_flight > 0) t->in_flight--;
    if (rule < SG_RULE_COUNT) t->dup_run[rule] = duplicate ? t->dup_run[rule] + 1 : 0;
}
