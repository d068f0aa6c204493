/* kvstore store: set/get through a real host backend, LRU eviction within the budget,
 * references keeping values alive, expiry on the caller's clock, SCAN across resizes,
 * shrinking maxmemory, values that get their memory as their bytes arrive. */
#include "kvstore/store.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MiB ((uint64_t)1 << 20)

typedef struct fixture {
    sg_kv_backend *be;
    sg_kv_store *st;
} fixture;

static int setup(void **state) {
    fixture *f = calloc(1, sizeof *f);
    sg_err err;
    if (sg_kv_backend_open("host", 16 * MiB, &f->be, &err) != 0) return -1;
    f->st = sg_kv_store_new(f->be, 42);
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture *f = *state;
    sg_kv_store_free(f->st);
    f->be->ops->destroy(f->be);
    free(f);
    return 0;
}

static void put(sg_kv_store *st, const char *key, const void *data, uint64_t n, int64_t now) {
    sg_err err;
    sg_kv_val *v = sg_kv_val_new(st, n, &err);
    assert_non_null(v);
    if (data) assert_int_equal(sg_kv_val_write(st, v, 0, data, n, &err), 0);
    assert_int_equal(sg_kv_set(st, key, strlen(key), v, 0, 0, now), 1);
    sg_kv_val_unref(st, v);
}

static void set_get_roundtrip(void **state) {
    fixture *f = *state;
    char *data = malloc(3 * MiB + 5);
    for (uint64_t i = 0; i < 3 * MiB + 5; i++) data[i] = (char)(i * 7 + i / 4096);
    put(f->st, "big", data, 3 * MiB + 5, 0);
    sg_kv_val *v = sg_kv_get(f->st, "big", 3, 0);
    assert_non_null(v);
    char *back = malloc(v->len);
    sg_err err;
    assert_int_equal(sg_kv_val_read(f->st, v, 0, back, v->len, &err), 0);
    assert_memory_equal(back, data, 3 * MiB + 5);
    assert_int_equal(sg_kv_val_read(f->st, v, MiB - 3, back, 10, &err), 0);
    assert_memory_equal(back, data + MiB - 3, 10); /* reads across an extent boundary */
    free(back);
    free(data);
}

static void lru_eviction_keeps_the_budget(void **state) {
    fixture *f = *state;
    char key[32];
    for (int i = 0; i < 40; i++) {
        snprintf(key, sizeof key, "k%d", i);
        put(f->st, key, NULL, MiB, i);
        assert_non_null(sg_kv_get(f->st, "k0", 2, i)); /* k0 is always the most recent */
        sg_kv_stats s;
        sg_kv_get_stats(f->st, &s);
        assert_true(s.used <= s.maxmemory);
    }
    sg_kv_stats s;
    sg_kv_get_stats(f->st, &s);
    assert_int_equal(s.keys, 16);
    assert_int_equal(s.evicted, 24);
    assert_int_equal(sg_kv_exists(f->st, "k1", 2, 100), 0);
    assert_int_equal(sg_kv_exists(f->st, "k0", 2, 100), 1);
    assert_int_equal(sg_kv_exists(f->st, "k39", 3, 100), 1);
}

static void references_outlive_delete(void **state) {
    fixture *f = *state;
    put(f->st, "a", "xyz", 3, 0);
    sg_kv_val *v = sg_kv_get(f->st, "a", 1, 0);
    sg_kv_val_ref(v); /* a reply in flight */
    assert_int_equal(sg_kv_del(f->st, "a", 1, 0), 1);
    sg_kv_stats s;
    sg_kv_get_stats(f->st, &s);
    assert_int_equal(s.keys, 0);
    assert_int_equal(s.value_bytes, 3); /* still counted while referenced */
    char back[3];
    sg_err err;
    assert_int_equal(sg_kv_val_read(f->st, v, 0, back, 3, &err), 0);
    assert_memory_equal(back, "xyz", 3);
    sg_kv_val_unref(f->st, v);
    sg_kv_get_stats(f->st, &s);
    assert_int_equal(s.value_bytes, 0);
    assert_int_equal(s.used, 0);
}

