/* loop.c — the event loop behind loop.h: a binary heap of timers, a FIFO of deferred
 * callbacks, an fd table over epoll, and two clocks (real, virtual). */
#include "common/loop.h"

#include "common/assert.h"
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

/* Timers live in slots (reused through a free list); the heap orders slot numbers by
 * (when, seq), and each slot remembers its heap position so cancel is O(log n).
 * A timer id is (generation << 32 | slot + 1): a stale id never matches a reused slot. */
typedef struct timer {
    int64_t when;
    uint64_t seq; /* creation order: ties at one deadline run in it */
    sg_timer_fn fn;
    void *arg;
    uint32_t gen;
    uint32_t heap_pos; /* UINT32_MAX: free */
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
    int64_t seen_ns;  /* real: the clock when the loop last woke (sg_loop_time) */
    int running;      /* inside sg_loop_run: seen_ns is kept */
    int64_t batch_ns; /* real: the least time between two wakes that ran fds (0: none) */
    int64_t fd_wake;  /* real: when the last wake that ran fds began */
    int64_t armed_ns; /* real: the deadline the timerfd is armed for; INT64_MIN: none */
    int stop;
    int epfd, tfd, wakefd;
    uint64_t next_seq, next_id, next_order;

    timer *slots;
    uint32_t nslots, capslots;
    uint32_t *free_list;
    uint32_t nfree;
    uint32_t *heap; /* slot numbers, min-heap on (when, seq) */
    uint32_t nheap;

    deferred *dq; /* ring buffer */
    size_t dq_head, dq_len, dq_cap;

    fd_watch *fds;
    size_t nfds_cap;
    size_t nwatched;
    int refs; /* outside work still to report through sg_loop_wake */

    pthread_mutex_t wake_mu;
    int wake_pending; /* set by other threads; lets the virtual loop skip epoll */
    deferred *wq;
    size_t wq_len, wq_cap;
};

/* ---- clock ---- */

static int64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * SG_SEC + ts.tv_nsec;
}

int64_t sg_loop_now(const sg_loop *loop) { return loop->is_virtual ? loop->vnow : mono_ns(); }

int64_t sg_loop_time(const sg_loop *loop) {
    if (loop->is_virtual) return loop->vnow;
    return loop->running ? loop->seen_ns : mono_ns();
}

/* ---- construction ---- */

static sg_loop *loop_new(int is_virtual, int64_t start, sg_err *err) {
    sg_loop *l = sg_xcalloc(1, sizeof *l);
    l->is_virtual = is_virtual;
    l->vnow = start;
    l->next_id = 1;
    l->next_order = 1;
    l->tfd = -1;
    l->wakefd = -1;
    l->armed_ns = INT64_MIN;
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
    free(l->slots);
    free(l->free_list);
    free(l->dq);
    free(l->fds);
    free(l->wq);
    free(l);
}

/* ---- timers ---- */

static int timer_before(const sg_loop *l, uint32_t a, uint32_t b) {
    const timer *x = &l->slots[a], *y = &l->slots[b];
    return x->when < y->when || (x->when == y->when && x->seq < y->seq);
}

static void heap_set(sg_loop *l, uint32_t pos, uint32_t slot) {
    l->heap[pos] = slot;
    l->slots[slot].heap_pos = pos;
}

