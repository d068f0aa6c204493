/* Event loop: ordering rules, and the same scenario on the real and the virtual clock. */
#include "common/buf.h"
#include "common/loop.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

typedef struct scenario {
    sg_buf log;
    int pipefd[2];
    uint64_t d_id;
    int64_t t0;
    int64_t times[16]; /* loop time of each step, relative to t0 */
    int n;
} scenario;

static scenario *S;

static void note(sg_loop *l, const char *what) {
    sg_buf_printf(&S->log, "%s ", what);
    S->times[S->n++] = sg_loop_now(l) - S->t0;
}

static void cb_x(sg_loop *l, void *a) { note(l, "X"); }
static void cb_d(sg_loop *l, void *a) { note(l, "D"); }
static void cb_e(sg_loop *l, void *a) { note(l, "E"); }
static void cb_f(sg_loop *l, void *a) { note(l, "F"); }
static void cb_c(sg_loop *l, void *a) { note(l, "C"); }
static void cb_a(sg_loop *l, void *a) {
    note(l, "A");
    sg_loop_timer(l, 0, cb_f, NULL);
}
static void cb_b(sg_loop *l, void *a) {
    note(l, "B");
    assert_int_equal(write(S->pipefd[1], "x", 1), 1);
    sg_loop_timer_cancel(l, S->d_id);
    sg_loop_defer(l, cb_x, NULL);
}
static void on_pipe(sg_loop *l, int fd, unsigned ev, void *a) {
    char c;
    assert_true(ev & SG_EV_READ);
    assert_int_equal(read(fd, &c, 1), 1);
    note(l, "fd");
    sg_loop_fd_unwatch(l, fd);
    sg_loop_timer(l, 5 * SG_MS, cb_e, NULL);
}

static void run_scenario(sg_loop *l, scenario *s) {
    memset(s, 0, sizeof *s);
    S = s;
    assert_int_equal(pipe(s->pipefd), 0);
    s->t0 = sg_loop_now(l);
    sg_loop_timer(l, 30 * SG_MS, cb_a, NULL);
    sg_loop_timer(l, 10 * SG_MS, cb_b, NULL);
    sg_loop_timer(l, 10 * SG_MS, cb_c, NULL);
    s->d_id = sg_loop_timer(l, 20 * SG_MS, cb_d, NULL);
    sg_err err;
    assert_int_equal(sg_loop_fd_watch(l, s->pipefd[0], SG_EV_READ, on_pipe, NULL, &err), 0);
    assert_int_equal(sg_loop_run(l, &err), 0);
    close(s->pipefd[0]);
    close(s->pipefd[1]);
}

static void test_same_order_real_and_virtual(void **state) {
    sg_err err;
    scenario real, virt;
    sg_loop *lr = sg_loop_new_real(&err);
    sg_loop *lv = sg_loop_new_virtual(1000 * SG_SEC, &err);
    assert_non_null(lr);
    assert_non_null(lv);
    run_scenario(lr, &real);
    run_scenario(lv, &virt);
    assert_string_equal(virt.log.data, "B X C fd E A F ");
    assert_string_equal(real.log.data, virt.log.data);
    /* Virtual time is exact; real time never runs early. */
    int64_t want[] = {10, 10, 10, 10, 15, 30, 30};
    for (int i = 0; i < 7; i++) {
        assert_int_equal(virt.times[i], want[i] * SG_MS);
        assert_true(real.times[i] >= want[i] * SG_MS);
    }
    sg_buf_free(&real.log);
    sg_buf_free(&virt.log);
    sg_loop_free(lr);
    sg_loop_free(lv);
}

static int64_t order_log[1000];
static int order_n;
static void cb_record(sg_loop *l, void *a) { order_log[order_n++] = (int64_t)(intptr_t)a; }

static void test_virtual_orders_by_deadline_then_creation(void **state) {
    sg_err err;
    sg_loop *l = sg_loop_new_virtual(0, &err);
    order_n = 0;
    srand(7);
    int64_t when[1000];
    for (int i = 0; i < 1000; i++) {
        when[i] = (rand() % 50) * SG_MS;
        sg_loop_timer(l, when[i], cb_record, (void *)(intptr_t)i);
    }
    assert_int_equal(sg_loop_run(l, &err), 0);
    assert_int_equal(order_n, 1000);
    for (int i = 1; i < 1000; i++) {
        int64_t a = order_log[i - 1], b = order_log[i];
        assert_true(when[a] < when[b] || (when[a] == when[b] && a < b));
    }
    assert_int_equal(sg_loop_now(l), 49 * SG_MS);
    sg_loop_free(l);
}

