/* specgen/: extraction, trigger rules, chat templates and fork prompts, criterion. */
#include "common/json.h"
#include "common/srcnorm.h"
#include "specgen/criterion.h"
#include "specgen/extract.h"
#include "specgen/fork.h"
#include "specgen/trigger.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char *prompts_dir(void) {
    const char *root = getenv("SPECGEN_ROOT");
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s/prompts", root ? root : ".");
    return buf;
}

/* ---- extraction ---- */

static int extract(const char *text, const char *lang, sg_buf *out, sg_extract_info *info) {
    sg_err err;
    return sg_extract_kernel(text, strlen(text), lang, out, info, &err);
}

static void test_extract_last_exact_block_wins(void **state) {
    sg_buf out = {0};
    sg_extract_info info;
    const char *t =
        "First try:\n```cuda\n__global__ void a(){}\n```\nBetter:\n```cuda\n//@launch b grid=N "
        "block=256\n"
        "__global__ void b(){}\n```\nAnd the host code:\n```cpp\nint main(){}\n```\nDone.";
    assert_int_equal(extract(t, "cuda", &out, &info), 0);
    assert_string_equal(out.data, "//@launch b grid=N block=256\n__global__ void b(){}\n");
    assert_false(info.unterminated);
    assert_false(info.generic_tag);
    sg_buf_free(&out);
}

static void test_extract_generic_and_untagged(void **state) {
    sg_buf out = {0};
    sg_extract_info info;
    assert_int_equal(extract("```c\n__kernel void k(){}\n```", "opencl", &out, &info), 0);
    assert_true(info.generic_tag);
    assert_int_equal(extract("text\n```\n__kernel void k(){}\n```\n", "opencl", &out, &info), 0);
    assert_string_equal(out.data, "__kernel void k(){}\n");
    sg_err err;
    const char *py = "```python\nprint(1)\n```\n```\nplain text\n```";
    assert_int_equal(sg_extract_kernel(py, strlen(py), "cuda", &out, &info, &err), -1);
    assert_non_null(strstr(err.msg, "python"));
    assert_int_equal(sg_extract_kernel("no code here", 12, "cuda", &out, &info, &err), -1);
    assert_non_null(strstr(err.msg, "no code block"));
    sg_buf_free(&out);
}

static void test_extract_unterminated_block(void **state) {
    sg_buf out = {0};
    sg_extract_info info;
    const char *cut = "```opencl\n__kernel void k(__global float *y) {\n  y[0] = 1;";
    assert_int_equal(extract(cut, "opencl", &out, &info), 0);
    assert_true(info.unterminated);
    assert_non_null(strstr(out.data, "y[0] = 1;"));
    /* A complete block beats a later unterminated one. */
    const char *both = "```opencl\n__kernel void good(){}\n```\n```opencl\n__kernel void cut(";
    assert_int_equal(extract(both, "opencl", &out, &info), 0);
    assert_non_null(strstr(out.data, "good"));
    /* An unterminated block that is not a kernel is not taken. */
    sg_err err;
    const char *empty = "```opencl\n  \n```\n";
    assert_int_equal(sg_extract_kernel(empty, strlen(empty), "opencl", &out, &info, &err), -1);
    const char *junk = "```opencl\nI think we should";
    assert_int_equal(sg_extract_kernel(junk, strlen(junk), "opencl", &out, &info, &err), -1);
    sg_buf_free(&out);
}

static void test_extract_fences_need_line_start_and_match(void **state) {
    sg_buf out = {0};
    sg_extract_info info;
    /* Inline ``` in prose is not a fence; a ~~~ block closes only with ~~~; a longer
     * closing fence is fine. */
    const char *t =
        "Use ```cuda``` blocks.\n~~~cuda\n__global__ void k(){ /* ``` */ }\n```\n~~~~\n";
    assert_int_equal(extract(t, "cuda", &out, &info), 0);
    assert_string_equal(out.data, "__global__ void k(){ /* ``` */ }\n```\n");
    sg_buf_free(&out);
}

