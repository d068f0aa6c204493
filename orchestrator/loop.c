/* loop.c — the event loop behind loop.h: a binary heap of timers, a FIFO of deferred
 * callbacks, an fd table over epoll, and two clocks (real, virtual). */
#include "orchestrator/loop.h"

#include "common/buf.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

typedef struct timer {
    int64_t when;
    uint64_t seq; /* creation order: ties at one deadline run in it */
    uint64_t id;
    sg_timer_fn fn;
    void *arg;
} timer;

typedef struct deferred {
    sg_timer_fn fn;
    void *arg;
} deferred;

typedef struct fd_watch {
    sg_fd_fn fn;
    void *arg;
    unsigned events;
    uint64_t order; /* 0: not watched; otherwise when it was first watched */
} fd_watch;

struct sg_loop {
    int is_virtual;
    int64_t vnow;
    int stop;
    int epfd, tfd, wakefd;
    uint64_t next_seq, next_id, next_order;

    timer *heap; /* min-heap on (when, seq) */
    size_t nheap, capheap;
    /* A cancelled timer stays in the heap with fn == NULL until it reaches the top. */
    size_t ncancelled;

    deferred *dq; /* ring buffer */
    size_t dq_head, dq_len, dq_cap;

    fd_watch *fds;
    size_t nfds_cap;
    size_t nwatched;

    pthread_mutex_t wake_mu;
    deferred *wq;
    size_t wq_len, wq_cap;
};

/* ---- clock ---- */

static int64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * SG_SEC + ts.tv_nsec;
}

int sg_loop_is_virtual(const sg_loop *loop) { return loop->is_virtual; }

int64_t sg_loop_now(const sg_loop *loop) { return loop->is_virtual ? loop->vnow : mono_ns(); }

/* ---- construction ---- */

static sg_loop *loop_new(int is_virtual, int64_t start, sg_err *err) {
    sg_loop *l = sg_xcalloc(1, sizeof *l);
    l->is_virtual = is_virtual;
    l->vnow = start;
    l->next_id = 1;
    l->next_order = 1;
    l->tfd = -1;
    l->wakefd = -1;
    pthread_mutex_init(&l->wake_mu, NULL);
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (l->epfd < 0) goto fail;
    if (!is_virtual) {
        l->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        if (l->tfd < 0) goto fail;
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = l->tfd};
        if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->tfd, &ev) < 0) goto fail;
    }
    l->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (l->wakefd < 0) goto fail;
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = l->wakefd};
    if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->wakefd, &ev) < 0) goto fail;
    return l;
fail:
    sg_errf(err, "cannot create the event loop: %s", strerror(errno));
    sg_loop_free(l);
    return NULL;
}

sg_loop *sg_loop_new_real(sg_err *err) { return loop_new(0, 0, err); }

sg_loop *sg_loop_new_virtual(int64_t start_ns, sg_err *err) { return loop_new(1, start_ns, err); }

void sg_loop_free(sg_loop *l) {
    if (!l) return;
    if (l->epfd >= 0) close(l->epfd);
    if (l->tfd >= 0) close(l->tfd);
    if (l->wakefd >= 0) close(l->wakefd);
    pthread_mutex_destroy(&l->wake_mu);
    free(l->heap);
    free(l->dq);
    free(l->fds);
    free(l->wq);
    free(l);
}

/* ---- timers ---- */

static int timer_before(const timer *a, const timer *b) {
    return a->when < b->when || (a->when == b->when && a->seq < b->seq);
}

static void heap_swap(timer *h, size_t i, size_t j) {
    timer t = h[i];
    h[i] = h[j];
    h[j] = t;
}

