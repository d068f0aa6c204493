/* run_ports.c — the real implementations behind the task's ports: the LLM (endpoints or
 * the embedded replay server) and the pool: local worker slots and the scheduler. */
#include "orchestrator/run.h"
#include "common/buf.h"

#include "common/curl_loop.h"
#include "common/log.h"
#include "llm/llm.h"
#include "profiler/profiler.h"
#include "replay/replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sg_run_llm {
    sg_replay_traces traces;
    sg_replay_server *replay; /* NULL with endpoints */
    sg_curl_loop *cl;
    sg_llm *llm;
    sg_port_llm pl;
    sg_llm_port port;
    char url_buf[128];
    const char *urls[16]; /* borrowed by llm: point into urls_copy or url_buf */
    char *urls_copy;
    sg_port_llm_suffix suffixes[2]; /* per task language: forks as token ids */
    sg_llm_tokenizing *tok[2];      /* their /tokenize requests */
    int suffixes_back;
    char ids_off[600]; /* why forks go as text */
};

/* The ids of what a fork appends to the reasoning, per task language, from the first
 * endpoint's /tokenize (vLLM, SGLang), asked on the loop: once both are back, forks go as
 * token ids where the reasoning stream returns its ids. A server without /tokenize gets
 * text forks (said once, at info level). */
static void suffix_done(void *arg, const int32_t *ids, size_t n, const char *err) {
    sg_port_llm_suffix *s = arg;
    sg_run_llm *l = s->owner;
    if (err) {
        if (!l->ids_off[0]) {
            snprintf(l->ids_off, sizeof l->ids_off, "no token ids for the fork's suffix: %s", err);
            sg_debug("llm", "forks go as text (%s)", l->ids_off);
        }
        l->pl.ask_ids = 0;
        return;
    }
    s->ids = sg_xmalloc((n ? n : 1) * sizeof *ids);
    memcpy(s->ids, ids, n * sizeof *ids);
    s->n = n;
    if (++l->suffixes_back == 2 && !l->ids_off[0]) {
        l->pl.suffixes = l->suffixes;
        l->pl.n_suffixes = 2;
    }
}

static void tokenize_suffixes(sg_run_llm *l, const sg_run_config *c, const sg_run_prompts *p,
                              const char *key) {
    static const char *const langs[] = {"cuda", "opencl"};
    if (c->fork_ids_off) {
        snprintf(l->ids_off, sizeof l->ids_off, "--fork-ids off");
        return;
    }
    if (!key || !*key) key = getenv("SPECGEN_API_KEY");
    if (!key || !*key) key = getenv("OPENAI_API_KEY");
    l->pl.ask_ids = 1;
    for (size_t i = 0; i < 2; i++) {
        sg_buf t = {0};
        const char *k = "lang";
        sg_buf_append_str(&t, p->tmpl.think_close);
        sg_buf_fill(&t, p->task.answer_prefix, &k, &langs[i], 1);
        sg_port_llm_suffix *s = &l->suffixes[i];
        s->owner = l;
        s->text = sg_buf_steal(&t);
        sg_err err;
        l->tok[i] = sg_llm_tokenize_start(l->cl, l->urls[0], c->model ? c->model : "", key, s->text,
                                          10000, suffix_done, s, &err);
        if (!l->tok[i]) suffix_done(s, NULL, 0, err.msg);
    }
}

static int start_replay(sg_run_llm *l, const sg_run_config *c, const sg_run_prompts *p,
                        sg_err *err) {
    char trace_dir[4200];
    snprintf(trace_dir, sizeof trace_dir, "%s/traces", p->dir);
    if (sg_replay_load(c->trace ? c->trace : trace_dir, &l->traces, err) < 0) return -1;
    sg_replay_config rc = {
        .host = "127.0.0.1", .port = 0, .speed = c->speed, .dialect = SG_DIALECT_VLLM};
    l->replay = sg_replay_start(&l->traces, &rc, err);
    if (!l->replay) return -1;
    snprintf(l->url_buf, sizeof l->url_buf, "http://127.0.0.1:%d", sg_replay_port(l->replay));
    l->urls[0] = l->url_buf;
    return 0;
}

static size_t split_urls(sg_run_llm *l, const char *urls) {
    size_t n = 0;
    l->urls_copy = sg_xstrdup(urls);
    for (char *save = NULL, *u = strtok_r(l->urls_copy, ",", &save); u && n < 16;
         u = strtok_r(NULL, ",", &save))
        l->urls[n++] = u;
    return n;
}