static void test_duplicates_hash_equal(void **state) {
    const char *a =
        "__global__ void k(float *x) {\n  x[0] = 1; // set\n}\n//@launch k grid=1 block=1\n";
    const char *b = "/* v2 */ __global__   void k(float *x)\n{\n\tx[0] = 1;\n\n}\n//@launch k "
                    "grid=1 block=1   \n";
    const char *c = "__global__ void k(float *x) {\n  x[0] = 2;\n}\n//@launch k grid=1 block=1\n";
    const char *d = "__global__ void k(float *x) {\n  x[0] = 1;\n}\n//@launch k grid=2 block=1\n";
    sg_buf na = {0}, nb = {0};
    sg_srcnorm(a, strlen(a), &na);
    sg_srcnorm(b, strlen(b), &nb);
    assert_true(sg_srcnorm_hash(a, strlen(a)) == sg_srcnorm_hash(b, strlen(b)) ||
                (printf("%s---\n%s", na.data, nb.data), 0));
    assert_true(sg_srcnorm_hash(a, strlen(a)) != sg_srcnorm_hash(c, strlen(c)));
    assert_true(sg_srcnorm_hash(a, strlen(a)) !=
                sg_srcnorm_hash(d, strlen(d))); /* launch lines count */
    const char *s1 = "printf(\"a  b\");", *s2 = "printf(\"a b\");";
    assert_true(sg_srcnorm_hash(s1, strlen(s1)) !=
                sg_srcnorm_hash(s2, strlen(s2))); /* literals kept */
    sg_buf_free(&na);
    sg_buf_free(&nb);
}

/* ---- trigger ---- */

static sg_trigger_config quiet_config(void) {
    sg_trigger_config c;
    sg_trigger_config_default(&c);
    c.min_spacing_tokens = 10;
    c.transition_min_new_tokens = 50;
    c.interval_tokens = 0;
    return c;
}

/* Feed text one byte at a time (every split point), one token per 4 bytes. */
static int feed_bytes(sg_trigger *t, const char *s, size_t *bytes_total, sg_trigger_fire *fires,
                      int max) {
    int n = 0;
    for (const char *p = s; *p; p++) {
        (*bytes_total)++;
        sg_trigger_fire f;
        if (sg_trigger_feed(t, p, 1, *bytes_total / 4, &f)) {
            if (n < max) fires[n] = f;
            n++;
            sg_trigger_fork_started(t, &f);
        }
    }
    return n;
}

static void test_trigger_code_block_close(void **state) {
    sg_trigger_config c = quiet_config();
    sg_trigger *t = sg_trigger_new(&c);
    sg_trigger_fire f[8];
    size_t total = 0;
    const char *r = "Let me think about memory coalescing and the launch configuration first.\n"
                    "```cuda\n__global__ void k(){}\n```\nthat is a start";
    int n = feed_bytes(t, r, &total, f, 8);
    assert_int_equal(n, 1);
    assert_int_equal(f[0].rule, SG_RULE_CODE_BLOCK);
    /* It fired right at the newline after the closing fence. */
    assert_int_equal(f[0].offset, strstr(r, "```\nthat") - r + 4);
    sg_trigger_free(t);
}

static void test_trigger_transition_needs_boundary_and_new_tokens(void **state) {
    sg_trigger_config c = quiet_config();
    sg_trigger *t = sg_trigger_new(&c);
    sg_trigger_fire f[8];
    size_t total = 0;
    /* Too early (under 50 tokens = 200 bytes): no fork. */
    assert_int_equal(feed_bytes(t, "Start. Wait, no.", &total, f, 8), 0);
    char filler[400];
    memset(filler, 'x', sizeof filler - 1);
    filler[sizeof filler - 1] = '\0';
    assert_int_equal(feed_bytes(t, filler, &total, f, 8), 0);
    /* Mid-word "Wait" does not count; at a sentence start it does. */
    assert_int_equal(feed_bytes(t, " AwaitWait", &total, f, 8), 0);
    assert_int_equal(feed_bytes(t, ". Alternatively we could tile.", &total, f, 8), 1);
    assert_int_equal(f[0].rule, SG_RULE_TRANSITION);
    assert_string_equal(f[0].cue, "Alternatively");
    /* Right after a fork, the next cue is too close. */
    assert_int_equal(feed_bytes(t, "\nWait, tile by 32.", &total, f, 8), 0);
    sg_trigger_free(t);
}

static void test_trigger_interval_spacing_and_cap(void **state) {
    sg_trigger_config c = quiet_config();
    c.interval_tokens = 100;
    c.max_in_flight = 2;
    sg_trigger *t = sg_trigger_new(&c);
    sg_trigger_fire f;
    int fires = 0;
    for (uint64_t tok = 1; tok <= 1000; tok++) {
        if (sg_trigger_feed(t, "x", 1, tok, &f)) {
            fires++;
            assert_int_equal(f.rule, SG_RULE_INTERVAL);
            assert_int_equal(f.tokens % 100, 0);
            sg_trigger_fork_started(t, &f);
        }
    }
    assert_int_equal(fires, 2); /* the cap: two in flight, none finished */
    sg_trigger_fork_finished(t, SG_RULE_INTERVAL, 0);
    assert_int_equal(sg_trigger_in_flight(t), 1);
    assert_int_equal(sg_trigger_feed(t, "x", 1, 1001, &f), 1);
    sg_trigger_free(t);
}

