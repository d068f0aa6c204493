/* The validator pool driven without blocking, as an event loop would: two slots run
 * at once, a hung job times out on the caller's clock while the other passes, the hung
 * worker is replaced, and a busy slot refuses a second job. Real OpenCL runs (PoCL). */
#include "common/buf.h"
#include "validator/validator.h"

#include <poll.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static char root[512];

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static char *load(const char *rel, size_t *len) {
    char p[700];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    sg_buf b = {0};
    if (sg_buf_read_file(&b, p) < 0) fail_msg("cannot read %s", p);
    *len = b.len;
    sg_buf_append(&b, "", 0);
    return sg_buf_steal(&b);
}

/* A killed child has finished exiting once it is a zombie whose threads are all gone:
 * the leader of a multithreaded process (PoCL starts threads) shows state Z while its
 * other threads still exit, and waitpid() does not report it until they have. */
static int zombie(int pid) {
    char p[64], buf[2048];
    snprintf(p, sizeof p, "/proc/%d/status", pid);
    FILE *f = fopen(p, "r");
    if (!f) return 1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *state = strstr(buf, "State:"), *threads = strstr(buf, "Threads:");
    if (!state || !strchr(state, 'Z') || strchr(state, 'Z') > strchr(state, '\n')) return 0;
    return !threads || atoi(threads + 8) <= 1;
}

static void test_async(void **st) {
    (void)st;
    const char *r = getenv("SPECGEN_ROOT");
    snprintf(root, sizeof root, "%s", r ? r : ".");
    char task[600];
    snprintf(task, sizeof task, "%s/suites/demo/vector_scale", root);
    sg_dev_opts o;
    sg_dev_opts_default(&o);
    o.slots = 2;
    sg_val_pool *pool;
    sg_err err;
    assert_int_equal(sg_val_pool_new(&o, &pool, &err), 0);
    size_t glen, hlen;
    char *good = load("tests/hostile/opencl/good.cl", &glen);
    char *hang = load("tests/hostile/opencl/infinite_loop.cl", &hlen);
    sg_val_job jg = {.task_dir = task, .candidate = good, .candidate_len = glen, .seed = 11};
    sg_val_job jh = {.task_dir = task,
                     .candidate = hang,
                     .candidate_len = hlen,
                     .seed = 12,
                     .run_timeout_ms = 1500};
    sg_val_result res[2];
    assert_int_equal(sg_val_pool_fd(pool, 0), -1);
    assert_int_equal(sg_val_pool_submit(pool, 0, &jg, now_ms(), &res[0], &err), 0);
    assert_int_equal(sg_val_pool_submit(pool, 1, &jh, now_ms(), &res[1], &err), 0);
    assert_int_equal(sg_val_pool_submit(pool, 1, &jg, now_ms(), &res[1], &err), -1);
    assert_non_null(strstr(err.msg, "busy"));
    int done[2] = {0, 0};
    int64_t t0 = now_ms();
    while (!(done[0] && done[1])) {
        struct pollfd pf[2];
        int64_t next = INT64_MAX;
        for (int i = 0; i < 2; i++) {
            pf[i].fd = done[i] ? -1 : sg_val_pool_fd(pool, i);
            pf[i].events = POLLIN;
            if (!done[i] && sg_val_pool_deadline(pool, i) < next)
                next = sg_val_pool_deadline(pool, i);
        }
        int64_t wait = next - now_ms();
        poll(pf, 2, wait < 0 ? 0 : (int)wait);
        for (int i = 0; i < 2; i++)
            if (!done[i] && sg_val_pool_step(pool, i, now_ms(), &res[i]) == 0) done[i] = 1;
        if (now_ms() - t0 > 120000) fail_msg("jobs did not finish");
    }
    if (res[0].verdict != SG_VAL_PASS) fail_msg("good: %s", res[0].message);
    if (res[1].verdict != SG_VAL_TIMEOUT) fail_msg("hang: %s", res[1].message);
    assert_int_equal(res[0].seed, 11);
    assert_int_equal(sg_val_pool_deadline(pool, 1), INT64_MAX);
    /* The killed worker is replaced and the slot works again. */
    sg_val_result again;
    assert_int_equal(sg_val_pool_validate(pool, 1, &jg, &again, &err), 0);
    if (again.verdict != SG_VAL_PASS) fail_msg("after timeout: %s", again.message);
    assert_int_equal(sg_val_pool_spawns(pool, 1), 2);
    assert_int_equal(sg_val_pool_spawns(pool, 0), 1);
    assert_true(again.cache_hit == 0); /* a new worker starts with an empty cache */
    assert_int_equal(sg_val_pool_validate(pool, 1, &jg, &again, &err), 0);
    assert_true(again.cache_hit == 1);
    /* A worker that dies between jobs (as after a sticky CUDA error) is replaced before
     * the next job rather than failing it. */
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int pids[8], n = 0;
    while (n < 8 && fscanf(f, "%d", &pids[n]) == 1) n++;
    fclose(f);
    assert_int_equal(n, 2);
    for (int k = 0; k < n; k++) {
        assert_int_equal(kill(pids[k], SIGKILL), 0);
        for (int i = 0; i < 500 && !zombie(pids[k]); i++)
            usleep(10000); /* exiting takes a moment */
    }
    assert_int_equal(sg_val_pool_validate(pool, 1, &jg, &again, &err), 0);
    if (again.verdict != SG_VAL_PASS) fail_msg("after the worker died: %s", again.message);
    assert_int_equal(sg_val_pool_spawns(pool, 1), 3);
    /* A source over the limit is answered without a worker. */
    char *big = calloc(SG_VAL_MAX_SOURCE + 10, 1);
    memset(big, ' ', SG_VAL_MAX_SOURCE + 9);
    sg_val_job jb = {.task_dir = task, .candidate = big, .candidate_len = SG_VAL_MAX_SOURCE + 9};
    assert_int_equal(sg_val_pool_submit(pool, 0, &jb, now_ms(), &again, &err), 1);
    assert_int_equal(again.verdict, SG_VAL_REJECTED);
    assert_int_equal(sg_val_pool_ping(pool, 0, &err), 0);
    free(big);
    free(good);
    free(hang);
    sg_val_pool_free(pool);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_async)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
