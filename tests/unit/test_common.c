/* common/: buffers, units, JSON getters, dlopen helper, CUDA tables, processes, networking. */
#include "common/buf.h"
#include "common/cuda.h"
#include "common/dl.h"
#include "common/json.h"
#include "common/net.h"
#include "common/proc.h"
#include "common/units.h"

#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static void test_buf(void **state) {
    sg_buf b = {0};
    for (int i = 0; i < 1000; i++) sg_buf_printf(&b, "%d,", i);
    assert_int_equal(strncmp(b.data, "0,1,2,", 6), 0);
    assert_int_equal(b.data[b.len], '\0');
    size_t len = b.len;
    sg_buf_consume(&b, 2);
    assert_int_equal(b.len, len - 2);
    assert_int_equal(strncmp(b.data, "1,2,", 4), 0);
    sg_buf_clear(&b);
    sg_buf_append_json_string(&b, "a\"b\\c\n\x01");
    assert_string_equal(b.data, "\"a\\\"b\\\\c\\n\\u0001\"");
    /* UTF-8 kept whole; a bad byte, a cut sequence, an overlong form become U+FFFD (the
     * agent echoed a non-UTF-8 path into an error body that was no JSON: fuzz_agent) */
    sg_buf_clear(&b);
    sg_buf_append_json_string(&b, "\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x98\x80");
    assert_string_equal(b.data, "\"\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x98\x80\"");
    sg_buf_clear(&b);
    sg_buf_append_json_string(&b, "a\xff"
                                  "b\xe2\x82\xc0\x80");
    assert_string_equal(b.data, "\"a\\ufffdb\\ufffd\\ufffd\\ufffd\\ufffd\"");
    sg_buf_clear(&b);
    sg_buf_append_json_stringn(&b, "x\xe2\x82", 3); /* a sequence cut by the length */
    assert_string_equal(b.data, "\"x\\ufffd\\ufffd\"");
    char *s = sg_buf_steal(&b);
    assert_null(b.data);
    free(s);
    sg_buf_free(&b);
}

/* jansson allocates through sg_xmalloc (common/buf.c's constructor): no NULL for OOM. */
static void test_json_uses_sg_alloc(void **state) {
    json_malloc_t m = NULL;
    json_free_t f = NULL;
    json_get_alloc_funcs(&m, &f);
    assert_ptr_equal(m, sg_xmalloc);
    assert_ptr_equal(f, free);
}

static void test_units(void **state) {
    sg_err err;
    int64_t ns;
    uint64_t u;
    assert_int_equal(sg_parse_duration_ns("30m", &ns, &err), 0);
    assert_int_equal(ns, 1800LL * 1000000000LL);
    assert_int_equal(sg_parse_duration_ns("250ms", &ns, &err), 0);
    assert_int_equal(ns, 250000000LL);
    assert_int_equal(sg_parse_duration_ns("90", &ns, &err), 0);
    assert_int_equal(ns, 90LL * 1000000000LL);
    assert_int_equal(sg_parse_duration_ns("1.5h", &ns, &err), 0);
    assert_int_equal(ns, 5400LL * 1000000000LL);
    assert_int_equal(sg_parse_duration_ns("5 parsecs", &ns, &err), -1);
    assert_non_null(strstr(err.msg, "'5 parsecs' is not a duration"));
    assert_int_equal(sg_parse_duration_ns("-3s", &ns, &err), -1);
    assert_int_equal(sg_parse_size_bytes("4G", &u, &err), 0);
    assert_int_equal(u, 4ULL << 30);
    assert_int_equal(sg_parse_size_bytes("64KiB", &u, &err), 0);
    assert_int_equal(u, 65536);
    assert_int_equal(sg_parse_size_bytes("4Q", &u, &err), -1);
    assert_int_equal(sg_parse_count("500k", &u, &err), 0);
    assert_int_equal(u, 500000);
    double d;
    assert_int_equal(sg_parse_double("nan", &d, &err), -1);
    assert_int_equal(sg_parse_double("2.5", &d, &err), 0);
    char out[32];
    assert_string_equal(sg_fmt_duration(1500000, out, sizeof out), "1.50 ms");
    assert_string_equal(sg_fmt_bytes(3 << 20, out, sizeof out), "3.0 MiB");
}

/* A message longer than its buffer keeps its beginning and its reason (issue 17, item 14:
 * a long path cut the message before the reason). */
