/* calib.c — one task's calibration (calib.h): the reasoning to its end, a fork at every
 * trigger point and every interval, each kernel validated and timed. */
#include "orchestrator/calib.h"

#include "common/buf.h"
#include "common/paths.h"
#include "common/wfile.h"
#include "specgen/extract.h"
#include "specgen/trigger.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cfork {
    sg_calib_task *t;
    sg_gen *gen;
    const char *kind; /* code_block | transition | interval | final */
    uint64_t at_tokens;
    size_t at_bytes;
    int64_t started, first;
    sg_buf text;
    json_t *row;
    struct cfork *next;
} cfork;

struct sg_calib_task {
    sg_calib_task_config c;
    sg_trigger *trigger;
    char *system, *user, *answer_prefix;
    sg_gen *reasoning;
    sg_buf rtext, answer, replay;
    uint64_t rtokens, next_interval, fork_tokens;
    int64_t started, first_token, last_chunk;
    int64_t last_reasoning; /* the last reasoning event */
    uint64_t first_tokens;  /* reasoning tokens at the first event (a chunk's worth) */
    int estimated, reasoning_done, pending, nforks, cancelled, codes, cues;
    cfork *forks;
    json_t *points;
    sg_gen_summary rsum;
};

static void maybe_done(sg_calib_task *t);

/* The iteration's messages, as the task's first iteration has them. */
static void build_messages(sg_calib_task *t) {
    const sg_task_spec *s = t->c.spec;
    char target[32];
    snprintf(target, sizeof target, "%.2f", t->c.tc->crit.target_speedup);
    sg_buf kernel = {0};
    sg_buf_append_str(&kernel, s->baseline ? s->baseline : "");
    if (kernel.len && kernel.data[kernel.len - 1] != '\n') sg_buf_append_str(&kernel, "\n");
    const char *keys[] = {"name",      "lang",        "description",  "target",
                          "iteration", "best_kernel", "best_speedup", "feedback"};
    const char *vals[] = {s->name, s->lang, s->description, target, "1", kernel.data, "1.00", ""};
    sg_buf sys = {0}, user = {0}, prefix = {0};
    sg_buf_fill(&sys, t->c.tc->prompts->system, keys, vals, 8);
    sg_buf_fill(&user, t->c.tc->prompts->user, keys, vals, 8);
    const char *k = "lang";
    sg_buf_fill(&prefix, t->c.tc->prompts->answer_prefix, &k, &s->lang, 1);
    t->system = sg_buf_steal(&sys);
    t->user = sg_buf_steal(&user);
    t->answer_prefix = sg_buf_steal(&prefix);
    sg_buf_free(&kernel);
}

static double ms(int64_t ns) { return (double)ns / 1e6; }

/* ---- a kernel's verdict ---- */
static void on_job(void *arg, const sg_job_outcome *o) {
    cfork *f = arg;
    json_t *r = f->row;
    if (!o->ok) {
        json_object_set_new(r, "status", json_string("error"));
        json_object_set_new(r, "message", json_string(o->message));
    } else {
        json_object_set_new(r, "verdict", json_string(o->verdict));
        json_object_set_new(r, "compiled", json_integer(o->compiled));
        json_object_set_new(r, "correct", json_integer(o->correct));
        json_object_set_new(r, "speedup", o->correct ? json_real(o->speedup) : json_null());
        json_object_set_new(r, "validate_ms", json_real(o->validate_ms));
        if (o->correct) json_object_set_new(r, "profile_ms", json_real(o->profile_ms));
        json_object_set_new(r, "message", json_string(o->message));
    }
    f->t->pending--;
    maybe_done(f->t);
}

/* The generation's text is over: its kernel goes to validation (or the row says none). */
static void submit(cfork *f) {
    sg_calib_task *t = f->t;
    sg_buf src = {0};
    sg_extract_info info;
    sg_err err;
    if (sg_extract_kernel(f->text.data ? f->text.data : "", f->text.len, t->c.spec->lang, &src,
                          &info, &err) < 0) {
        json_object_set_new(f->row, "status", json_string("no_kernel"));
        json_object_set_new(f->row, "message", json_string(err.msg));
        sg_buf_free(&src);
        return;
    }
    json_object_set_new(f->row, "status", json_string("kernel"));
    char name[64];
    snprintf(name, sizeof name, "candidate %d", (int)json_array_size(t->points) + t->nforks);
    sg_job_request req = {.kind = SG_JOB_CANDIDATE,
                          .source = src.data,
                          .len = src.len,
                          .name = name,
                          .iteration = 1,
                          .fork = strcmp(f->kind, "final") != 0};
    t->pending++;
    if (t->c.dev->submit(t->c.dev->impl, &req, on_job, f, &err) < 0) {
        t->pending--;
        json_object_set_new(f->row, "status", json_string("error"));
        json_object_set_new(f->row, "message", json_string(err.msg));
    }
    sg_buf_free(&src);
}

