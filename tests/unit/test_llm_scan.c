/* The one-pass chunk scanner (sg_llm_chunk_scan) against jansson + sg_llm_chunk_decode:
 * wherever the scanner answers, both give the same deltas, finish, usage and marks. On
 * every event of every SSE fixture (and there the scanner must answer, error chunks
 * aside), on corner cases, and on inputs fuzzed from those (byte flips, insertions,
 * deletions, splices; a fixed seed, so a failure repeats). */
#include "common/buf.h"
#include "llm/llm_chunk.h"
#include "llm/sse.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static sg_buf scratch;  /* the scanner's, as a stream keeps one */
static sg_buf jscratch; /* jansson's decode's (its ids) */

/* Compare on data[0..len): 1 when the scanner answered, 0 when it declined. */
static int agree(const char *data, size_t len) {
    sg_llm_chunk a, b;
    int scanned = sg_llm_chunk_scan(data, len, &a, &scratch);
    json_t *root = json_loadb(data, len, 0, NULL);
    int decoded = root && sg_llm_chunk_decode(root, &b, &jscratch, NULL) == 0;
    if (scanned) {
        const char *diff = decoded ? sg_llm_chunk_differs(&a, &b) : "jansson refused it";
        if (diff) print_message("scanner and jansson differ (%s) on: %.*s\n", diff, (int)len, data);
        assert_null(diff);
    }
    json_decref(root);
    return scanned;
}

typedef struct events {
    sg_buf all; /* each event's data, NUL-separated */
    int n;
} events;

static int collect(void *arg, const char *type, const char *data, size_t len) {
    events *e = arg;
    sg_buf_append(&e->all, data, len + 1);
    e->n++;
    return 0;
}

/* Every event of every fixture under tests/fixtures/sse into e. */
static void fixture_events(events *e) {
    const char *root = getenv("SPECGEN_ROOT");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tests/fixtures/sse", root ? root : ".");
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strstr(de->d_name, ".sse")) continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        sg_buf in = {0};
        assert_int_equal(sg_buf_read_file(&in, path), 0);
        sg_sse p;
        sg_sse_init(&p, collect, NULL, e);
        sg_sse_feed(&p, in.data, in.len);
        sg_sse_free(&p);
        sg_buf_free(&in);
    }
    closedir(d);
    assert_true(e->n > 50);
}

static void test_fixtures(void **state) {
    events e = {0};
    fixture_events(&e);
    int scanned = 0, errors = 0;
    for (const char *p = e.all.data; p < e.all.data + e.all.len; p += strlen(p) + 1) {
        if (!strcmp(p, "[DONE]")) continue;
        int is_error = strstr(p, "\"error\"") != NULL;
        int ok = agree(p, strlen(p));
        if (!ok && !is_error) print_message("the scanner declined a fixture chunk: %s\n", p);
        assert_true(ok || is_error); /* the known servers' shapes take the fast path */
        scanned += ok, errors += is_error;
    }
    print_message("# %d fixture events: %d scanned, %d error chunks\n", e.n, scanned, errors);
    sg_buf_free(&e.all);
}