static void test_err_keeps_reason_of_long_message(void **state) {
    char path[3000];
    memset(path, 'p', sizeof path - 1);
    path[sizeof path - 1] = 0;
    path[0] = '/';
    sg_err err;
    sg_errf(&err, "%s: line 3: #include is not allowed", path);
    size_t n = strlen(err.msg);
    assert_true(n < sizeof err.msg);
    assert_true(n > sizeof err.msg - 8);
    assert_int_equal(err.msg[0], '/');
    assert_non_null(strstr(err.msg, "pp...pp"));
    assert_string_equal(err.msg + n - 31, "line 3: #include is not allowed");
    sg_errf(&err, "short: %d", 7);
    assert_string_equal(err.msg, "short: 7");
    /* a prefix as long keeps the old message's end too */
    sg_errf(&err, "%s: the reason", path);
    sg_err_prefix(&err, "%s: field \"x\"", path);
    n = strlen(err.msg);
    assert_string_equal(err.msg + n - 10, "the reason");
    /* no cut splits a UTF-8 sequence: a path of 2-byte characters */
    char wide[3001];
    for (int i = 0; i < 3000; i += 2) memcpy(wide + i, "\xc3\xa9", 2);
    wide[3000] = 0;
    sg_errf(&err, "%s: why", wide);
    const char *dots = strstr(err.msg, "...");
    assert_non_null(dots);
    assert_int_equal((dots - err.msg) % 2, 0);
    assert_int_equal((strlen(dots + 3) - 5) % 2, 0);
    char tiny[6];
    sg_fmt_fit(tiny, sizeof tiny, "%s", "abcdefgh");
    assert_string_equal(tiny, "abcde");
}

/* sg_proc_env_keep in a child: the kept names stay, the rest (and anything named like a
 * secret, even when listed) is gone from environ and zeroed where it lay. */
static void test_proc_env_keep(void **state) {
    setenv("SG_TEST_API_KEY", "sk-unit-secret", 1);
    setenv("POCL_TEST_TOKEN", "tok-unit-secret", 1);
    setenv("POCL_TEST_SETTING", "kept", 1);
    setenv("SG_TEST_OTHER", "dropped", 1);
    const char *key = getenv("SG_TEST_API_KEY") - strlen("SG_TEST_API_KEY=");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        static const char *const keep[] = {"PATH", "POCL_*", NULL};
        sg_proc_env_keep(keep);
        int bad = getenv("SG_TEST_API_KEY") || getenv("POCL_TEST_TOKEN") ||
                  getenv("SG_TEST_OTHER") || !getenv("PATH") || !getenv("POCL_TEST_SETTING") ||
                  key[0] || memmem(key, 30, "sk-unit", 7);
        _exit(bad);
    }
    int st;
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_string_equal(getenv("SG_TEST_API_KEY"), "sk-unit-secret"); /* the parent's stays */
    /* the same rule as an envp for a program to start with; this environment unchanged */
    static const char *const keep[] = {"PATH", "POCL_*", NULL};
    char **kept = sg_proc_env_kept(keep);
    int path = 0, setting = 0, other = 0;
    for (char **e = kept; *e; e++) {
        path += !strncmp(*e, "PATH=", 5);
        setting += !strcmp(*e, "POCL_TEST_SETTING=kept");
        other += !strncmp(*e, "SG_TEST_", 8) || !strncmp(*e, "POCL_TEST_TOKEN", 15);
    }
    free(kept);
    assert_true(path == 1 && setting == 1 && other == 0);
    assert_string_equal(getenv("SG_TEST_API_KEY"), "sk-unit-secret");
    unsetenv("SG_TEST_API_KEY");
    unsetenv("POCL_TEST_TOKEN");
    unsetenv("POCL_TEST_SETTING");
    unsetenv("SG_TEST_OTHER");
}