/* The load limits: the task's backlog (forks in flight + candidates not yet judged) and
 * the pool's queue per slot each hold a fork back until they fall below their limit. */
static void test_trigger_load_limits(void **state) {
    sg_trigger_config c = quiet_config();
    c.interval_tokens = 100;
    c.max_in_flight = 8;
    c.max_backlog = 2;
    c.max_queue_per_slot = 1.5;
    sg_trigger *t = sg_trigger_new(&c);
    sg_trigger_fire f;
    sg_trigger_set_backlog(t, 1);
    assert_int_equal(sg_trigger_feed(t, "x", 1, 100, &f), 1); /* 0 in flight + 1 < 2 */
    sg_trigger_fork_started(t, &f);
    assert_int_equal(sg_trigger_feed(t, "x", 1, 250, &f), 0); /* 1 + 1: held */
    sg_trigger_set_backlog(t, 0);
    sg_trigger_set_pool_queue(t, 1.5);
    assert_int_equal(sg_trigger_feed(t, "x", 1, 260, &f), 0); /* the pool's queue: held */
    sg_trigger_set_pool_queue(t, 1.0);
    assert_int_equal(sg_trigger_feed(t, "x", 1, 270, &f), 1);
    sg_trigger_free(t);
    json_t *j = json_pack("{s:i,s:f}", "max_backlog", 3, "max_queue_per_slot", 0.5);
    sg_err err;
    assert_int_equal(sg_trigger_config_from_json(j, &c, "trigger.json", &err), 0);
    assert_int_equal(c.max_backlog, 3);
    assert_true(c.max_queue_per_slot == 0.5);
    json_decref(j);
    j = json_pack("{s:f}", "max_queue_per_slot", -1.0);
    assert_int_equal(sg_trigger_config_from_json(j, &c, "trigger.json", &err), -1);
    assert_string_equal(
        err.msg, "trigger.json: field \"max_queue_per_slot\": must be 0..1000 (0: off), got -1");
    json_decref(j);
}

/* max_in_flight_idle: 3 forks in flight while the pool's queue is empty, 1 while jobs wait. */
static void test_trigger_more_forks_while_idle(void **state) {
    sg_trigger_config c = quiet_config();
    c.interval_tokens = 100, c.max_in_flight = 1, c.max_in_flight_idle = 3;
    c.max_queue_per_slot = 2;
    sg_trigger *t = sg_trigger_new(&c);
    sg_trigger_fire f;
    for (uint64_t tok = 100; tok <= 300; tok += 100) { /* the queue is empty (0) */
        assert_int_equal(sg_trigger_feed(t, "x", 1, tok, &f), 1);
        sg_trigger_fork_started(t, &f);
    }
    assert_int_equal(sg_trigger_feed(t, "x", 1, 400, &f), 0); /* 3 in flight: the idle cap */
    sg_trigger_fork_finished(t, SG_RULE_INTERVAL, 0);
    sg_trigger_set_pool_queue(t, 0.5); /* a job waits: the cap is max_in_flight, 1 */
    assert_int_equal(sg_trigger_feed(t, "x", 1, 500, &f), 0);
    sg_trigger_set_pool_queue(t, 0);
    assert_int_equal(sg_trigger_feed(t, "x", 1, 510, &f), 1);
    sg_trigger_free(t);
    json_t *j = json_pack("{s:i}", "max_in_flight_idle", 2000);
    sg_err err;
    assert_int_equal(sg_trigger_config_from_json(j, &c, "trigger.json", &err), -1);
    assert_string_equal(
        err.msg, "trigger.json: field \"max_in_flight_idle\": must be 0..1024 (0: off), got 2000");
    json_decref(j);
}