static const char *const CORNERS[] = {
    "{\"choices\":[{\"delta\":{\"content\":\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"}}]}",
    "{\"choices\":[{\"delta\":{\"content\":\"\\u00e9\\u4e2d\\ud83d\\ude00 "
    "\xc3\xa9\xf0\x9f\x98\x80\"}}]}",
    "{\"choices\":[{\"delta\":{\"content\":\"\\u0000\"}}]}",
    "{\"choices\":[{\"delta\":{\"content\":\"\\ud83d\"}}]}",
    "{\"choices\":[{\"delta\":{\"content\":\"\\ude00\"}}]}",
    "{\"choices\":[{\"delta\":{\"content\":\"\xc0\xaf\"}}]}",
    "{\"choices\":[{\"delta\":{\"content\":\"\xed\xa0\x80\"}}]}",
    "{\"choices\":[{\"delta\":{\"content\":\"\xf4\x90\x80\x80\"}}]}",
    "{\"choices\":[{\"delta\":{\"content\":\"tab\there\"}}]}",
    "{\"choices\":[{\"delta\":{\"content\":\"a\",\"content\":\"b\"}}]}",
    "{\"choices\":[{\"delta\":{\"reasoning\":null,\"reasoning_content\":\"r\",\"content\":null}}]}",
    "{\"choices\":[{\"delta\":{\"reasoning\":\"\",\"reasoning_content\":\"r\"}}]}",
    "{\"choices\":[{\"delta\":null,\"text\":\"t\"}]}",
    "{\"choices\":[{\"text\":\"t\",\"finish_reason\":\"length\",\"stop_reason\":null}]}",
    "{\"choices\":[{\"delta\":{},\"finish_reason\":7,\"matched_stop\":151645}]}",
    "{\"choices\":[5,{\"delta\":{\"content\":\"second\"}}]}",
    "{\"choices\":[]}",
    "{\"choices\":{}}",
    "{\"choices\":null}",
    "{\"error\":{\"message\":\"boom\"}}",
    "{\"usage\":null,\"choices\":[]}",
    "{\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3.0,\"reasoning_tokens\":2}}",
    "{\"usage\":{\"completion_tokens_details\":{\"reasoning_tokens\":5},\"reasoning_tokens\":2,"
    "\"prompt_tokens_details\":{\"cached_tokens\":64}}}",
    "{\"usage\":{\"completion_tokens_details\":null,\"reasoning_tokens\":2,"
    "\"prompt_tokens_details\":{\"cached_tokens\":null}}}",
    "{\"usage\":{\"prompt_tokens\":-0,\"completion_tokens\":999999999999999999}}",
    "{\"usage\":{\"prompt_tokens\":1e3}}",
    "{\"usage\":{\"prompt_tokens\":01}}",
    "{\"usage\":{\"prompt_tokens\":1.}}",
    "{\"usage\":{\"prompt_tokens\":-}}",
    "{\"usage\":{\"prompt_tokens\":12345678901234567890}}",
    "{\"timings\":{\"prompt_ms\":1.5},\"system_fingerprint\":\"b6002-x\"}",
    "{\"system_fingerprint\":\"fp_abc\"}",
    "{\"system_fingerprint\":\"\\u0062\\u0031\"}",
    "{\"system_fingerprint\":\"b\"}",
    "{\"con\\u0074ent\":1}",
    "{\"choices\":[{\"del\\u0074a\":{\"content\":\"x\"}}]}",
    " \t\r\n{\"choices\":[{\"delta\":{\"content\":\"ws\"} } ] } \n",
    "{\"choices\":[{\"delta\":{\"content\":\"x\"}}]} x",
    "{\"choices\":[{\"delta\":{\"content\":\"x\"}}],}",
    "{\"a\":[true,false,null,{\"b\":[[]]}],\"choices\":[{\"delta\":{\"content\":\"x\"}}]}",
    "{\"a\":tru}",
    "{\"a\":nullx}",
    "[1,2]",
    "\"str\"",
    "",
    "{",
    "{\"a\":\"\x7f\"}",
    "{\"a\":\"\\x\"}",
    "{\"a\":\"\\u12G4\"}",
    /* token ids (vLLM's return_token_ids) */
    "{\"choices\":[{\"delta\":{},\"token_ids\":[151667,198]}],\"prompt_token_ids\":[1,2,3]}",
    "{\"prompt_token_ids\":null,\"choices\":[{\"text\":\"a\",\"prompt_token_ids\":[7,8],"
    "\"token_ids\":[9]}]}",
    "{\"prompt_token_ids\":[],\"choices\":[{\"text\":\"a\",\"prompt_token_ids\":[7,8],"
    "\"token_ids\":[]}]}",
    "{\"choices\":[{\"token_ids\":[1,2.5,\"x\",null,[3],{\"a\":4},-5,4294967297,-0]}]}",
    "{\"choices\":[{\"token_ids\":[1],\"token_ids\":[2]}]}",
    "{\"choices\":[5,{\"token_ids\":[1]}],\"prompt_token_ids\":[9]}",
    "{\"choices\":[{\"token_ids\":{\"a\":1},\"prompt_token_ids\":7}]}",
    "{\"choices\":[{\"token_ids\":[1e3]}]}",
    "{\"choices\":[{\"token_ids\":[99999999999999999999]}]}",
    "{\"token_ids\":[1],\"choices\":[{\"delta\":{\"prompt_token_ids\":[2]}}]}",
    "{\"choices\":[{\"token_ids\":[1,]}]}",
    "{\"choices\":[{\"tok\\u0065n_ids\":[1]}]}",
    "{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]"
    "]]"
    "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
};

static void test_corners(void **state) {
    int scanned = 0;
    for (size_t i = 0; i < sizeof CORNERS / sizeof *CORNERS; i++)
        scanned += agree(CORNERS[i], strlen(CORNERS[i]));
    assert_true(scanned > 20);
    /* What the scanner reads must be right, not only equal to jansson's. */
    sg_llm_chunk c;
    const char *t = CORNERS[1];
    assert_int_equal(sg_llm_chunk_scan(t, strlen(t), &c, &scratch), 1);
    assert_string_equal(c.content, "\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80 \xc3\xa9\xf0\x9f\x98\x80");
    t = CORNERS[22];
    assert_int_equal(sg_llm_chunk_scan(t, strlen(t), &c, &scratch), 1);
    assert_int_equal(c.usage.reasoning_tokens, 5);
    assert_int_equal(c.usage.cached_tokens, 64);
    t = "{\"choices\":[{\"token_ids\":[1,2.5,\"x\",null,[3],{\"a\":4},-5,4294967297,-0]}],"
        "\"prompt_token_ids\":[151644,198]}";
    assert_int_equal(sg_llm_chunk_scan(t, strlen(t), &c, &scratch), 1);
    assert_int_equal(c.n_gen_ids, 4);
    assert_int_equal(c.gen_ids[0], 1);
    assert_int_equal(c.gen_ids[1], -5);
    assert_int_equal(c.gen_ids[2], 1); /* an int64 cut to int32, as the jansson path cuts it */
    assert_int_equal(c.gen_ids[3], 0);
    assert_int_equal(c.n_prompt_ids, 2);
    assert_int_equal(c.prompt_ids[0], 151644);
    assert_int_equal(c.prompt_ids[1], 198);
}

