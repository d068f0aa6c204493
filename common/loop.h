/* loop.h — the one event loop: timers, fd readiness, deferred callbacks, and now().
 *
 * Contract
 * - Two clocks behind one API. The real loop reads CLOCK_MONOTONIC and sleeps in
 *   epoll_wait on a timerfd. The virtual loop never sleeps: when no fd is ready and no
 *   deferred callback is pending, time jumps to the earliest timer. Policy code gets
 *   time only from sg_loop_now(), so it runs unchanged in both.
 * - Order, identical in both clocks (the tests show it):
 *     1. deferred callbacks, FIFO, drained after every other callback;
 *     2. ready fds, in the order they were first watched;
 *     3. the timers due when the batch starts, by (deadline, creation order); on the
 *        virtual clock that is the earliest deadline, since time jumps to it. Then
 *        the loop looks at fds again before the next batch.
 *   A timer never runs before its deadline; timers created during a batch wait for the
 *   next batch even when already due.
 * - The virtual loop still polls real fds (without blocking while timers are pending),
 *   so a scenario whose fds become ready because of its own callbacks (a pipe written
 *   by a timer) behaves the same on both clocks. Network I/O that depends on outside
 *   timing belongs on the real clock.
 * - Single-threaded: every function must be called from the loop's thread, except
 *   sg_loop_wake(), which any thread may call to make the loop run its deferred queue.
 * - Callbacks may add or cancel timers, watch or unwatch fds (including the fd being
 *   dispatched) and stop the loop. IDs are never reused; cancelling a timer that has
 *   run or was cancelled is a harmless no-op. */
#ifndef SG_LOOP_H
#define SG_LOOP_H

#include "common/err.h"

#include <stdint.h>

typedef struct sg_loop sg_loop;

typedef void (*sg_timer_fn)(sg_loop *loop, void *arg);
typedef void (*sg_fd_fn)(sg_loop *loop, int fd, unsigned events, void *arg);

enum { SG_EV_READ = 1u, SG_EV_WRITE = 2u, SG_EV_ERROR = 4u, SG_EV_HUP = 8u };

#define SG_MS (1000000LL)
#define SG_SEC (1000000000LL)

/* Create a loop. start_ns is the virtual clock's initial time (ignored for real). */
sg_loop *sg_loop_new_real(sg_err *err);
sg_loop *sg_loop_new_virtual(int64_t start_ns, sg_err *err);
void sg_loop_free(sg_loop *loop);

/* Monotonic nanoseconds: real CLOCK_MONOTONIC, or the virtual time. */
int64_t sg_loop_now(const sg_loop *loop);
/* The loop's cached time, without reading the clock: on the real loop, when it last woke
 * (epoll_wait returned, or its fd callbacks ended before the due timers ran), so it lags
 * sg_loop_now() by the callbacks run since; the virtual time on the virtual loop. For
 * per-event stamps that need no better (an idle watchdog's last byte). */
int64_t sg_loop_time(const sg_loop *loop);

/* Run fn once after delay_ns (0: at the next timer batch). Returns an id > 0. */
uint64_t sg_loop_timer(sg_loop *loop, int64_t delay_ns, sg_timer_fn fn, void *arg);
/* Same, at an absolute loop time. */
uint64_t sg_loop_timer_at(sg_loop *loop, int64_t when_ns, sg_timer_fn fn, void *arg);
void sg_loop_timer_cancel(sg_loop *loop, uint64_t id);
size_t sg_loop_pending_timers(const sg_loop *loop);

/* Run fn right after the current callback returns (FIFO). */
void sg_loop_defer(sg_loop *loop, sg_timer_fn fn, void *arg);
/* Thread-safe: wake the loop; `fn(arg)` runs on the loop thread as a deferred call. */
int sg_loop_wake(sg_loop *loop, sg_timer_fn fn, void *arg);

/* Watch fd for events (SG_EV_READ | SG_EV_WRITE; errors and hang-ups are always
 * reported). Watching an fd again replaces its events, callback and arg. */
int sg_loop_fd_watch(sg_loop *loop, int fd, unsigned events, sg_fd_fn fn, void *arg, sg_err *err);
void sg_loop_fd_unwatch(sg_loop *loop, int fd);

/* Work done outside the loop (a thread that will call sg_loop_wake) keeps the loop
 * running: every sg_loop_ref needs one sg_loop_unref, from the loop thread. */
void sg_loop_ref(sg_loop *loop);
void sg_loop_unref(sg_loop *loop);

/* Run until sg_loop_stop() or until nothing is left (no timers, fds, deferred callbacks
 * or refs). Returns 0, or -1 when waiting failed (message in err). */
int sg_loop_run(sg_loop *loop, sg_err *err);
/* Real loop: run fd callbacks in wakes at least ns apart (the loop sleeps out the rest
 * of the window after a wake that ran some), so that one wake serves every socket that
 * became ready meanwhile: fewer wakes per event when busy, for up to ns of added delay to
 * an fd's callback; an idle loop still wakes at once. Timers run on time (the sleep ends
 * at the earliest deadline); a thread's sg_loop_wake may wait up to ns. 0 (the default):
 * no window. */
void sg_loop_set_batch(sg_loop *loop, int64_t ns);
void sg_loop_stop(sg_loop *loop);

#endif