static void expiry_uses_the_callers_clock(void **state) {
    fixture *f = *state;
    sg_err err;
    sg_kv_val *v = sg_kv_val_new(f->st, 1, &err);
    assert_int_equal(sg_kv_set(f->st, "t", 1, v, 1500, 0, 1000), 1);
    assert_int_equal(sg_kv_set(f->st, "t", 1, v, 0, SG_KV_NX, 1000), 0);
    sg_kv_val_unref(f->st, v);
    assert_int_equal(sg_kv_ttl_ms(f->st, "t", 1, 1000), 500);
    assert_int_equal(sg_kv_exists(f->st, "t", 1, 1499), 1);
    assert_int_equal(sg_kv_exists(f->st, "t", 1, 1500), 0);
    assert_int_equal(sg_kv_ttl_ms(f->st, "t", 1, 1500), -2);
    put(f->st, "u", "1", 1, 0);
    assert_int_equal(sg_kv_expire_at(f->st, "u", 1, 50, 10), 1);
    assert_int_equal(sg_kv_expire_cycle(f->st, 1 << 20, 60), 1);
    assert_int_equal(sg_kv_exists(f->st, "u", 1, 0), 0);
}

static void count_key(const sg_kv_entry *e, void *arg) {
    char k[32];
    snprintf(k, sizeof k, "%.*s", (int)e->klen - 1, e->key + 1);
    ((int *)arg)[atoi(k)]++;
}

static void scan_survives_resizes(void **state) {
    fixture *f = *state;
    int seen[5000] = {0};
    char key[32];
    for (int i = 0; i < 600; i++) {
        snprintf(key, sizeof key, "s%d", i);
        put(f->st, key, "v", 1, 0);
    }
    uint64_t cur = 0;
    int rounds = 0, added = 600;
    do {
        cur = sg_kv_scan(f->st, cur, 50, 0, count_key, seen);
        for (int j = 0; j < 300 && added < 5000; j++, added++) { /* grows the table */
            snprintf(key, sizeof key, "s%d", added);
            put(f->st, key, "v", 1, 0);
        }
        rounds++;
    } while (cur != 0 && rounds < 100000);
    assert_int_equal(cur, 0);
    for (int i = 0; i < 600; i++) assert_true(seen[i] >= 1);
}

/* n keys m0.. of one page each, at times 0.. */
static void fill(sg_kv_store *st, int n) {
    char key[32];
    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof key, "m%d", i);
        put(st, key, NULL, MiB - 64, i);
    }
}

static void shrinking_evicts_and_releases(void **state) {
    fixture *f = *state;
    fill(f->st, 14);
    sg_err err;
    assert_int_equal(sg_kv_set_maxmemory(f->st, 8 * MiB, &err), 0);
    sg_kv_stats s;
    sg_kv_get_stats(f->st, &s);
    assert_true(s.used <= 8 * MiB);
    assert_int_equal(s.maxmemory, 8 * MiB);
    assert_int_equal(s.released_bytes, 8 * MiB);
    assert_int_equal(sg_kv_set_maxmemory(f->st, 32 * MiB, &err), -1);
    assert_int_equal(sg_kv_set_maxmemory(f->st, 0, &err), 0);
    sg_kv_get_stats(f->st, &s);
    assert_int_equal(s.released_bytes, 0);
    assert_int_equal(s.maxmemory, 16 * MiB);
}

/* A value still being received when maxmemory shrinks has no key to evict yet; when it
 * is stored afterwards it must not keep pages above the new limit alive (the region
 * above is to be given back), so it is evicted at once. */