/* The scratch buffer's room for ids: the densest chunk ("0,0,..." in two arrays, no other
 * bytes) and long ids, against jansson. */
static void test_ids_dense(void **state) {
    for (int n = 0; n < 3000; n += 1 + n / 3) {
        sg_buf b = {0};
        sg_buf_append_str(&b, "{\"prompt_token_ids\":[");
        for (int i = 0; i < n; i++) sg_buf_append_str(&b, i ? ",0" : "0");
        sg_buf_append_str(&b, "],\"choices\":[{\"token_ids\":[");
        for (int i = 0; i < n; i++) sg_buf_printf(&b, i ? ",%d" : "%d", i % 2 ? 7 : 151668 + i);
        sg_buf_append_str(&b, "]}]}");
        assert_int_equal(agree(b.data, b.len), 1);
        sg_llm_chunk c;
        assert_int_equal(sg_llm_chunk_scan(b.data, b.len, &c, &scratch), 1);
        assert_int_equal(c.n_prompt_ids, n);
        assert_int_equal(c.n_gen_ids, n);
        if (n) assert_int_equal(c.gen_ids[n - 1], (n - 1) % 2 ? 7 : 151668 + n - 1);
        sg_buf_free(&b);
        sg_buf_free(&scratch); /* each size from an empty buffer: the reserve must suffice */
    }
}

static uint64_t rng(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

/* One random edit of b (a seed chunk): what makes JSON interesting to a scanner. */
static void mutate(sg_buf *b, uint64_t *seed, const char *other) {
    static const char *const bits[] = {"\\",
                                       "\"",
                                       "\\u",
                                       "\\ud83d",
                                       "\\ude00",
                                       "\\u0000",
                                       "{",
                                       "}",
                                       "[",
                                       "]",
                                       ",",
                                       ":",
                                       "null",
                                       "1e5",
                                       "-0",
                                       "\xc3\xa9",
                                       "\xed\xa0",
                                       "\xff",
                                       "\"content\":\"x\"",
                                       "\"reasoning\":",
                                       "\"usage\":{}",
                                       "\"error\":1",
                                       "\"token_ids\":[1,2]",
                                       "\"prompt_token_ids\":[3]",
                                       " "};
    size_t at = b->len ? rng(seed) % (b->len + 1) : 0;
    sg_buf o = {0};
    sg_buf_append(&o, b->data, at);
    switch (rng(seed) % 5) {
    case 0: /* insert a piece */
        sg_buf_append_str(&o, bits[rng(seed) % (sizeof bits / sizeof *bits)]);
        sg_buf_append(&o, b->data + at, b->len - at);
        break;
    case 1: /* delete a few bytes */
        at += rng(seed) % 4;
        if (at < b->len) sg_buf_append(&o, b->data + at, b->len - at);
        break;
    case 2: /* flip a byte */
        if (at < b->len) {
            char c = (char)(b->data[at] ^ (1 << rng(seed) % 8));
            sg_buf_append(&o, &c, 1);
            sg_buf_append(&o, b->data + at + 1, b->len - at - 1);
        }
        break;
    case 3: /* splice in the tail of another chunk */
        sg_buf_append_str(&o, other + rng(seed) % (strlen(other) + 1));
        break;
    default: /* a random byte */
        sg_buf_append(&o, &(char){(char)rng(seed)}, 1);
        sg_buf_append(&o, b->data + at, b->len - at);
    }
    sg_buf_free(b);
    *b = o;
}

static void test_fuzzed(void **state) {
    events e = {0};
    fixture_events(&e);
    for (size_t i = 0; i < sizeof CORNERS / sizeof *CORNERS; i++)
        collect(&e, "", CORNERS[i], strlen(CORNERS[i]));
    const char **seeds = sg_xcalloc((size_t)e.n, sizeof *seeds);
    int n = 0;
    for (const char *p = e.all.data; p < e.all.data + e.all.len; p += strlen(p) + 1) seeds[n++] = p;
    uint64_t seed = 29;
    long scanned = 0, runs = 0;
    for (int round = 0; round < 150000; round++) {
        sg_buf b = {0};
        sg_buf_append_str(&b, seeds[rng(&seed) % (uint64_t)n]);
        for (int k = 1 + (int)(rng(&seed) % 3); k > 0; k--)
            mutate(&b, &seed, seeds[rng(&seed) % (uint64_t)n]);
        scanned += agree(b.data ? b.data : "", b.len), runs++;
        sg_buf_free(&b);
    }
    print_message("# %ld fuzzed chunks, %ld scanned (the rest declined to jansson)\n", runs,
                  scanned);
    assert_true(scanned > runs / 10); /* the comparison did happen */
    free(seeds);
    sg_buf_free(&e.all);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_corners),
        cmocka_unit_test(test_ids_dense),
        cmocka_unit_test(test_fuzzed),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    sg_buf_free(&scratch);
    sg_buf_free(&jscratch);
    return rc;
}
