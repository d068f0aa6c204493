/* curl_loop: libcurl transfers driven by the real loop against a local HTTP server
 * (libmicrohttpd in its own thread): completion callbacks, and abort by removal. */
#include "common/buf.h"
#include "common/net.h"
#include "common/curl_loop.h"

#include <microhttpd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static volatile int slow_chunks_sent;

static ssize_t slow_reader(void *cls, uint64_t pos, char *buf, size_t max) {
    /* 1000 chunks (20 s): the client aborts after 3, however late a loaded machine runs its
     * 10 ms checks; 100 (2 s) left a slow run room to see the whole stream end */
    if (pos >= 1000) return MHD_CONTENT_READER_END_OF_STREAM;
    usleep(20000);
    buf[0] = 'x';
    slow_chunks_sent++;
    return 1;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *data,
                               size_t *size, void **ctx) {
    struct MHD_Response *r;
    if (strcmp(url, "/slow") == 0)
        r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 1, slow_reader, NULL, NULL);
    else
        r = MHD_create_response_from_buffer(5, "hello", MHD_RESPMEM_PERSISTENT);
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

typedef struct client {
    sg_buf body;
    int done;
    CURLcode rc;
    CURL *easy;
} client;

static size_t on_data(char *p, size_t sz, size_t n, void *arg) {
    sg_buf_append(&((client *)arg)->body, p, sz * n);
    return sz * n;
}

static client fast[3], slow;
static sg_curl_loop *CL;

static void on_done(sg_curl_loop *cl, CURL *easy, CURLcode rc, void *arg) {
    client *c = arg;
    c->done++;
    c->rc = rc;
}

static void check_abort(sg_loop *l, void *arg) {
    int all = fast[0].done && fast[1].done && fast[2].done;
    if (all && slow.body.len >= 3) {
        sg_curl_loop_remove(CL, slow.easy); /* abort: no done callback */
        sg_loop_stop(l);
        return;
    }
    sg_loop_timer(l, 10 * SG_MS, check_abort, NULL);
}

static CURL *make_easy(const char *url, client *c) {
    CURL *e = curl_easy_init();
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, c);
    c->easy = e;
    return e;
}

static void test_transfers_complete_and_abort(void **state) {
    sg_err err;
    int port = sg_net_pick_port(&err);
    assert_true(port > 0);
    struct MHD_Daemon *d =
        MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION,
                         (uint16_t)port, NULL, NULL, handler, NULL, MHD_OPTION_END);
    assert_non_null(d);
    sg_loop *loop = sg_loop_new_real(&err);
    CL = sg_curl_loop_new(loop, &err);
    assert_non_null(CL);
    char url[128];
    for (int i = 0; i < 3; i++) {
        snprintf(url, sizeof url, "http://127.0.0.1:%d/fast", port);
        assert_int_equal(sg_curl_loop_add(CL, make_easy(url, &fast[i]), on_done, &fast[i], &err),
                         0);
    }
    snprintf(url, sizeof url, "http://127.0.0.1:%d/slow", port);
    assert_int_equal(sg_curl_loop_add(CL, make_easy(url, &slow), on_done, &slow, &err), 0);
    assert_int_equal(sg_curl_loop_running(CL), 4);
    sg_loop_timer(loop, 10 * SG_MS, check_abort, NULL);
    assert_int_equal(sg_loop_run(loop, &err), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(fast[i].done, 1);
        assert_int_equal(fast[i].rc, CURLE_OK);
        assert_string_equal(fast[i].body.data, "hello");
    }
    assert_int_equal(slow.done, 0);
    assert_int_equal(sg_curl_loop_running(CL), 0);
    /* The server notices the closed connection: it stops well before 1000 chunks. */
    int sent = slow_chunks_sent;
    usleep(300000);
    assert_true(slow_chunks_sent < 1000);
    assert_true(slow_chunks_sent - sent <= 2);
    sg_curl_loop_free(CL);
    for (int i = 0; i < 3; i++) {
        curl_easy_cleanup(fast[i].easy);
        sg_buf_free(&fast[i].body);
    }
    curl_easy_cleanup(slow.easy);
    sg_buf_free(&slow.body);
    sg_loop_free(loop);
    MHD_stop_daemon(d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transfers_complete_and_abort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