static void value_in_flight_across_a_shrink(void **state) {
    fixture *f = *state;
    fill(f->st, 12);
    sg_err err;
    sg_kv_val *v = sg_kv_val_new(f->st, 3 * MiB, &err); /* pages 12..14 */
    assert_non_null(v);
    assert_int_equal(sg_kv_set_maxmemory(f->st, 8 * MiB, &err), 0);
    assert_int_equal(sg_kv_set(f->st, "late", 4, v, 0, 0, 20), 1);
    sg_kv_val_unref(f->st, v);
    assert_null(sg_kv_get(f->st, "late", 4, 21));
    sg_kv_stats s;
    sg_kv_get_stats(f->st, &s);
    assert_true(s.used <= 8 * MiB);
    assert_int_equal(s.released_bytes, 8 * MiB);
    /* Below the limit a value is stored as usual. */
    put(f->st, "fits", NULL, MiB - 64, 22);
    assert_non_null(sg_kv_get(f->st, "fits", 4, 23));
}

/* A value announced big gets region memory only as its bytes arrive: announcing 12 MiB
 * in a full 16 MiB store evicts nothing; reserving evicts LRU keys only as needed; the
 * bytes written piecewise read back whole (whole pages first, then the tail's slot). */
static void arriving_value_reserves_as_bytes_come(void **state) {
    fixture *f = *state;
    fill(f->st, 14);
    sg_err err;
    uint64_t len = 12 * MiB + 300;
    sg_kv_val *v = sg_kv_val_new_arriving(f->st, len, &err);
    assert_non_null(v);
    sg_kv_stats s;
    sg_kv_get_stats(f->st, &s);
    assert_int_equal(s.keys, 14);
    assert_int_equal(s.evicted, 0);
    char *data = malloc(len);
    for (uint64_t i = 0; i < len; i++) data[i] = (char)(i * 13 + i / 999);
    uint64_t got = 0, step = 700 * 1024; /* not a page multiple: pages straddle writes */
    while (got < len) {
        uint64_t n = len - got < step ? len - got : step;
        assert_int_equal(sg_kv_val_reserve(f->st, v, got + n, &err), 0);
        assert_true(v->room >= got + n);
        assert_true(v->room < got + n + MiB); /* at most the last page is ahead */
        assert_int_equal(sg_kv_val_write(f->st, v, got, data + got, n, &err), 0);
        got += n;
        assert_int_equal(sg_kv_val_written(f->st, v, got == len), 0);
    }
    assert_true(v->n_ext <= sg_kv_slab_max_ext(len));
    sg_kv_get_stats(f->st, &s);
    assert_true(s.used <= 16 * MiB);
    assert_int_equal(s.evicted, 11); /* 13 pages for the value (12 + one of slots): 3 keys stay */
    assert_int_equal(sg_kv_set(f->st, "arrived", 7, v, 0, 0, 5), 1);
    sg_kv_val_unref(f->st, v);
    sg_kv_val *back = sg_kv_get(f->st, "arrived", 7, 6);
    assert_non_null(back);
    char *out = malloc(len);
    assert_int_equal(sg_kv_val_read(f->st, back, 0, out, len, &err), 0);
    assert_memory_equal(out, data, len);
    free(out);
    free(data);
}

/* Lowering maxmemory drops an arriving value whose memory lies above the new limit: at
 * once when nobody is copying into it, right after the copy when someone is. */