static void sift_up(sg_loop *l, uint32_t i) {
    uint32_t slot = l->heap[i];
    while (i > 0 && timer_before(l, slot, l->heap[(i - 1) / 2])) {
        heap_set(l, i, l->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_set(l, i, slot);
}

static void sift_down(sg_loop *l, uint32_t i) {
    uint32_t slot = l->heap[i];
    for (;;) {
        uint32_t a = 2 * i + 1, b = a + 1, m = i;
        uint32_t ms = slot;
        if (a < l->nheap && timer_before(l, l->heap[a], ms)) m = a, ms = l->heap[a];
        if (b < l->nheap && timer_before(l, l->heap[b], ms)) m = b, ms = l->heap[b];
        if (m == i) break;
        heap_set(l, i, ms);
        i = m;
    }
    heap_set(l, i, slot);
}

/* The heap order holds around position i (O(1): its parent and its two children), and
 * the slot there knows its position. */
static int heap_ok_at(const sg_loop *l, uint32_t i) {
    uint32_t slot = l->heap[i], a = 2 * i + 1, b = a + 1;
    return l->slots[slot].heap_pos == i &&
           (i == 0 || !timer_before(l, slot, l->heap[(i - 1) / 2])) &&
           (a >= l->nheap || !timer_before(l, l->heap[a], slot)) &&
           (b >= l->nheap || !timer_before(l, l->heap[b], slot));
}

/* Take slot out of the heap and put it on the free list. */
static void heap_remove(sg_loop *l, uint32_t slot) {
    uint32_t pos = l->slots[slot].heap_pos;
    SG_ASSERT(l->nheap > 0 && pos < l->nheap && l->heap[pos] == slot);
    uint32_t last = l->heap[--l->nheap];
    if (pos != l->nheap) {
        heap_set(l, pos, last);
        sift_down(l, pos);
        sift_up(l, l->slots[last].heap_pos);
        SG_ASSERT(heap_ok_at(l, l->slots[last].heap_pos));
    }
    SG_ASSERT(l->nfree < l->nslots);
    l->slots[slot].heap_pos = UINT32_MAX;
    l->slots[slot].gen++;
    l->free_list[l->nfree++] = slot;
}

uint64_t sg_loop_timer_at(sg_loop *l, int64_t when, sg_timer_fn fn, void *arg) {
    uint32_t slot;
    if (l->nfree) {
        slot = l->free_list[--l->nfree];
    } else {
        if (l->nslots == l->capslots) {
            l->capslots = l->capslots ? l->capslots * 2 : 64;
            l->slots = sg_xrealloc(l->slots, l->capslots * sizeof *l->slots);
            l->heap = sg_xrealloc(l->heap, l->capslots * sizeof *l->heap);
            l->free_list = sg_xrealloc(l->free_list, l->capslots * sizeof *l->free_list);
        }
        slot = l->nslots++;
        l->slots[slot].gen = 1;
    }
    timer *t = &l->slots[slot];
    t->when = when;
    t->seq = l->next_seq++;
    t->fn = fn;
    t->arg = arg;
    SG_ASSERT(l->nheap < l->nslots && l->nslots <= l->capslots);
    l->heap[l->nheap] = slot;
    t->heap_pos = l->nheap++;
    sift_up(l, t->heap_pos);
    SG_ASSERT(heap_ok_at(l, t->heap_pos));
    return ((uint64_t)t->gen << 32) | (slot + 1);
}

uint64_t sg_loop_timer(sg_loop *l, int64_t delay_ns, sg_timer_fn fn, void *arg) {
    if (delay_ns < 0) delay_ns = 0;
    return sg_loop_timer_at(l, sg_loop_now(l) + delay_ns, fn, arg);
}

void sg_loop_timer_cancel(sg_loop *l, uint64_t id) {
    uint32_t slot = (uint32_t)(id & 0xffffffffu) - 1, gen = (uint32_t)(id >> 32);
    if (id == 0 || slot >= l->nslots) return;
    if (l->slots[slot].gen != gen || l->slots[slot].heap_pos == UINT32_MAX) return;
    heap_remove(l, slot);
}

size_t sg_loop_pending_timers(const sg_loop *l) { return l->nheap; }

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
    __atomic_store_n(&l->wake_pending, 1, __ATOMIC_RELEASE);
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
    __atomic_store_n(&l->wake_pending, 0, __ATOMIC_RELEASE);
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
    enum { BATCH = 512 }; /* every socket of 256 streams and their forks in one wake */
    struct epoll_event evs[BATCH];
    int n;
    do n = epoll_wait(l->epfd, evs, BATCH, timeout_ms);
    while (n < 0 && errno == EINTR && !l->stop);
    if (n < 0) return errno == EINTR ? 0 : sg_errf(err, "epoll_wait: %s", strerror(errno));
    if (!l->is_virtual) l->seen_ns = mono_ns(); /* one clock read a wake (sg_loop_time) */
    ready rs[BATCH];
    int nr = 0;
    for (int i = 0; i < n; i++) {
        int fd = evs[i].data.fd;
        if (fd == l->tfd) {
            uint64_t expirations;
            if (read(l->tfd, &expirations, sizeof expirations) < 0) { /* EAGAIN */
            }
            *timer_fired = 1;
            l->armed_ns = INT64_MIN; /* one-shot: it is disarmed now */
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
    while (!l->stop && l->nheap) {
        uint32_t slot = l->heap[0];
        timer t = l->slots[slot];
        SG_ASSERT(heap_ok_at(l, 0)); /* the root is the earliest timer */
        if (t.when > now || t.seq >= seq_limit) break;
        heap_remove(l, slot);
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

/* One round of the real loop: sleep until an fd is ready or the earliest timer is due,
 * dispatch, run the due timers. The timerfd is re-armed only when the earliest deadline
 * changed, and the clock is read once a wake (twice when fds ran before the timers). */
static int run_real_once(sg_loop *l, int have_timers, sg_err *err) {
    int timeout = -1, fired = 0;
    int64_t next = have_timers ? l->slots[l->heap[0]].when : INT64_MAX;
    int64_t window = l->batch_ns ? l->fd_wake + l->batch_ns : 0;
    if (window > l->seen_ns) { /* fds ran lately: let the window fill before looking again */
        int64_t until = window < next ? window : next;
        struct timespec ts = {until / SG_SEC, until % SG_SEC};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !l->stop) {}
        l->seen_ns = mono_ns();
        if (l->seen_ns < window) { /* a timer inside the window: it alone runs now */
            run_timer_batch(l, l->seen_ns);
            return 0;
        }
    }
    if (have_timers) {
        if (next <= l->seen_ns) {
            timeout = 0;
        } else if (next != l->armed_ns) {
            if (arm_timerfd(l, next) < 0)
                return sg_errf(err, "timerfd_settime: %s", strerror(errno));
            l->armed_ns = next;
        }
    }
    int n = poll_fds(l, timeout, &fired, err);
    if (n < 0) return -1;
    if (n > 0) l->fd_wake = l->seen_ns;
    if (l->stop) return 0;
    if (n > 0) l->seen_ns = mono_ns(); /* the fds' callbacks took time */
    run_timer_batch(l, l->seen_ns);
    return 0;
}

static int loop_run(sg_loop *l, sg_err *err) {
    l->stop = 0;
    while (!l->stop) {
        run_deferred(l);
        if (l->stop) break;
        int have_timers = l->nheap > 0;
        if (!have_timers && !l->nwatched && !l->dq_len && !l->refs) break; /* nothing left */
        int fired = 0;
        if (l->is_virtual) {
            int n = 0;
            if (l->nwatched || (l->refs && !have_timers))
                n = poll_fds(l, have_timers ? 0 : -1, &fired, err);
            else if (__atomic_load_n(&l->wake_pending, __ATOMIC_ACQUIRE))
                drain_wakes(l);
            if (n < 0) return -1;
            if (n > 0 || l->dq_len || l->stop || !l->nheap) continue;
            int64_t next = l->slots[l->heap[0]].when;
            if (next > l->vnow) l->vnow = next;
            run_timer_batch(l, l->vnow);
        } else if (run_real_once(l, have_timers, err) < 0) {
            return -1;
        }
    }
    return 0;
}

int sg_loop_run(sg_loop *l, sg_err *err) {
    int was = l->running;
    if (!l->is_virtual) l->seen_ns = mono_ns();
    l->running = 1;
    int rc = loop_run(l, err);
    l->running = was;
    return rc;
}

void sg_loop_set_batch(sg_loop *l, int64_t ns) { l->batch_ns = ns > 0 ? ns : 0; }

void sg_loop_stop(sg_loop *l) { l->stop = 1; }

void sg_loop_ref(sg_loop *l) { l->refs++; }

void sg_loop_unref(sg_loop *l) {
    if (l->refs > 0) l->refs--;
}