sg_run_llm *sg_run_llm_new(sg_loop *loop, const sg_run_config *c, const sg_run_prompts *p,
                           sg_err *err) {
    sg_run_llm *l = sg_xcalloc(1, sizeof *l);
    size_t nurls = 1;
    if (c->llm_urls)
        nurls = split_urls(l, c->llm_urls);
    else if (start_replay(l, c, p, err) < 0)
        goto fail;
    l->cl = sg_curl_loop_new(loop, err);
    if (!l->cl) goto fail;
    sg_loop_set_batch(loop, c->wake_batch_ns); /* the streams are what keeps the loop busy */
    char *key = NULL; /* --api-key-file's; else llm.c reads the environment */
    int others = 0;
    if (c->api_key_file &&
        !(key = sg_read_secret_line("--api-key-file", c->api_key_file, "key", &others, err)))
        goto fail;
    if (others) sg_warn("llm", "%s is readable by other users (chmod 600 it)", c->api_key_file);
    sg_llm_config lc = {.urls = l->urls,
                        .n_urls = nurls,
                        .max_per_endpoint = c->max_per_endpoint,
                        .api_key = key,
                        .first_token_timeout_ns = c->first_token_timeout_ns,
                        .first_token_option = "--first-token-timeout"};
    l->llm = sg_llm_new(l->cl, &lc, err);
    l->pl = (sg_port_llm){.llm = l->llm,
                          .fork_mode = c->fork_mode,
                          .model = c->model,
                          .reasoning_max_tokens = c->max_tokens,
                          .reasoning_temperature = c->temperature,
                          .reasoning_top_p = c->top_p,
                          .ids_off = l->ids_off};
    if (l->llm) tokenize_suffixes(l, c, p, key);
    if (key) memset(key, 0, strlen(key)); /* the client holds its own copy */
    free(key);
    if (!l->llm) goto fail;
    sg_port_llm_init(&l->pl, &l->port);
    return l;
fail:
    sg_run_llm_free(l);
    return NULL;
}

const sg_llm_port *sg_run_llm_port(const sg_run_llm *l) { return &l->port; }

/* A trace is meant for the task when its `match` text is in the task's name or baseline
 * (the replay server matches it against the prompt, which holds the baseline). */
static int trace_fits(const sg_replay_trace *tr, const sg_run_task *t) {
    return tr && tr->match &&
           (strstr(t->spec.name, tr->match) ||
            (t->baseline.data && strstr(t->baseline.data, tr->match)));
}

int sg_run_llm_announce(const sg_run_llm *l, const sg_run_config *c, const sg_run_task *t,
                        uint64_t *full_tokens, sg_err *err) {
    *full_tokens = 0;
    if (!l->replay) return 0;
    const sg_replay_trace *tr = sg_replay_select(&l->traces, c->model, t->spec.name);
    for (size_t i = 0; i < l->traces.n && !trace_fits(tr, t); i++)
        if (trace_fits(&l->traces.t[i], t)) tr = &l->traces.t[i];
    if (!c->trace && !trace_fits(tr, t)) {
        sg_buf names = {0};
        for (size_t i = 0; i < l->traces.n; i++) {
            const char *f = l->traces.t[i].file, *slash = strrchr(f, '/');
            sg_buf_printf(&names, "%s%s", i ? ", " : "", slash ? slash + 1 : f);
        }
        sg_errf(err,
                "no --llm given, and the embedded replay has no scripted trace for task %s (it has "
                "%s: the demo tasks'). Pass --llm URL --model NAME to optimize it with a "
                "model (any OpenAI-compatible server: vLLM, SGLang, llama.cpp), or --trace FILE "
                "to replay a trace of your own",
                t->spec.name, names.data ? names.data : "none");
        sg_buf_free(&names);
        return -1;
    }
    fprintf(stderr, "%s: no --llm given: serving the scripted trace %s at %s (speed %gx)\n",
            c->log_name, tr ? tr->file : "(none matches)", l->url_buf, c->speed);
    *full_tokens = tr ? tr->reasoning.n : 0;
    return 0;
}

void sg_run_llm_free(sg_run_llm *l) {
    if (!l) return;
    for (size_t i = 0; i < 2; i++) sg_llm_tokenize_free(l->tok[i]), l->tok[i] = NULL;
    sg_llm_free(l->llm);
    sg_curl_loop_free(l->cl);
    if (l->replay) sg_replay_stop(l->replay);
    sg_replay_traces_free(&l->traces);
    free(l->urls_copy);
    for (size_t i = 0; i < 2; i++) {
        sg_llm_tokenize_free(l->tok[i]);
        free(l->suffixes[i].text);
        free(l->suffixes[i].ids);
    }
    free(l);
}

