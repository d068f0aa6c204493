/* kvstore slab allocator: size classes, extents, exact accounting, limits, chunks. */
#include "kvstore/slab.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#define MiB ((uint64_t)1 << 20)

static void classes_grow_by_quarters(void **state) {
    assert_int_equal(sg_kv_slab_class_size(0), 64);
    assert_int_equal(sg_kv_slab_class_size(1), 80);
    assert_int_equal(sg_kv_slab_class_size(4), 128);
    int n = sg_kv_slab_nclasses();
    assert_int_equal(sg_kv_slab_class_size(n - 1), 512 * 1024);
    for (int i = 1; i < n; i++)
        assert_true(sg_kv_slab_class_size(i) > sg_kv_slab_class_size(i - 1));
}

static void small_values_share_a_page(void **state) {
    sg_kv_slab *s = sg_kv_slab_new(8 * MiB, 1);
    sg_kv_ext e[4];
    int owner;
    assert_int_equal(sg_kv_slab_alloc(s, 100, &owner, e), 1);
    assert_int_equal(e[0].len, 100);
    assert_int_equal(sg_kv_slab_used(s), MiB);
    assert_int_equal(sg_kv_slab_slot_bytes(s), 112);
    sg_kv_ext e2[4];
    assert_int_equal(sg_kv_slab_alloc(s, 110, &owner, e2), 1);
    assert_int_equal(e2[0].off, e[0].off + 112); /* next slot of the same class page */
    assert_int_equal(sg_kv_slab_used(s), MiB);
    sg_kv_slab_release(s, e, 1);
    sg_kv_slab_release(s, e2, 1);
    assert_int_equal(sg_kv_slab_used(s), 0); /* the empty slab page went back */
    assert_int_equal(sg_kv_slab_slot_bytes(s), 0);
    sg_kv_slab_destroy(s);
}

static void big_values_take_pages_and_a_tail(void **state) {
    sg_kv_slab *s = sg_kv_slab_new(16 * MiB, 4);
    uint64_t n = 5 * MiB + 1000;
    sg_kv_ext e[16];
    int owner;
    int k = sg_kv_slab_alloc(s, n, &owner, e);
    /* pages 0-3 merge (one chunk of 4), page 4 starts a new chunk, then the tail slot */
    assert_int_equal(k, 3);
    assert_int_equal(e[0].off, 0);
    assert_int_equal(e[0].len, 4 * MiB);
    assert_int_equal(e[1].off, 4 * MiB);
    assert_int_equal(e[1].len, MiB);
    assert_int_equal(e[2].len, 1000);
    assert_int_equal(e[2].off, 5 * MiB);
    uint64_t total = 0;
    for (int i = 0; i < k; i++) total += e[i].len;
    assert_int_equal(total, n);
    assert_int_equal(sg_kv_slab_used(s), 6 * MiB);
    sg_kv_slab_release(s, e, (uint32_t)k);
    assert_int_equal(sg_kv_slab_used(s), 0);
    /* a tail above half a page takes a whole page */
    k = sg_kv_slab_alloc(s, MiB + 600 * 1024, &owner, e);
    assert_int_equal(k, 1);
    assert_int_equal(e[0].len, MiB + 600 * 1024);
    assert_int_equal(sg_kv_slab_used(s), 2 * MiB);
    sg_kv_slab_release(s, e, 1);
    sg_kv_slab_destroy(s);
}

static void allocation_is_all_or_nothing(void **state) {
    sg_kv_slab *s = sg_kv_slab_new(4 * MiB, 1);
    sg_kv_ext e[8], f[8];
    int owner;
    assert_int_equal(sg_kv_slab_alloc(s, 3 * MiB, &owner, e), 3);
    assert_int_equal(sg_kv_slab_alloc(s, 2 * MiB, &owner, f), -1);
    assert_int_equal(sg_kv_slab_used(s), 3 * MiB);
    assert_int_equal(sg_kv_slab_alloc(s, MiB, &owner, f), 1);
    assert_int_equal(sg_kv_slab_alloc(s, 10, &owner, f), -1); /* no page for a slab */
    assert_int_equal(sg_kv_slab_used(s), 4 * MiB);
    sg_kv_slab_destroy(s);
}

static void limit_shrinks_and_lists_owners_above(void **state) {
    sg_kv_slab *s = sg_kv_slab_new(8 * MiB, 2);
    sg_kv_ext a[8], b[8], c[8];
    int oa, ob, oc;
    assert_int_equal(sg_kv_slab_alloc(s, 3 * MiB, &oa, a), 2); /* pages 0-1, 2 */
    assert_int_equal(sg_kv_slab_alloc(s, 2 * MiB, &ob, b), 2); /* pages 3, 4 */
    assert_int_equal(sg_kv_slab_alloc(s, 200, &oc, c), 1);     /* page 5: slab */
    sg_kv_slab_set_limit(s, 4 * MiB);
    assert_int_equal(sg_kv_slab_limit(s), 4 * MiB);
    void **owners;
    size_t n = sg_kv_slab_owners_above(s, &owners);
    assert_int_equal(n, 2);
    assert_ptr_equal(owners[0], &ob);
    assert_ptr_equal(owners[1], &oc);
    free(owners);
    assert_int_equal(sg_kv_slab_releasable_chunk(s), 3); /* pages 6-7 were never used */
    sg_kv_slab_mark_chunk(s, 3, 0);
    assert_int_equal(sg_kv_slab_releasable_chunk(s), -1);
    sg_kv_slab_release(s, b, 2);
    sg_kv_slab_release(s, c, 1);
    assert_int_equal(sg_kv_slab_releasable_chunk(s), 2);
    /* new pages come from below the limit only */
    sg_kv_ext d[8];
    int od;
    assert_int_equal(sg_kv_slab_alloc(s, MiB, &od, d), 1);
    assert_int_equal(d[0].off, 3 * MiB);
    assert_int_equal(sg_kv_slab_alloc(s, MiB, &od, d), -1);
    sg_kv_slab_destroy(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(classes_grow_by_quarters),
        cmocka_unit_test(small_values_share_a_page),
        cmocka_unit_test(big_values_take_pages_and_a_tail),
        cmocka_unit_test(allocation_is_all_or_nothing),
        cmocka_unit_test(limit_shrinks_and_lists_owners_above),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