static cfork *fork_new(sg_calib_task *t, const char *kind) {
    cfork *f = sg_xcalloc(1, sizeof *f);
    f->t = t;
    f->kind = kind;
    f->at_tokens = t->rtokens;
    f->at_bytes = t->rtext.len;
    f->started = sg_loop_now(t->c.loop);
    f->row = json_pack("{s:s,s:I,s:I}", "kind", kind, "at_tokens", (json_int_t)f->at_tokens,
                       "at_bytes", (json_int_t)f->at_bytes);
    f->next = t->forks;
    t->forks = f;
    return f;
}

static void fork_content(void *arg, const char *text, size_t len) {
    cfork *f = arg;
    if (!f->first) f->first = sg_loop_now(f->t->c.loop);
    sg_buf_append(&f->text, text, len);
}

static void fork_done(void *arg, const sg_gen_summary *s) {
    cfork *f = arg;
    sg_calib_task *t = f->t;
    f->gen = NULL;
    int64_t now = sg_loop_now(t->c.loop);
    int64_t first = s->first_token_ns ? s->first_token_ns : f->first ? f->first - f->started : 0;
    t->fork_tokens += s->content_tokens;
    json_object_set_new(f->row, "fork_tokens", json_integer((json_int_t)s->content_tokens));
    json_object_set_new(f->row, "prompt_tokens", json_integer((json_int_t)s->prompt_tokens));
    json_object_set_new(f->row, "cached_tokens",
                        s->cached_reported ? json_integer((json_int_t)s->cached_tokens)
                                           : json_null());
    json_object_set_new(f->row, "first_token_ms", first ? json_real(ms(first)) : json_null());
    json_object_set_new(f->row, "gen_ms", json_real(ms(now - f->started)));
    if (s->error[0]) {
        json_object_set_new(f->row, "status", json_string("error"));
        json_object_set_new(f->row, "message", json_string(s->error));
    } else {
        submit(f);
    }
    t->pending--;
    maybe_done(t);
}

static void start_fork(sg_calib_task *t, const char *kind) {
    if (t->c.max_forks > 0 && t->nforks >= t->c.max_forks) return;
    t->nforks++;
    cfork *f = fork_new(t, kind);
    sg_buf_append_str(&f->text, t->answer_prefix);
    const sg_task_config *tc = t->c.tc;
    sg_fork_request req = {.tmpl = tc->tmpl,
                           .system = t->system,
                           .user = t->user,
                           .reasoning = t->rtext.data ? t->rtext.data : "",
                           .reasoning_len = t->rtext.len,
                           .answer_prefix = t->answer_prefix,
                           .stop = (const char *const *)tc->tmpl->stop,
                           .nstop = tc->tmpl->nstop,
                           .max_tokens = tc->prompts->fork_max_tokens,
                           .temperature = tc->prompts->fork_temperature,
                           .top_p = tc->prompts->fork_top_p};
    sg_gen_events ev = {NULL, fork_content, fork_done, f};
    sg_err err;
    t->pending++;
    if (!(f->gen = t->c.llm->start_fork(t->c.llm->impl, &req, &ev, &err))) {
        t->pending--;
        json_object_set_new(f->row, "status", json_string("error"));
        json_object_set_new(f->row, "message", json_string(err.msg));
    }
}

static void add_point(sg_calib_task *t, const sg_trigger_fire *fire) {
    int code = fire->rule == SG_RULE_CODE_BLOCK;
    t->codes += code;
    t->cues += !code;
    json_array_append_new(t->points,
                          json_pack("{s:s,s:I,s:I,s:s}", "kind", sg_rule_name(fire->rule),
                                    "at_tokens", (json_int_t)fire->cue_tokens, "at_bytes",
                                    (json_int_t)fire->offset, "cue", fire->cue));
    sg_trigger_fork_started(t->trigger, fire);
    sg_trigger_fork_finished(t->trigger, fire->rule, 0); /* no cap: never in flight */
    start_fork(t, sg_rule_name(fire->rule));
}

/* The replay trace: one reasoning line per chunk, timed from the one before. */
static void replay_line(sg_calib_task *t, const char *field, const char *text, size_t len,
                        uint64_t tokens_before, uint64_t tokens_after) {
    int64_t now = sg_loop_now(t->c.loop);
    uint64_t n = tokens_after > tokens_before ? tokens_after - tokens_before : 1;
    double per = (double)(now - t->last_chunk) / 1e6 / (double)n;
    t->last_chunk = now;
    sg_buf_printf(&t->replay, "{\"%s\": ", field);
    sg_buf_append_json_stringn(&t->replay, text, len);
    sg_buf_printf(&t->replay, ", \"ms_per_token\": %.3f}\n", per < 3600000 ? per : 3600000);
}