static void test_trigger_skips_after_duplicates(void **state) {
    sg_trigger_config c = quiet_config();
    c.dup_skip_after = 2;
    sg_trigger *t = sg_trigger_new(&c);
    sg_trigger_fire f[8];
    size_t total = 0;
    const char *block = "some words to pass the spacing rule of ten tokens\n```\ncode\n```\n";
    for (int i = 0; i < 2; i++) {
        assert_int_equal(feed_bytes(t, block, &total, f, 8), 1);
        sg_trigger_fork_finished(t, SG_RULE_CODE_BLOCK, 1);
    }
    assert_int_equal(feed_bytes(t, block, &total, f, 8), 0); /* skipped once */
    assert_int_equal(feed_bytes(t, block, &total, f, 8), 1); /* then tried again */
    sg_trigger_free(t);
}

/* max_in_flight 1: a block that closes while a fork runs waits for the slot; a block
 * opened since, or more than pending_stale_tokens of reasoning since, makes it stale. */
static void test_trigger_pending_code_block(void **state) {
    sg_trigger_config c = quiet_config();
    c.max_in_flight = 1;
    c.pending_stale_tokens = 40;
    c.transition = 0;
    sg_trigger *t = sg_trigger_new(&c);
    sg_trigger_fire f[8], p;
    size_t total = 0;
    const char *block = "some words to pass the spacing rule of ten tokens\n```\ncode\n```\n";
    assert_int_equal(feed_bytes(t, block, &total, f, 8), 1);
    assert_int_equal(feed_bytes(t, block, &total, f, 8), 0); /* no slot: kept */
    uint64_t closed_at = total / 4;
    assert_int_equal(feed_bytes(t, "and a few more words", &total, f, 8), 0);
    assert_int_equal(sg_trigger_poll(t, total / 4, &p), 0); /* still no slot */
    sg_trigger_fork_finished(t, SG_RULE_CODE_BLOCK, 0);
    assert_int_equal(sg_trigger_poll(t, total / 4, &p), 1);
    assert_int_equal(p.rule, SG_RULE_CODE_BLOCK);
    assert_true(p.deferred);
    assert_int_equal(p.cue_tokens, closed_at);
    assert_int_equal(p.offset, total);
    sg_trigger_fork_started(t, &p);
    /* Stale: a new block opened after it. */
    assert_int_equal(feed_bytes(t, block, &total, f, 8), 0);
    assert_int_equal(feed_bytes(t, "next:\n```\nnew code", &total, f, 8), 0);
    sg_trigger_fork_aborted(t);
    assert_int_equal(sg_trigger_poll(t, total / 4, &p), 0);
    assert_int_equal(feed_bytes(t, "\n```\n", &total, f, 8), 1); /* that block's own close */
    /* Stale: 50 tokens of reasoning after it. */
    assert_int_equal(feed_bytes(t, block, &total, f, 8), 0);
    char filler[201];
    memset(filler, 'x', 200);
    filler[200] = '\0';
    assert_int_equal(feed_bytes(t, filler, &total, f, 8), 0);
    sg_trigger_fork_aborted(t);
    assert_int_equal(sg_trigger_poll(t, total / 4, &p), 0);
    sg_trigger_free(t);
}

static void test_trigger_config_errors(void **state) {
    sg_trigger_config c;
    sg_trigger_config_default(&c);
    sg_err err;
    json_t *j = json_pack("{s:i}", "max_in_flight", 0);
    assert_int_equal(sg_trigger_config_from_json(j, &c, "trigger.json", &err), -1);
    assert_string_equal(err.msg, "trigger.json: field \"max_in_flight\": must be 1..1024, got 0");
    json_decref(j);
    j = json_pack("{s:i}", "intervall_tokens", 5);
    assert_int_equal(sg_trigger_config_from_json(j, &c, "trigger.json", &err), -1);
    assert_string_equal(err.msg, "trigger.json: unknown field \"intervall_tokens\"");
    json_decref(j);
    char path[1100];
    snprintf(path, sizeof path, "%s/trigger.json", prompts_dir());
    assert_int_equal(sg_trigger_config_load(path, &c, &err), 0);
}

/* ---- templates and fork prompts ----
 *
 * The expected strings come from each model's published chat template, rendered with jinja2
 * by tests/fixtures/chat_templates/render.py into expected.json (the templates and their
 * sources are in that folder; tests/integration/templates.sh re-renders them and fails when
 * expected.json is stale). A case's specgen_suffix is text specgen appends that the template
 * does not render; render.py says why for each. */