static void heap_push(sg_loop *l, timer t) {
    if (l->nheap == l->capheap) {
        l->capheap = l->capheap ? l->capheap * 2 : 64;
        l->heap = sg_xrealloc(l->heap, l->capheap * sizeof *l->heap);
    }
    size_t i = l->nheap++;
    l->heap[i] = t;
    while (i > 0 && timer_before(&l->heap[i], &l->heap[(i - 1) / 2])) {
        heap_swap(l->heap, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static timer heap_pop(sg_loop *l) {
    timer top = l->heap[0];
    l->heap[0] = l->heap[--l->nheap];
    size_t i = 0;
    for (;;) {
        size_t a = 2 * i + 1, b = a + 1, m = i;
        if (a < l->nheap && timer_before(&l->heap[a], &l->heap[m])) m = a;
        if (b < l->nheap && timer_before(&l->heap[b], &l->heap[m])) m = b;
        if (m == i) break;
        heap_swap(l->heap, i, m);
        i = m;
    }
    return top;
}

/* Drop cancelled timers sitting at the top so the top is a live one (or none). */
static void heap_skip_cancelled(sg_loop *l) {
    while (l->nheap && !l->heap[0].fn) {
        heap_pop(l);
        l->ncancelled--;
    }
}

uint64_t sg_loop_timer_at(sg_loop *l, int64_t when, sg_timer_fn fn, void *arg) {
    timer t = {.when = when, .seq = l->next_seq++, .id = l->next_id++, .fn = fn, .arg = arg};
    heap_push(l, t);
    return t.id;
}

uint64_t sg_loop_timer(sg_loop *l, int64_t delay_ns, sg_timer_fn fn, void *arg) {
    if (delay_ns < 0) delay_ns = 0;
    return sg_loop_timer_at(l, sg_loop_now(l) + delay_ns, fn, arg);
}

void sg_loop_timer_cancel(sg_loop *l, uint64_t id) {
    /* A linear scan: cancels are rare next to timer runs (curl re-arms one timer). */
    for (size_t i = 0; id && i < l->nheap; i++) {
        if (l->heap[i].id == id) {
            if (l->heap[i].fn) l->ncancelled++;
            l->heap[i].fn = NULL;
            return;
        }
    }
}

size_t sg_loop_pending_timers(const sg_loop *l) { return l->nheap - l->ncancelled; }

/* ---- deferred callbacks ---- */

void sg_loop_defer(sg_loop *l, sg_timer_fn fn, void *arg) {
    if (l->dq_len == l->dq_cap) {
        size_t cap = l->dq_cap ? l->dq_cap * 2 : 16;
        deferred *q = sg_xmalloc(cap * sizeof *q);
        for (size_t i = 0; i < l->dq_len; i++) q[i] = l->dq[(l->dq_head + i) % l->dq_cap];
        free(l->dq);
        l->dq = q;
        l->dq_cap = cap;
        l->dq_head = 0;
    }
    l->dq[(l->dq_head + l->dq_len++) % l->dq_cap] = (deferred){fn, arg};
}

static void run_deferred(sg_loop *l) {
    while (l->dq_len && !l->stop) {
        deferred d = l->dq[l->dq_head];
        l->dq_head = (l->dq_head + 1) % l->dq_cap;
        l->dq_len--;
        d.fn(l, d.arg);
    }
}

int sg_loop_wake(sg_loop *l, sg_timer_fn fn, void *arg) {
    pthread_mutex_lock(&l->wake_mu);
    if (l->wq_len == l->wq_cap) {
        l->wq_cap = l->wq_cap ? l->wq_cap * 2 : 16;
        l->wq = sg_xrealloc(l->wq, l->wq_cap * sizeof *l->wq);
    }
    l->wq[l->wq_len++] = (deferred){fn, arg};
    pthread_mutex_unlock(&l->wake_mu);
    uint64_t one = 1;
    return write(l->wakefd, &one, sizeof one) == sizeof one ? 0 : -1;
}

/* Move what other threads posted into the deferred queue. */
static void drain_wakes(sg_loop *l) {
    uint64_t n;
    if (read(l->wakefd, &n, sizeof n) < 0) { /* EAGAIN: nothing new */
    }
    pthread_mutex_lock(&l->wake_mu);
    deferred *q = l->wq;
    size_t len = l->wq_len;
    l->wq = NULL;
    l->wq_len = l->wq_cap = 0;
    pthread_mutex_unlock(&l->wake_mu);
    for (size_t i = 0; i < len; i++) sg_loop_defer(l, q[i].fn, q[i].arg);
    free(q);
}

/* ---- fds ---- */

static uint32_t to_epoll(unsigned ev) {
    return ((ev & SG_EV_READ) ? EPOLLIN : 0) | ((ev & SG_EV_WRITE) ? EPOLLOUT : 0);
}

int sg_loop_fd_watch(sg_loop *l, int fd, unsigned events, sg_fd_fn fn, void *arg, sg_err *err) {
    if (fd < 0) return sg_errf(err, "cannot watch fd %d", fd);
    if ((size_t)fd >= l->nfds_cap) {
        size_t cap = l->nfds_cap ? l->nfds_cap : 64;
        while (cap <= (size_t)fd) cap *= 2;
        l->fds = sg_xrealloc(l->fds, cap * sizeof *l->fds);
        memset(l->fds + l->nfds_cap, 0, (cap - l->nfds_cap) * sizeof *l->fds);
        l->nfds_cap = cap;
    }
    fd_watch *w = &l->fds[fd];
    struct epoll_event ev = {.events = to_epoll(events), .data.fd = fd};
    int op = w->order ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (epoll_ctl(l->epfd, op, fd, &ev) < 0)
        return sg_errf(err, "cannot watch fd %d: %s", fd, strerror(errno));
    if (!w->order) {
        w->order = l->next_order++;
        l->nwatched++;
    }
    w->fn = fn;
    w->arg = arg;
    w->events = events;
    return 0;
}

void sg_loop_fd_unwatch(sg_loop *l, int fd) {
    if (fd < 0 || (size_t)fd >= l->nfds_cap || !l->fds[fd].order) return;
    epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL); /* may fail if already closed: fine */
    memset(&l->fds[fd], 0, sizeof l->fds[fd]);
    l->nwatched--;
}

typedef struct ready {
    int fd;
    unsigned events;
    uint64_t order;
} ready;

static int ready_cmp(const void *a, const void *b) {
    const ready *x = a, *y = b;
    return (x->order > y->order) - (x->order < y->order);
}

/* Wait up to timeout_ms for fds; dispatch ready ones in watch order. Returns the
 * number of user fds dispatched, or -1 on error. Sets *timer_fired for the timerfd. */
static int poll_fds(sg_loop *l, int timeout_ms, int *timer_fired, sg_err *err) {
    struct epoll_event evs[256];
    int n;
    do n = epoll_wait(l->epfd, evs, 256, timeout_ms);
    while (n < 0 && errno == EINTR && !l->stop);
    if (n < 0) return errno == EINTR ? 0 : sg_errf(err, "epoll_wait: %s", strerror(errno));
    ready rs[256];
    int nr = 0;
    for (int i = 0; i < n; i++) {
        int fd = evs[i].data.fd;
        if (fd == l->tfd) {
            uint64_t expirations;
            if (read(l->tfd, &expirations, sizeof expirations) < 0) { /* EAGAIN */
            }
            *timer_fired = 1;
        } else if (fd == l->wakefd) {
            drain_wakes(l);
        } else if ((size_t)fd < l->nfds_cap && l->fds[fd].order) {
            unsigned e = 0;
            if (evs[i].events & EPOLLIN) e |= SG_EV_READ;
            if (evs[i].events & EPOLLOUT) e |= SG_EV_WRITE;
            if (evs[i].events & EPOLLERR) e |= SG_EV_ERROR;
            if (evs[i].events & (EPOLLHUP | EPOLLRDHUP)) e |= SG_EV_HUP;
            rs[nr++] = (ready){fd, e, l->fds[fd].order};
        }
    }
    qsort(rs, (size_t)nr, sizeof rs[0], ready_cmp);
    for (int i = 0; i < nr && !l->stop; i++) {
        fd_watch *w = &l->fds[rs[i].fd];
        /* An earlier callback may have unwatched (or re-watched) this fd. */
        if (w->order != rs[i].order) continue;
        w->fn(l, rs[i].fd, rs[i].events, w->arg);
        run_deferred(l);
    }
    return nr;
}

/* Run the timers due at `now`, by (deadline, creation). Timers created during the batch
 * wait for the next one, after the loop has looked at fds again. */
static void run_timer_batch(sg_loop *l, int64_t now) {
    uint64_t seq_limit = l->next_seq;
    while (!l->stop) {
        heap_skip_cancelled(l);
        if (!l->nheap || l->heap[0].when > now || l->heap[0].seq >= seq_limit) break;
        timer t = heap_pop(l);
        t.fn(l, t.arg);
        run_deferred(l);
    }
}

static int arm_timerfd(sg_loop *l, int64_t when) {
    struct itimerspec its = {0};
    if (when > 0) {
        its.it_value.tv_sec = when / SG_SEC;
        its.it_value.tv_nsec = when % SG_SEC;
    } else if (when == 0) {
        its.it_value.tv_nsec = 1; /* already due: fire now (0 would disarm) */
    }
    return timerfd_settime(l->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

int sg_loop_run(sg_loop *l, sg_err *err) {
    l->stop = 0;
    while (!l->stop) {
        run_deferred(l);
        if (l->stop) break;
        heap_skip_cancelled(l);
        int have_timers = l->nheap > 0;
        if (!have_timers && !l->nwatched && !l->dq_len) break; /* nothing left */
        int fired = 0;
        if (l->is_virtual) {
            int n = 0;
            if (l->nwatched)
                n = poll_fds(l, have_timers ? 0 : -1, &fired, err);
            else if (have_timers)
                n = poll_fds(l, 0, &fired, err); /* wakes from threads */
            if (n < 0) return -1;
            if (n > 0 || l->dq_len || l->stop) continue;
            heap_skip_cancelled(l);
            if (!l->nheap) continue;
            if (l->heap[0].when > l->vnow) l->vnow = l->heap[0].when;
            run_timer_batch(l, l->vnow);
        } else {
            int64_t now = mono_ns();
            int timeout = -1;
            if (have_timers) {
                if (l->heap[0].when <= now)
                    timeout = 0;
                else if (arm_timerfd(l, l->heap[0].when) < 0)
                    return sg_errf(err, "timerfd_settime: %s", strerror(errno));
            }
            if (poll_fds(l, timeout, &fired, err) < 0) return -1;
            if (l->stop) break;
            run_timer_batch(l, mono_ns());
        }
    }
    return 0;
}

void sg_loop_stop(sg_loop *l) { l->stop = 1; }