static void on_reasoning(void *arg, const char *text, size_t len, uint64_t tokens, int estimated) {
    sg_calib_task *t = arg;
    if (!t->first_token) t->first_token = sg_loop_now(t->c.loop), t->first_tokens = tokens;
    replay_line(t, "reasoning", text, len, t->rtokens, tokens);
    sg_buf_append(&t->rtext, text, len);
    t->rtokens = tokens;
    t->last_reasoning = sg_loop_now(t->c.loop);
    t->estimated |= estimated;
    sg_trigger_fire fire;
    if (sg_trigger_feed(t->trigger, text, len, tokens, &fire)) add_point(t, &fire);
    while (sg_trigger_poll(t->trigger, tokens, &fire)) add_point(t, &fire);
    if (t->c.interval_tokens && tokens >= t->next_interval) {
        start_fork(t, "interval");
        while (t->next_interval <= tokens) t->next_interval += t->c.interval_tokens;
    }
}

static void on_answer(void *arg, const char *text, size_t len) {
    sg_calib_task *t = arg;
    if (!t->first_token) t->first_token = sg_loop_now(t->c.loop);
    replay_line(t, "answer", text, len, 0, len / 4 + 1);
    sg_buf_append(&t->answer, text, len);
}

static void on_reasoning_done(void *arg, const sg_gen_summary *s) {
    sg_calib_task *t = arg;
    t->reasoning = NULL;
    t->rsum = *s;
    t->reasoning_done = 1;
    if (s->reasoning_tokens) t->rtokens = s->reasoning_tokens;
    if (!s->error[0]) { /* the final answer is a candidate too */
        cfork *f = fork_new(t, "final");
        sg_buf_append(&f->text, t->answer.data ? t->answer.data : "", t->answer.len);
        json_object_set_new(f->row, "fork_tokens", json_integer((json_int_t)s->content_tokens));
        json_object_set_new(f->row, "gen_ms", json_real(ms(sg_loop_now(t->c.loop) - t->started)));
        submit(f);
    }
    t->pending--;
    maybe_done(t);
}

static void on_baseline(void *arg, const sg_job_outcome *o) {
    sg_calib_task *t = arg;
    t->pending--;
    sg_err err;
    sg_gen_events ev = {on_reasoning, on_answer, on_reasoning_done, t};
    if (!o->ok || !o->correct) {
        snprintf(t->rsum.error, sizeof t->rsum.error, "the baseline failed: %s", o->message);
    } else if (!t->cancelled) {
        t->started = t->last_chunk = sg_loop_now(t->c.loop);
        if ((t->reasoning =
                 t->c.llm->start_reasoning(t->c.llm->impl, t->system, t->user, &ev, &err)))
            t->pending++;
        else
            snprintf(t->rsum.error, sizeof t->rsum.error, "%s", err.msg);
    }
    maybe_done(t);
}

sg_calib_task *sg_calib_task_start(const sg_calib_task_config *c, sg_err *err) {
    sg_calib_task *t = sg_xcalloc(1, sizeof *t);
    t->c = *c;
    sg_trigger_config tc = c->tc->trigger; /* its rules and cues, without spacing or caps */
    tc.interval_tokens = 0;
    tc.min_spacing_tokens = 0;
    tc.transition_min_new_tokens = 0;
    tc.max_in_flight = 1 << 30;
    tc.max_backlog = 0;
    tc.max_queue_per_slot = 0;
    tc.dup_skip_after = 0;
    tc.pending_stale_tokens = UINT64_MAX / 2;
    t->trigger = sg_trigger_new(&tc);
    t->points = json_array();
    t->next_interval = c->interval_tokens;
    build_messages(t);
    sg_buf_printf(&t->replay, "{\"trace\": 1, \"model\": ");
    sg_buf_append_json_string(&t->replay, "calibrate");
    sg_buf_printf(&t->replay, ", \"match\": ");
    sg_buf_append_json_string(&t->replay, c->spec->name);
    sg_buf_printf(&t->replay, ", \"first_token_ms\": 100}\n");
    sg_job_request req = {.kind = SG_JOB_BASELINE, .name = "baseline"};
    t->pending = 1;
    if (c->dev->submit(c->dev->impl, &req, on_baseline, t, err) < 0) {
        sg_calib_task_free(t);
        return NULL;
    }
    return t;
}

/* The first token's latency: the server's, or the first event's less the time its chunk
 * took at the stream's mean rate after it (ms; -1: unknown). */
static double first_token_ms(const sg_calib_task *t) {
    if (t->rsum.first_token_ns) return ms(t->rsum.first_token_ns);
    if (!t->first_token) return -1;
    double at = ms(t->first_token - t->started), span = ms(t->last_reasoning - t->first_token);
    if (t->rtokens > t->first_tokens && span > 0)
        at -= (double)t->first_tokens * span / (double)(t->rtokens - t->first_tokens);
    return at > 0 ? at : 0;
}