static void test_json_errors_name_field_and_value(void **state) {
    sg_err err;
    const char *text = "{\"name\": \"x\", \"n\": \"abc\", \"sub\": {\"k\": 2}}";
    json_t *j = sg_json_parse(text, strlen(text), "task.json", &err);
    assert_non_null(j);
    const char *name = NULL;
    int64_t n = 0;
    assert_int_equal(sg_json_get_str(j, "name", 1, &name, "task.json", &err), 0);
    assert_string_equal(name, "x");
    assert_int_equal(sg_json_get_int(j, "n", 1, &n, "task.json", &err), -1);
    assert_string_equal(err.msg, "task.json: field \"n\": expected an integer, got string \"abc\"");
    assert_int_equal(sg_json_get_int(j, "missing", 1, &n, "task.json", &err), -1);
    assert_string_equal(err.msg, "task.json: missing required field \"missing\"");
    n = 7;
    assert_int_equal(sg_json_get_int(j, "missing", 0, &n, "task.json", &err), 0);
    assert_int_equal(n, 7);
    json_decref(j);
    assert_null(sg_json_parse("{\"a\": }", 7, "bad.json", &err));
    assert_non_null(strstr(err.msg, "bad.json:1:"));
    assert_null(sg_json_parse("{\"a\":1,\"a\":2}", 13, "dup.json", &err));
    assert_non_null(strstr(err.msg, "duplicate"));
}

static void test_dl_reports_library_and_symbol(void **state) {
    sg_err err;
    void *h = NULL, *fn = NULL;
    const char *none[] = {"libdoes-not-exist.so.9", NULL};
    sg_dl_sym syms[] = {{"cos", &fn, 0}, {NULL, NULL, 0}};
    assert_int_equal(sg_dl_load(none, syms, &h, &err), -1);
    assert_non_null(strstr(err.msg, "libdoes-not-exist.so.9"));
    const char *libm[] = {"libm.so.6", NULL};
    assert_int_equal(sg_dl_load(libm, syms, &h, &err), 0);
    assert_non_null(fn);
    sg_dl_close(h);
    void *missing = NULL;
    sg_dl_sym bad[] = {{"cos", &fn, 0}, {"no_such_symbol_xyz", &missing, 0}, {NULL, NULL, 0}};
    assert_int_equal(sg_dl_load(libm, bad, &h, &err), -1);
    assert_non_null(strstr(err.msg, "no_such_symbol_xyz"));
    sg_dl_sym opt[] = {{"no_such_symbol_xyz", &missing, 1}, {NULL, NULL, 0}};
    assert_int_equal(sg_dl_load(libm, opt, &h, &err), 0);
    assert_null(missing);
    sg_dl_close(h);
}

/* Whether or not this machine has them: every call answers the same (one load per
 * process, from any thread), and a failure names what is missing. */
static void *load_nvrtc(void *arg) { return (void *)sg_cuda_nvrtc_load(NULL); }

static void test_cuda_tables_load_once(void **state) {
    sg_err e1, e2;
    const void *d = sg_cuda_driver_load(&e1);
    assert_ptr_equal(d, sg_cuda_driver_load(&e2));
    if (!d) {
        assert_string_equal(e1.msg, e2.msg);
        assert_non_null(strstr(e1.msg, "libcuda"));
    }
    pthread_t t[4];
    void *got[4];
    for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&t[i], NULL, load_nvrtc, NULL), 0);
    for (int i = 0; i < 4; i++) pthread_join(t[i], &got[i]);
    const void *n = sg_cuda_nvrtc_load(&e1);
    for (int i = 0; i < 4; i++) assert_ptr_equal(got[i], n);
    if (!n) assert_non_null(strstr(e1.msg, "libnvrtc"));
    void *missing = NULL;
    sg_dl_sym bad[] = {{"no_such_symbol_xyz", &missing, 0}, {NULL, NULL, 0}};
    assert_int_equal(sg_cuda_cupti_resolve(bad, &e1), -1);
    assert_non_null(strstr(e1.msg, sg_cuda_cupti_load(NULL) ? "no_such_symbol_xyz" : "libcupti"));
}

static int echo_child(int sock, void *arg) {
    char buf[64];
    ssize_t n = read(sock, buf, sizeof buf);
    if (n > 0 && write(sock, buf, (size_t)n) != n) return 3;
    return 7;
}

static void test_proc_fork_socketpair_and_status(void **state) {
    sg_err err;
    sg_proc p;
    assert_int_equal(sg_proc_fork(&p, echo_child, NULL, SG_PROC_SOCKET, &err), 0);
    assert_int_equal(write(p.sock_fd, "ping", 4), 4);
    char buf[8] = {0};
    assert_int_equal(read(p.sock_fd, buf, sizeof buf), 4);
    assert_string_equal(buf, "ping");
    int st;
    assert_int_equal(sg_proc_wait(&p, 5000, &st), 0);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 7);
    char desc[64];
    sg_proc_describe_status(st, desc, sizeof desc);
    assert_string_equal(desc, "exited with status 7");
    sg_proc_close_fds(&p);
}