static void cb_stop(sg_loop *l, void *a) { sg_loop_stop(l); }

static void test_stop_and_cancel(void **state) {
    sg_err err;
    sg_loop *l = sg_loop_new_virtual(0, &err);
    order_n = 0;
    sg_loop_timer(l, 1 * SG_SEC, cb_record, (void *)1);
    uint64_t id = sg_loop_timer(l, 2 * SG_SEC, cb_record, (void *)2);
    sg_loop_timer(l, 3 * SG_SEC, cb_stop, NULL);
    sg_loop_timer(l, 4 * SG_SEC, cb_record, (void *)4);
    sg_loop_timer_cancel(l, id);
    sg_loop_timer_cancel(l, id);   /* twice: harmless */
    sg_loop_timer_cancel(l, 9999); /* unknown: harmless */
    assert_int_equal(sg_loop_pending_timers(l), 3);
    assert_int_equal(sg_loop_run(l, &err), 0);
    assert_int_equal(order_n, 1);
    assert_int_equal(sg_loop_now(l), 3 * SG_SEC);
    /* Running again resumes with what is left. */
    assert_int_equal(sg_loop_run(l, &err), 0);
    assert_int_equal(order_n, 2);
    assert_int_equal(order_log[1], 4);
    sg_loop_free(l);
}

static void test_stale_id_does_not_cancel_a_reused_slot(void **state) {
    sg_err err;
    sg_loop *l = sg_loop_new_virtual(0, &err);
    order_n = 0;
    uint64_t old = sg_loop_timer(l, 1, cb_record, (void *)1);
    assert_int_equal(sg_loop_run(l, &err), 0); /* old has run; its slot is free */
    uint64_t fresh = sg_loop_timer(l, 1, cb_record, (void *)2);
    assert_true(fresh != old);
    sg_loop_timer_cancel(l, old);
    assert_int_equal(sg_loop_pending_timers(l), 1);
    assert_int_equal(sg_loop_run(l, &err), 0);
    assert_int_equal(order_n, 2);
    sg_loop_free(l);
}

static void cb_chain(sg_loop *l, void *a) {
    intptr_t n = (intptr_t)a;
    order_log[order_n++] = n;
    if (n < 5) sg_loop_timer(l, 0, cb_chain, (void *)(n + 1));
}

static void test_zero_delay_timers_do_not_starve(void **state) {
    /* A timer that re-arms itself with delay 0 runs once per batch, so others due at the
     * same time still run in creation order. */
    sg_err err;
    sg_loop *l = sg_loop_new_virtual(0, &err);
    order_n = 0;
    sg_loop_timer(l, 0, cb_chain, (void *)1);
    sg_loop_timer(l, 0, cb_record, (void *)100);
    assert_int_equal(sg_loop_run(l, &err), 0);
    int64_t want[] = {1, 100, 2, 3, 4, 5};
    assert_int_equal(order_n, 6);
    for (int i = 0; i < 6; i++) assert_int_equal(order_log[i], want[i]);
    sg_loop_free(l);
}

static void *poster(void *arg) {
    sg_loop *l = arg;
    usleep(20000);
    sg_loop_wake(l, cb_stop, NULL);
    return NULL;
}

static void test_wake_from_another_thread(void **state) {
    sg_err err;
    sg_loop *l = sg_loop_new_real(&err);
    /* A far timer keeps the loop alive; the wake must stop it long before. */
    sg_loop_timer(l, 10 * SG_SEC, cb_record, (void *)1);
    order_n = 0;
    pthread_t t;
    pthread_create(&t, NULL, poster, l);
    int64_t start = sg_loop_now(l);
    assert_int_equal(sg_loop_run(l, &err), 0);
    pthread_join(t, NULL);
    assert_int_equal(order_n, 0);
    assert_true(sg_loop_now(l) - start < 5 * SG_SEC);
    sg_loop_free(l);
}

static void cb_record_unref(sg_loop *l, void *a) {
    cb_record(l, a);
    sg_loop_unref(l);
}

static void *late_poster(void *arg) {
    usleep(30000);
    sg_loop_wake(arg, cb_record_unref, (void *)77);
    return NULL;
}