/* Every generation and job is over: the rows, with each position's fraction. */
static void maybe_done(sg_calib_task *t) {
    if (t->pending > 0 || t->cancelled || !t->c.done) return;
    sg_calib_out out = {0};
    double len = t->rtokens ? (double)t->rtokens : 1;
    out.forks = json_array();
    for (cfork *f = t->forks; f; f = f->next) {
        int final = !strcmp(f->kind, "final");
        json_object_set_new(f->row, "fraction",
                            json_real(final ? 1.0 : (double)f->at_tokens / len));
        if (final) json_object_set_new(f->row, "at_tokens", json_integer((json_int_t)t->rtokens));
        json_array_insert(out.forks, 0, f->row); /* in the order they started */
    }
    out.points = t->points;
    const sg_gen_summary *s = &t->rsum;
    out.trace =
        json_pack("{s:I,s:I,s:I,s:o,s:f,s:i,s:i,s:s,s:i}", "reasoning_tokens",
                  (json_int_t)t->rtokens, "answer_tokens", (json_int_t)s->content_tokens,
                  "prompt_tokens", (json_int_t)s->prompt_tokens, "first_token_ms",
                  first_token_ms(t) >= 0 ? json_real(first_token_ms(t)) : json_null(),
                  "reasoning_ms", ms(t->last_chunk - t->started), "code_blocks", t->codes, "cues",
                  t->cues, "finish", s->error[0] ? "error" : s->finish, "estimated", t->estimated);
    snprintf(out.error, sizeof out.error, "%s", s->error);
    out.replay = t->replay.data;
    void (*done)(void *, const sg_calib_out *) = t->c.done;
    t->c.done = NULL; /* once */
    done(t->c.arg, &out);
    json_decref(out.forks);
    json_decref(out.trace);
}

uint64_t sg_calib_task_tokens(const sg_calib_task *t) { return t->rtokens + t->fork_tokens; }

void sg_calib_task_cancel(sg_calib_task *t) {
    t->cancelled = 1;
    sg_gen_summary gs;
    if (t->reasoning) t->c.llm->abort(t->c.llm->impl, t->reasoning, &gs);
    t->reasoning = NULL;
    for (cfork *f = t->forks; f; f = f->next)
        if (f->gen) t->c.llm->abort(t->c.llm->impl, f->gen, &gs), f->gen = NULL;
}

void sg_calib_task_free(sg_calib_task *t) {
    if (!t) return;
    sg_calib_task_cancel(t);
    while (t->forks) {
        cfork *f = t->forks;
        t->forks = f->next;
        json_decref(f->row);
        sg_buf_free(&f->text);
        free(f);
    }
    json_decref(t->points);
    sg_trigger_free(t->trigger);
    sg_buf_free(&t->rtext);
    sg_buf_free(&t->answer);
    sg_buf_free(&t->replay);
    free(t->system);
    free(t->user);
    free(t->answer_prefix);
    free(t);
}

int sg_calib_write_trace(const char *dir, const char *name, const char *jsonl, sg_err *err) {
    if (sg_mkdir_p(dir, err) < 0) return -1;
    sg_buf path = {0};
    sg_buf_printf(&path, "%s/%s.jsonl", dir, name);
    FILE *f = NULL;
    int rc = sg_wfile_fopen(path.data, 0, &f, err) < 0 ? -1 : 0;
    if (rc == 0) {
        fputs(jsonl, f);
        if (fclose(f) != 0) rc = sg_errf(err, "cannot write %s: %s", path.data, strerror(errno));
    }
    sg_buf_free(&path);
    return rc;
}

int sg_calib_write_rows(sg_results *db, const char *table, json_t *rows, const char *key,
                        int64_t id, sg_err *err) {
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        json_object_set_new(row, key, json_integer((json_int_t)id));
        if (sg_results_calib_row(db, table, row, err) < 0) return -1;
    }
    return 0;
}

int sg_calib_service_event(sg_results *db, int64_t campaign, const json_t *ev, sg_err *err) {
    const char *name = json_string_value(json_object_get(ev, "ev"));
    const char *end = json_string_value(json_object_get(ev, "end"));
    if (!db || !name || strcmp(name, "job_end") || !end || strcmp(end, "done")) return 0;
    json_t *row =
        json_pack("{s:I,s:O,s:O}", "campaign", (json_int_t)campaign, "kind",
                  json_object_get(ev, "kind"), "service_s", json_object_get(ev, "service_s"));
    int rc = sg_results_calib_row(db, "calib_service", row, err);
    json_decref(row);
    return rc;
}