/* The agents of c->pool_urls, their slots numbered after the local ones. */
static int remote_new(sg_loop *loop, const sg_run_config *c, sg_dev_lang lang, int first_slot,
                      int first_device, sg_run_pool *out, sg_err *err) {
    char *token = NULL;
    if (c->pool_token_file &&
        !(token = sg_pool_token_read("--pool-token-file", c->pool_token_file, err)))
        return -1;
    sg_pool_remote_config rc = {.urls = c->pool_urls,
                                .token = token,
                                .cacert = c->pool_cacert,
                                .log_name = c->log_name,
                                .lang = (int)lang,
                                .first_slot = first_slot,
                                .first_device = first_device,
                                .timeout_s = (double)c->pool_timeout_ns / SG_SEC};
    int rc_ = sg_pool_remote_new(loop, &rc, &out->remote, err);
    free(token);
    return rc_;
}

int sg_run_pool_new(sg_loop *loop, const sg_run_config *c, sg_dev_lang lang, sg_run_pool *out,
                    sg_err *err) {
    memset(out, 0, sizeof *out);
    sg_dev_opts po;
    sg_dev_opts_default(&po);
    po.device = lang;
    po.nvrtc_pch = c->nvrtc_pch;
    int n = c->ndevice_ids ? c->ndevice_ids : c->devices, nlocal = 0, nremote = 0;
    if (n == 0 && !c->no_local) { /* all of them; one when the backend cannot count */
        sg_err e2;
        n = sg_dev_count(&po, &e2);
        if (n < 0 && n != SG_BE_NODEV) /* the workers will say why when they cannot run */
            fprintf(stderr, "%s: %s; using one device\n", c->log_name, e2.msg);
        if (n < 1) n = 1;
    }
    if (!c->no_local && sg_pool_local_new(loop, &po, c->ndevice_ids ? c->device_ids : NULL, n,
                                          c->slots_per_device, &out->local, err) < 0)
        return -1;
    const sg_pool_slot_desc *ld = out->local ? sg_pool_local_slots(out->local, &nlocal) : NULL;
    if (c->pool_urls && remote_new(loop, c, lang, nlocal, c->no_local ? 0 : n, out, err) < 0) {
        sg_run_pool_free(out);
        return -1;
    }
    const sg_pool_slot_desc *rd = out->remote ? sg_pool_remote_slots(out->remote, &nremote) : NULL;
    sg_pool_slot_desc *all = sg_xcalloc((size_t)(nlocal + nremote), sizeof *all);
    if (nlocal) memcpy(all, ld, (size_t)nlocal * sizeof *all);
    if (nremote) memcpy(all + nlocal, rd, (size_t)nremote * sizeof *all);
    out->mux = (sg_pool_mux){.ops = {out->local ? &sg_pool_local_ops : &sg_pool_remote_ops,
                                     out->local && out->remote ? &sg_pool_remote_ops : NULL},
                             .impl = {out->local ? (void *)out->local : (void *)out->remote,
                                      out->local ? (void *)out->remote : NULL},
                             .n0 = out->local ? nlocal : nremote};
    int rc = sg_pool_new(loop, &c->pools, all, nlocal + nremote, &sg_pool_mux_ops, &out->mux,
                         &out->sched, err);
    free(all);
    if (rc < 0) {
        sg_run_pool_free(out);
        return -1;
    }
    if (out->local) sg_pool_local_bind(out->local, out->sched);
    if (out->remote) sg_pool_remote_bind(out->remote, out->sched);
    out->devices = c->no_local ? 0 : n;
    out->slots = nlocal + nremote;
    return 0;
}

void sg_run_pool_free(sg_run_pool *p) {
    sg_pool_free(p->sched); /* first: it kills what still runs, through the slots */
    sg_pool_remote_free(p->remote);
    sg_pool_local_free(p->local);
    memset(p, 0, sizeof *p);
}

sg_port_dev *sg_run_dev_port_new(sg_loop *loop, sg_run_pool *pool, int task_index,
                                 const sg_run_prompts *p, const sg_run_task *t, int race,
                                 double target, sg_dev_port *port, sg_err *err) {
    sg_port_dev_config dc = {
        .loop = loop, .pool = pool->sched, .task = task_index, .task_dir = t->dir, .fb = &p->fb};
    sg_prof_opts_default(&dc.prof);
    dc.prof.race.on = race;
    dc.target_speedup = target > 0                   ? target
                        : t->spec.target_speedup > 0 ? t->spec.target_speedup
                                                     : 2;
    return sg_port_dev_new(&dc, port, err);
}
