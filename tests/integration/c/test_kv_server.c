/* kvstore as a library, the way a pool agent embeds it: a real server on a picked
 * loopback port, run on its own thread, driven over real sockets, while the embedder
 * lowers and raises the memory budget through sg_kv_server_set_maxmemory. */
#include "kvstore/kvstore.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define MiB ((uint64_t)1 << 20)

typedef struct fixture {
    sg_kv_server *srv;
    pthread_t th;
    int fd;
} fixture;

static void *serve(void *arg) {
    sg_err err;
    sg_kv_server_run(arg, &err);
    return NULL;
}

static int dial(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {10, 0}; /* a hung server fails the test instead of blocking it */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int setup(void **state) {
    fixture *f = calloc(1, sizeof *f);
    sg_kv_config cfg = {.listen = "127.0.0.1:0",
                        .memory = 16 * MiB,
                        .backend = "host",
                        .io_threads = 2,
                        .maxclients = 16,
                        .hash_seed = 7}; /* reply_limit 0: the default */
    sg_err err;
    if (sg_kv_server_start(&cfg, &f->srv, &err) != 0) {
        fprintf(stderr, "start: %s\n", err.msg);
        return -1;
    }
    pthread_create(&f->th, NULL, serve, f->srv);
    f->fd = dial(sg_kv_server_port(f->srv));
    *state = f;
    return f->fd < 0 ? -1 : 0;
}

static int teardown(void **state) {
    fixture *f = *state;
    close(f->fd);
    sg_kv_server_stop(f->srv);
    pthread_join(f->th, NULL);
    sg_kv_server_free(f->srv);
    free(f);
    return 0;
}

static void send_all(int fd, const void *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        assert_true(w > 0);
        p = (const char *)p + w;
        n -= (size_t)w;
    }
}

/* Read one reply line (simple, error or integer reply). */
static void read_line(int fd, char *line, size_t cap) {
    size_t n = 0;
    while (n + 1 < cap) {
        assert_int_equal(read(fd, line + n, 1), 1);
        if (n > 0 && line[n - 1] == '\r' && line[n] == '\n') {
            line[n - 1] = '\0';
            return;
        }
        n++;
    }
    fail_msg("reply line too long");
}

static void set_value(int fd, int key, uint64_t len) {
    char hdr[128];
    int h = snprintf(hdr, sizeof hdr, "*3\r\n$3\r\nSET\r\n$6\r\nkey%03d\r\n$%llu\r\n", key,
                     (unsigned long long)len);
    send_all(fd, hdr, (size_t)h);
    char *body = malloc(len);
    memset(body, 'a' + key % 26, len);
    send_all(fd, body, len);
    free(body);
    send_all(fd, "\r\n", 2);
    char line[256];
    read_line(fd, line, sizeof line);
    assert_string_equal(line, "+OK");
}

static long long dbsize(int fd) {
    send_all(fd, "*1\r\n$6\r\nDBSIZE\r\n", 16);
    char line[64];
    read_line(fd, line, sizeof line);
    assert_int_equal(line[0], ':');
    return atoll(line + 1);
}

static void test_shrink_and_grow_while_serving(void **state) {
    fixture *f = *state;
    for (int k = 0; k < 12; k++) set_value(f->fd, k, MiB);
    sg_kv_memory m;
    sg_kv_server_memory(f->srv, &m);
    assert_int_equal(m.capacity, 16 * MiB);
    assert_int_equal(m.limit, 16 * MiB);
    assert_int_equal(m.keys, 12);
    assert_true(m.used >= 12 * MiB && m.used <= 16 * MiB);

    /* Give half back: values are evicted down to the budget and chunks released. */
    sg_err err;
    assert_int_equal(sg_kv_server_set_maxmemory(f->srv, 8 * MiB, &err), 0);
    sg_kv_server_memory(f->srv, &m);
    assert_int_equal(m.limit, 8 * MiB);
    assert_true(m.used <= 8 * MiB);
    assert_true(m.released >= 8 * MiB);
    assert_true(m.keys <= 8);
    assert_int_equal(dbsize(f->fd), (long long)m.keys);

    /* Clients keep working within the smaller budget (the oldest keys go first). */
    for (int k = 20; k < 30; k++) set_value(f->fd, k, MiB);
    sg_kv_server_memory(f->srv, &m);
    assert_true(m.used <= 8 * MiB);

    /* Bad budgets change nothing and say why. */
    assert_int_equal(sg_kv_server_set_maxmemory(f->srv, 64 * MiB, &err), -1);
    assert_non_null(strstr(err.msg, "region"));
    assert_int_equal(sg_kv_server_set_maxmemory(f->srv, 1000, &err), -1);
    sg_kv_server_memory(f->srv, &m);
    assert_int_equal(m.limit, 8 * MiB);

    /* Take it back: the whole region is usable again. */
    assert_int_equal(sg_kv_server_set_maxmemory(f->srv, 0, &err), 0);
    for (int k = 40; k < 54; k++) set_value(f->fd, k, MiB);
    sg_kv_server_memory(f->srv, &m);
    assert_int_equal(m.limit, 16 * MiB);
    assert_int_equal(m.released, 0);
    assert_true(m.used > 8 * MiB && m.used <= 16 * MiB);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_shrink_and_grow_while_serving, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