static void render_check(const char *name, const sg_msg *m, size_t n, const char *reasoning,
                         const char *prefix, const char *want) {
    sg_chat_template t;
    sg_err err;
    assert_int_equal(sg_template_load(prompts_dir(), name, &t, &err), 0);
    sg_buf out = {0};
    if (reasoning)
        assert_int_equal(sg_fork_prompt(&t, m, n, reasoning, strlen(reasoning), prefix, &out, &err),
                         0);
    else
        assert_int_equal(sg_template_render(&t, m, n, 1, &out, &err), 0);
    assert_string_equal(out.data, want);
    sg_buf_free(&out);
    sg_template_free(&t);
}

static const char *case_str(json_t *c, const char *key) {
    json_t *v = json_object_get(c, key);
    assert_true(json_is_string(v));
    return json_string_value(v);
}

static void test_templates_match_published(void **state) {
    /* SG_TEMPLATE_CASES: cases rendered just now (tests/integration/templates.sh). */
    char path[1100];
    const char *root = getenv("SPECGEN_ROOT"), *cases_file = getenv("SG_TEMPLATE_CASES");
    if (cases_file)
        snprintf(path, sizeof path, "%s", cases_file);
    else
        snprintf(path, sizeof path, "%s/tests/fixtures/chat_templates/expected.json",
                 root ? root : ".");
    sg_err err;
    json_t *doc = sg_json_load_file(path, &err);
    if (!doc) fail_msg("%s", err.msg);
    json_t *cases = json_object_get(doc, "cases"), *c;
    size_t i, seen = 0;
    assert_true(json_array_size(cases) >= 7);
    json_array_foreach(cases, i, c) {
        sg_msg m[] = {{"system", case_str(c, "system")}, {"user", case_str(c, "user")}};
        const char *kind = case_str(c, "kind");
        sg_buf want = {0};
        sg_buf_append_str(&want, case_str(c, "expected"));
        int is_fork = !strcmp(kind, "fork");
        assert_true(is_fork || !strcmp(kind, "generation"));
        if (is_fork) sg_buf_append_str(&want, case_str(c, "specgen_suffix"));
        sg_chat_template t;
        assert_int_equal(sg_template_load(prompts_dir(), case_str(c, "template"), &t, &err), 0);
        sg_buf out = {0};
        const char *r = is_fork ? case_str(c, "reasoning") : NULL;
        int rc = is_fork ? sg_fork_prompt(&t, m, 2, r, strlen(r), case_str(c, "answer_prefix"),
                                          &out, &err)
                         : sg_template_render(&t, m, 2, 1, &out, &err);
        assert_int_equal(rc, 0);
        /* Name the case before the (long) strings of a mismatch. */
        if (strcmp(out.data, want.data)) print_message("case %s differs\n", case_str(c, "name"));
        assert_string_equal(out.data, want.data);
        sg_buf_free(&out);
        sg_template_free(&t);
        sg_buf_free(&want);
        seen++;
    }
    assert_int_equal(seen, json_array_size(cases));
    json_decref(doc);
}

static void test_template_generic(void **state) {
    /* generic is specgen's own plain-text format for models without a known template: no
     * model publishes it, so its expected string is typed here. */
    sg_msg hi[] = {{"user", "Hi"}};
    render_check("generic", hi, 1, "think", "ans",
                 "User: Hi\n\nAssistant: <think>\nthink\n</think>\n\nans");
}

/* The continue-mode message and the completions prompt end the same way: the newline a
 * server streams after <think> is dropped in both (it was doubled in the message). */
static void test_fork_assistant_matches_prompt_tail(void **state) {
    (void)state;
    sg_chat_template t;
    sg_err err;
    char dir[1024];
    const char *root = getenv("SPECGEN_ROOT");
    snprintf(dir, sizeof dir, "%s/prompts", root ? root : ".");
    assert_int_equal(sg_template_load(dir, "qwen3", &t, &err), 0);
    sg_msg m[] = {{"user", "Hi"}};
    sg_buf prompt = {0}, msg = {0}, gen = {0};
    const char *r = "\nthink hard";
    assert_int_equal(sg_fork_prompt(&t, m, 1, r, strlen(r), "Answer:", &prompt, &err), 0);
    assert_int_equal(sg_template_render(&t, m, 1, 1, &gen, &err), 0);
    assert_int_equal(sg_fork_assistant(&t, r, strlen(r), "Answer:", &msg), 0);
    assert_true(prompt.len == gen.len + msg.len);
    assert_memory_equal(prompt.data + gen.len, msg.data, msg.len);
    assert_null(strstr(msg.data, "<think>\n\n"));
    sg_buf_free(&prompt);
    sg_buf_free(&msg);
    sg_buf_free(&gen);
    sg_template_free(&t);
}