static void shrink_drops_arriving_values(void **state) {
    fixture *f = *state;
    sg_err err;
    sg_kv_val *a = sg_kv_val_new_arriving(f->st, 6 * MiB, &err);
    sg_kv_val *b = sg_kv_val_new_arriving(f->st, 6 * MiB, &err);
    assert_int_equal(sg_kv_val_reserve(f->st, a, 4 * MiB, &err), 0); /* pages 0..3 */
    assert_int_equal(sg_kv_val_written(f->st, a, 0), 0);
    assert_int_equal(sg_kv_val_reserve(f->st, b, 4 * MiB, &err), 0); /* pages 4..7 */
    /* b is being written (no sg_kv_val_written yet) when the budget drops to 6 MiB. */
    assert_int_equal(sg_kv_set_maxmemory(f->st, 6 * MiB, &err), 0);
    assert_int_equal(a->dropped, 0); /* wholly below the limit: it stays */
    assert_int_equal(b->dropped, 1);
    sg_kv_stats s;
    sg_kv_get_stats(f->st, &s);
    assert_int_equal(s.used, 8 * MiB); /* b's copy is still running */
    assert_int_equal(sg_kv_val_written(f->st, b, 0), -1);
    sg_kv_get_stats(f->st, &s);
    assert_int_equal(s.used, 4 * MiB);
    assert_int_equal(sg_kv_val_reserve(f->st, b, 5 * MiB, &err), -1);
    assert_non_null(strstr(err.msg, "maxmemory was lowered"));
    sg_kv_val_unref(f->st, b);
    /* a grows on within the new budget; past it there is no room. */
    assert_int_equal(sg_kv_val_reserve(f->st, a, 6 * MiB, &err), 0);
    assert_int_equal(sg_kv_val_written(f->st, a, 1), 0);
    sg_kv_val *c = sg_kv_val_new_arriving(f->st, 2 * MiB, &err);
    assert_int_equal(sg_kv_val_reserve(f->st, c, MiB, &err), -1);
    assert_non_null(strstr(err.msg, "no room"));
    sg_kv_val_unref(f->st, c);
    /* An idle drop (nobody copying) frees at once. */
    assert_int_equal(sg_kv_set_maxmemory(f->st, 0, &err), 0);
    sg_kv_val *d = sg_kv_val_new_arriving(f->st, 8 * MiB, &err);
    assert_int_equal(sg_kv_val_reserve(f->st, d, 8 * MiB, &err), 0); /* pages 6..13 */
    assert_int_equal(sg_kv_val_written(f->st, d, 0), 0);
    assert_int_equal(sg_kv_set_maxmemory(f->st, 7 * MiB, &err), 0);
    sg_kv_get_stats(f->st, &s);
    assert_true(s.used <= 7 * MiB);
    sg_kv_val_unref(f->st, d);
    sg_kv_val_unref(f->st, a);
    sg_kv_get_stats(f->st, &s);
    assert_int_equal(s.used, 0);
    assert_int_equal(s.value_bytes, 0);
}

/* A shrink evicts by recency, not by address: the most recently used key, living in the
 * top pages, moves below the new limit with its bytes intact. */
static void shrink_keeps_recent_keys_above_the_limit(void **state) {
    fixture *f = *state;
    char *data = malloc(MiB - 64);
    for (uint64_t i = 0; i < MiB - 64; i++) data[i] = (char)(i * 31 + 7);
    fill(f->st, 13);
    put(f->st, "hot", data, MiB - 64, 20); /* page 13 */
    sg_err err;
    assert_int_equal(sg_kv_set_maxmemory(f->st, 8 * MiB, &err), 0);
    sg_kv_val *v = sg_kv_get(f->st, "hot", 3, 21);
    assert_non_null(v);
    assert_true(v->ext[0].off + v->ext[0].len <= 8 * MiB);
    char *back = malloc(MiB - 64);
    assert_int_equal(sg_kv_val_read(f->st, v, 0, back, MiB - 64, &err), 0);
    assert_memory_equal(back, data, MiB - 64);
    assert_null(sg_kv_get(f->st, "m0", 2, 22)); /* the least recently used went */
    assert_non_null(sg_kv_get(f->st, "m12", 3, 22));
    sg_kv_stats s;
    sg_kv_get_stats(f->st, &s);
    assert_true(s.used <= 8 * MiB);
    assert_true(s.moved >= 1);
    assert_int_equal(s.released_bytes, 8 * MiB);
    free(back);
    free(data);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(set_get_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(lru_eviction_keeps_the_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(references_outlive_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(expiry_uses_the_callers_clock, setup, teardown),
        cmocka_unit_test_setup_teardown(scan_survives_resizes, setup, teardown),
        cmocka_unit_test_setup_teardown(shrinking_evicts_and_releases, setup, teardown),
        cmocka_unit_test_setup_teardown(value_in_flight_across_a_shrink, setup, teardown),
        cmocka_unit_test_setup_teardown(arriving_value_reserves_as_bytes_come, setup, teardown),
        cmocka_unit_test_setup_teardown(shrink_drops_arriving_values, setup, teardown),
        cmocka_unit_test_setup_teardown(shrink_keeps_recent_keys_above_the_limit, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
