/* kvstore slab allocator: size classes, extents, exact accounting, limits, chunks. */
#include "kvstore/slab.h"

#include <regex.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* ---- invariants (common/assert.h): a broken accounting stops the process ---- */

/* Run broken() in a child whose stderr comes back through a pipe; the child must die of
 * SIGABRT after printing "kvstore/slab.c:LINE: assertion failed: EXPR" naming `expr`. */
static void dies_on_assert(void (*broken)(void), const char *expr) {
#ifdef NDEBUG
    skip(); /* SG_ASSERT compiles to nothing */
#endif
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none); /* no core file from the expected abort */
        close(fd[0]);
        dup2(fd[1], 2);
        broken();
        _exit(0); /* not reached when the assertion fires */
    }
    close(fd[1]);
    char out[4096];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof out - 1 && (r = read(fd[0], out + n, sizeof out - 1 - n)) > 0) n += (size_t)r;
    out[n] = 0;
    close(fd[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGABRT) fail_msg("child did not abort: %s", out);
    regex_t re;
    assert_int_equal(
        regcomp(&re, "^kvstore/slab\\.c:[0-9]+: assertion failed: .+", REG_EXTENDED | REG_NEWLINE),
        0);
    int m = regexec(&re, out, 0, NULL, 0);
    regfree(&re);
    if (m != 0 || !strstr(out, expr)) fail_msg("unexpected message: %s", out);
}

static void release_a_page_twice(void) {
    sg_kv_slab *s = sg_kv_slab_new(8 * MiB, 1);
    sg_kv_ext e[4];
    int owner;
    int n = sg_kv_slab_alloc(s, 2 * MiB, &owner, e);
    sg_kv_slab_release(s, e, (uint32_t)n);
    sg_kv_slab_release(s, e, (uint32_t)n); /* used_pages would wrap below 0 */
}

static void release_a_slot_twice(void) {
    sg_kv_slab *s = sg_kv_slab_new(8 * MiB, 1);
    sg_kv_ext e[4], keep[4];
    int owner;
    sg_kv_slab_alloc(s, 100, &owner, e);
    sg_kv_slab_alloc(s, 100, &owner, keep); /* keeps the slab page in use */
    sg_kv_slab_release(s, e, 1);
    sg_kv_slab_release(s, e, 1); /* the slot would be on the free list twice */
}

static void double_release_aborts(void **state) {
    dies_on_assert(release_a_page_twice, "s->kind[p] != PG_FREE");
    dies_on_assert(release_a_slot_twice, "sp->owners[slot] != NULL");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(classes_grow_by_quarters),
        cmocka_unit_test(small_values_share_a_page),
        cmocka_unit_test(big_values_take_pages_and_a_tail),
        cmocka_unit_test(allocation_is_all_or_nothing),
        cmocka_unit_test(limit_shrinks_and_lists_owners_above),
        cmocka_unit_test(double_release_aborts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