/* Live (non-zombie) processes in group pgid: killed ones may linger as zombies when
 * PID 1 of a container does not reap orphans, so kill(-pgid, 0) would mislead. */
static int live_in_group(pid_t pgid) {
    int live = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fgets(buf, sizeof buf, f)) {
            char *rp = strrchr(buf, ')');
            char st;
            int ppid, pg;
            if (rp && sscanf(rp + 2, "%c %d %d", &st, &ppid, &pg) == 3 && pg == pgid && st != 'Z')
                live++;
        }
        fclose(f);
    }
    if (d) closedir(d);
    return live;
}

static void test_proc_deadline_kills_group(void **state) {
    sg_err err;
    sg_proc p;
    char *argv[] = {"sh", "-c", "sleep 30 & sleep 30", NULL};
    assert_int_equal(sg_proc_spawn(&p, argv, SG_PROC_NEW_PGRP | SG_PROC_NULL_IO, &err), 0);
    int st;
    assert_int_equal(sg_proc_wait(&p, 50, &st), 1); /* still running at the deadline */
    pid_t pgid = p.pid;
    st = sg_proc_stop(&p, 100);
    assert_true(WIFSIGNALED(st));
    for (int i = 0; i < 100 && live_in_group(pgid); i++) usleep(10000);
    assert_int_equal(live_in_group(pgid), 0); /* the background sleep went too */
    sg_proc_close_fds(&p);
}

static void test_proc_run_captures_and_reports_missing(void **state) {
    sg_err err;
    sg_buf out = {0};
    int st;
    char *argv[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
    assert_int_equal(sg_proc_run(argv, 5000, &out, &st, &err), 0);
    assert_int_equal(WEXITSTATUS(st), 3);
    assert_non_null(strstr(out.data, "out"));
    assert_non_null(strstr(out.data, "err"));
    sg_buf_free(&out);
    char *missing[] = {"/nonexistent/tool", NULL};
    assert_int_equal(sg_proc_run(missing, 5000, &out, &st, &err), -1);
    assert_non_null(strstr(err.msg, "/nonexistent/tool"));
    char *slow[] = {"sleep", "10", NULL};
    assert_int_equal(sg_proc_run(slow, 100, NULL, &st, &err), 1);
}

static void test_net(void **state) {
    sg_err err;
    char host[64];
    int port;
    assert_int_equal(sg_net_parse_hostport("127.0.0.1:6380", host, sizeof host, &port, &err), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 6380);
    assert_int_equal(sg_net_parse_hostport("[::1]:80", host, sizeof host, &port, &err), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(sg_net_parse_hostport(":9", host, sizeof host, &port, &err), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(sg_net_parse_hostport("localhost:99999", host, sizeof host, &port, &err), -1);
    assert_non_null(strstr(err.msg, "99999"));
    assert_int_equal(sg_net_parse_hostport("nocolon", host, sizeof host, &port, &err), -1);
    assert_true(sg_net_is_loopback("127.0.0.2"));
    assert_true(sg_net_is_loopback("localhost"));
    assert_false(sg_net_is_loopback("0.0.0.0"));
    assert_false(sg_net_is_loopback("10.0.0.1"));
    int p = sg_net_pick_port(&err);
    assert_true(p > 0);
    int fd = sg_net_listen_tcp("127.0.0.1", p, 4, &err);
    assert_true(fd >= 0);
    assert_int_equal(sg_net_local_port(fd), p);
    assert_int_equal(sg_net_listen_tcp("127.0.0.1", p, 4, &err), -1);
    assert_non_null(strstr(err.msg, "cannot listen"));
    close(fd);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buf),
        cmocka_unit_test(test_json_uses_sg_alloc),
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_err_keeps_reason_of_long_message),
        cmocka_unit_test(test_proc_env_keep),
        cmocka_unit_test(test_json_errors_name_field_and_value),
        cmocka_unit_test(test_dl_reports_library_and_symbol),
        cmocka_unit_test(test_cuda_tables_load_once),
        cmocka_unit_test(test_proc_fork_socketpair_and_status),
        cmocka_unit_test(test_proc_deadline_kills_group),
        cmocka_unit_test(test_proc_run_captures_and_reports_missing),
        cmocka_unit_test(test_net),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