static void test_ref_keeps_loop_for_thread_work(void **state) {
    sg_err err;
    for (int v = 0; v < 2; v++) {
        sg_loop *l = v ? sg_loop_new_virtual(0, &err) : sg_loop_new_real(&err);
        order_n = 0;
        sg_loop_ref(l); /* nothing else pending: without the ref, run() would return at once */
        pthread_t t;
        pthread_create(&t, NULL, late_poster, l);
        assert_int_equal(sg_loop_run(l, &err), 0);
        pthread_join(t, NULL);
        assert_int_equal(order_n, 1);
        assert_int_equal(order_log[0], 77);
        sg_loop_free(l);
    }
}

static void on_closed_writer(sg_loop *l, int fd, unsigned ev, void *a) {
    *(unsigned *)a = ev;
    sg_loop_fd_unwatch(l, fd);
}

static void test_hangup_is_reported(void **state) {
    sg_err err;
    sg_loop *l = sg_loop_new_real(&err);
    int p[2];
    assert_int_equal(pipe(p), 0);
    close(p[1]);
    unsigned got = 0;
    assert_int_equal(sg_loop_fd_watch(l, p[0], SG_EV_READ, on_closed_writer, &got, &err), 0);
    assert_int_equal(sg_loop_run(l, &err), 0);
    assert_true(got & SG_EV_HUP);
    close(p[0]);
    sg_loop_free(l);
}

/* Wake batching: the second readiness of a busy pipe waits out the window after the wake
 * that served the first; a timer inside the window still runs on time. Without a window
 * the pipe is served at once. */
typedef struct batch_case {
    int fd[2];
    int64_t t_fd[2], t_timer;
    int nfd;
} batch_case;

static void batch_timer(sg_loop *l, void *a) { ((batch_case *)a)->t_timer = sg_loop_now(l); }

static void batch_fd(sg_loop *l, int fd, unsigned ev, void *a) {
    batch_case *b = a;
    char c;
    assert_int_equal(read(fd, &c, 1), 1);
    b->t_fd[b->nfd++] = sg_loop_now(l);
    if (b->nfd == 1) {
        assert_int_equal(write(b->fd[1], "y", 1), 1); /* ready again at once */
        sg_loop_timer(l, 5 * SG_MS, batch_timer, b);
    } else {
        sg_loop_fd_unwatch(l, fd);
    }
}

static void batch_run(int64_t batch, batch_case *b) {
    sg_err err;
    sg_loop *l = sg_loop_new_real(&err);
    memset(b, 0, sizeof *b);
    assert_int_equal(pipe(b->fd), 0);
    sg_loop_set_batch(l, batch);
    assert_int_equal(sg_loop_fd_watch(l, b->fd[0], SG_EV_READ, batch_fd, b, &err), 0);
    assert_int_equal(write(b->fd[1], "x", 1), 1);
    int64_t t0 = sg_loop_now(l);
    assert_int_equal(sg_loop_run(l, &err), 0);
    for (int i = 0; i < 2; i++) b->t_fd[i] -= t0;
    b->t_timer -= t0;
    close(b->fd[0]);
    close(b->fd[1]);
    sg_loop_free(l);
}

static void test_wake_batch(void **state) {
    batch_case b;
    batch_run(200 * SG_MS, &b);
    assert_int_equal(b.nfd, 2);
    assert_true(b.t_fd[0] < 100 * SG_MS);              /* an idle loop wakes at once */
    assert_true(b.t_fd[1] >= b.t_fd[0] + 190 * SG_MS); /* the window (the wake began earlier) */
    assert_true(b.t_timer >= 5 * SG_MS && b.t_timer < b.t_fd[1]); /* not held by the window */
    batch_run(0, &b);
    assert_int_equal(b.nfd, 2);
    assert_true(b.t_fd[1] < b.t_timer); /* no window: the pipe before the 5 ms timer */
}

static void test_watch_bad_fd_fails_with_message(void **state) {
    sg_err err = {{0}};
    sg_loop *l = sg_loop_new_real(&err);
    assert_int_equal(sg_loop_fd_watch(l, 12345, SG_EV_READ, on_closed_writer, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "fd 12345"));
    sg_loop_free(l);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_order_real_and_virtual),
        cmocka_unit_test(test_virtual_orders_by_deadline_then_creation),
        cmocka_unit_test(test_stop_and_cancel),
        cmocka_unit_test(test_zero_delay_timers_do_not_starve),
        cmocka_unit_test(test_stale_id_does_not_cancel_a_reused_slot),
        cmocka_unit_test(test_wake_from_another_thread),
        cmocka_unit_test(test_hangup_is_reported),
        cmocka_unit_test(test_ref_keeps_loop_for_thread_work),
        cmocka_unit_test(test_watch_bad_fd_fails_with_message),
        cmocka_unit_test(test_wake_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