static void test_template_errors(void **state) {
    sg_chat_template t;
    sg_err err;
    assert_int_equal(sg_template_load(prompts_dir(), "llama9", &t, &err), -1);
    assert_non_null(strstr(err.msg, "chat template 'llama9'"));
    assert_int_equal(sg_template_load(prompts_dir(), "../etc", &t, &err), -1);
    assert_int_equal(sg_template_load(prompts_dir(), "qwen3", &t, &err), 0);
    sg_msg bad[] = {{"tool", "x"}};
    sg_buf out = {0};
    assert_int_equal(sg_template_render(&t, bad, 1, 1, &out, &err), -1);
    assert_non_null(strstr(err.msg, "role 'tool'"));
    sg_buf_free(&out);
    sg_template_free(&t);
}

/* ---- criterion ---- */

static void test_criterion(void **state) {
    sg_criterion c;
    sg_criterion_default(&c);
    c.target_speedup = 2.0;
    c.delta = 0.05;
    assert_int_equal(sg_criterion_on_candidate(&c, 1.0, 0, 9.0, 0.01),
                     SG_CRIT_CONTINUE); /* wrong */
    assert_int_equal(sg_criterion_on_candidate(&c, 1.0, 1, 2.1, 0.01), SG_CRIT_TARGET);
    assert_int_equal(sg_criterion_on_candidate(&c, 1.0, 1, 1.04, 0.01), SG_CRIT_CONTINUE);
    assert_int_equal(sg_criterion_on_candidate(&c, 1.0, 1, 1.06, 0.01), SG_CRIT_END_ITERATION);
    /* Inside a wide noise band, 6% is no change. */
    assert_int_equal(sg_criterion_on_candidate(&c, 1.0, 1, 1.06, 0.10), SG_CRIT_CONTINUE);
    assert_int_equal(sg_criterion_on_candidate(&c, 1.5, 1, 1.6, 0.01), SG_CRIT_END_ITERATION);
    c.early_stop = 0;
    assert_int_equal(sg_criterion_on_candidate(&c, 1.0, 1, 1.5, 0.01), SG_CRIT_CONTINUE);
    assert_int_equal(sg_criterion_on_candidate(&c, 1.0, 1, 2.5, 0.01), SG_CRIT_TARGET);
    c.budget_ns = 100;
    c.budget_tokens = 1000;
    c.max_iterations = 3;
    assert_int_equal(sg_criterion_on_budget(&c, 99, 999, 2), SG_CRIT_CONTINUE);
    assert_int_equal(sg_criterion_on_budget(&c, 100, 0, 0), SG_CRIT_BUDGET_TIME);
    assert_int_equal(sg_criterion_on_budget(&c, 0, 1000, 0), SG_CRIT_BUDGET_TOKENS);
    assert_int_equal(sg_criterion_on_budget(&c, 0, 0, 3), SG_CRIT_BUDGET_ITERATIONS);
    c.budget_ns = 0;
    c.budget_tokens = 0;
    c.max_iterations = 0;
    assert_int_equal(sg_criterion_on_budget(&c, 1LL << 60, 1ULL << 60, 1 << 30), SG_CRIT_CONTINUE);
    assert_string_equal(sg_crit_name(SG_CRIT_BUDGET_TOKENS), "budget_tokens");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_extract_last_exact_block_wins),
        cmocka_unit_test(test_extract_generic_and_untagged),
        cmocka_unit_test(test_extract_unterminated_block),
        cmocka_unit_test(test_extract_fences_need_line_start_and_match),
        cmocka_unit_test(test_duplicates_hash_equal),
        cmocka_unit_test(test_trigger_code_block_close),
        cmocka_unit_test(test_trigger_transition_needs_boundary_and_new_tokens),
        cmocka_unit_test(test_trigger_interval_spacing_and_cap),
        cmocka_unit_test(test_trigger_load_limits),
        cmocka_unit_test(test_trigger_more_forks_while_idle),
        cmocka_unit_test(test_trigger_skips_after_duplicates),
        cmocka_unit_test(test_trigger_pending_code_block),
        cmocka_unit_test(test_trigger_config_errors),
        cmocka_unit_test(test_templates_match_published),
        cmocka_unit_test(test_template_generic),
        cmocka_unit_test(test_template_errors),
        cmocka_unit_test(test_fork_assistant_matches_prompt_tail),
        cmocka_unit_test(test_criterion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
