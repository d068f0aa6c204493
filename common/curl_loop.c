#include "common/curl_loop.h"

#include "common/buf.h"

#include <stdlib.h>
#include <string.h>

/* What we keep per transfer; found again through CURLINFO_PRIVATE. */
typedef struct transfer {
    CURL *easy;
    sg_curl_done_fn done;
    void *arg;
    struct transfer *prev, *next; /* the running list, so free() can detach them all */
} transfer;

struct sg_curl_loop {
    sg_loop *loop;
    CURLM *multi;
    uint64_t timer_id;
    uint64_t kick_id; /* a pending sg_curl_loop_kick_soon */
    size_t running;
    transfer *head;
};

static void unlink_transfer(sg_curl_loop *cl, transfer *t) {
    if (t->prev)
        t->prev->next = t->next;
    else
        cl->head = t->next;
    if (t->next) t->next->prev = t->prev;
    cl->running--;
    free(t);
}

static void check_done(sg_curl_loop *cl) {
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(cl->multi, &left))) {
        if (m->msg != CURLMSG_DONE) continue;
        CURL *easy = m->easy_handle;
        CURLcode rc = m->data.result;
        transfer *t = NULL;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&t);
        curl_multi_remove_handle(cl->multi, easy);
        curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
        if (t) {
            sg_curl_done_fn done = t->done;
            void *arg = t->arg;
            unlink_transfer(cl, t);
            if (done) done(cl, easy, rc, arg);
        }
    }
}

static void on_socket_ready(sg_loop *loop, int fd, unsigned events, void *arg) {
    sg_curl_loop *cl = arg;
    int flags = 0, still;
    if (events & SG_EV_READ) flags |= CURL_CSELECT_IN;
    if (events & SG_EV_WRITE) flags |= CURL_CSELECT_OUT;
    if (events & (SG_EV_ERROR | SG_EV_HUP)) flags |= CURL_CSELECT_ERR;
    curl_multi_socket_action(cl->multi, fd, flags, &still);
    check_done(cl);
}

static void on_timeout(sg_loop *loop, void *arg) {
    sg_curl_loop *cl = arg;
    int still;
    cl->timer_id = 0;
    curl_multi_socket_action(cl->multi, CURL_SOCKET_TIMEOUT, 0, &still);
    check_done(cl);
}

static int socket_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp) {
    sg_curl_loop *cl = userp;
    if (what == CURL_POLL_REMOVE) {
        sg_loop_fd_unwatch(cl->loop, s);
        return 0;
    }
    unsigned ev = 0;
    if (what == CURL_POLL_IN || what == CURL_POLL_INOUT) ev |= SG_EV_READ;
    if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT) ev |= SG_EV_WRITE;
    return sg_loop_fd_watch(cl->loop, s, ev, on_socket_ready, cl, NULL) < 0 ? -1 : 0;
}

static int timer_cb(CURLM *multi, long timeout_ms, void *userp) {
    sg_curl_loop *cl = userp;
    sg_loop_timer_cancel(cl->loop, cl->timer_id);
    cl->timer_id = 0;
    if (timeout_ms >= 0) cl->timer_id = sg_loop_timer(cl->loop, timeout_ms * SG_MS, on_timeout, cl);
    return 0;
}

sg_curl_loop *sg_curl_loop_new(sg_loop *loop, sg_err *err) {
    /* libcurl counts its global initialisations (thread-safe since 7.84): one per loop,
     * never cleaned up, as easy handles may outlive the loop; no flag of ours. */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        sg_errf(err, "curl_global_init failed");
        return NULL;
    }
    sg_curl_loop *cl = sg_xcalloc(1, sizeof *cl);
    cl->loop = loop;
    cl->multi = curl_multi_init();
    if (!cl->multi) {
        free(cl);
        sg_errf(err, "curl_multi_init failed");
        return NULL;
    }
    curl_multi_setopt(cl->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
    curl_multi_setopt(cl->multi, CURLMOPT_SOCKETDATA, cl);
    curl_multi_setopt(cl->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
    curl_multi_setopt(cl->multi, CURLMOPT_TIMERDATA, cl);
    return cl;
}

sg_loop *sg_curl_loop_loop(sg_curl_loop *cl) { return cl->loop; }
size_t sg_curl_loop_running(const sg_curl_loop *cl) { return cl->running; }

int sg_curl_loop_add(sg_curl_loop *cl, CURL *easy, sg_curl_done_fn done, void *arg, sg_err *err) {
    transfer *t = sg_xcalloc(1, sizeof *t);
    t->easy = easy;
    t->done = done;
    t->arg = arg;
    curl_easy_setopt(easy, CURLOPT_PRIVATE, t);
    CURLMcode mc = curl_multi_add_handle(cl->multi, easy);
    if (mc != CURLM_OK) {
        curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
        free(t);
        return sg_errf(err, "curl_multi_add_handle: %s", curl_multi_strerror(mc));
    }
    t->next = cl->head;
    if (cl->head) cl->head->prev = t;
    cl->head = t;
    cl->running++;
    return 0;
}

void sg_curl_loop_remove(sg_curl_loop *cl, CURL *easy) {
    transfer *t = NULL;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&t);
    if (!t) return; /* not ours, or already finished */
    curl_multi_remove_handle(cl->multi, easy);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
    unlink_transfer(cl, t);
}

void sg_curl_loop_kick(sg_curl_loop *cl) {
    int still;
    curl_multi_socket_action(cl->multi, CURL_SOCKET_TIMEOUT, 0, &still);
    check_done(cl);
}

static void kick_now(sg_loop *loop, void *arg) {
    (void)loop;
    sg_curl_loop *cl = arg;
    cl->kick_id = 0;
    sg_curl_loop_kick(cl);
}

void sg_curl_loop_kick_soon(sg_curl_loop *cl) {
    if (!cl->kick_id) cl->kick_id = sg_loop_timer(cl->loop, 0, kick_now, cl);
}

void sg_curl_loop_free(sg_curl_loop *cl) {
    if (!cl) return;
    sg_loop_timer_cancel(cl->loop, cl->timer_id);
    if (cl->kick_id) sg_loop_timer_cancel(cl->loop, cl->kick_id);
    /* Easy handles still attached belong to callers; detach them so the multi can go. */
    while (cl->head) sg_curl_loop_remove(cl, cl->head->easy);
    curl_multi_cleanup(cl->multi);
    free(cl);
}
