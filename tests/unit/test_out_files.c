/* Output files (issue 24, items 1 and 9): a writer never replaces nor writes through what is
 * not a regular file, nor the results database in use; a database write refused after a
 * failure repeats the failure's reason. */
#include "common/wfile.h"
#include "results/results.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

static char dir[64];

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/sg_out_files.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *at(const char *name) {
    static char p[4][256];
    static int i;
    i = (i + 1) % 4;
    snprintf(p[i], sizeof p[i], "%s/%s", dir, name);
    return p[i];
}

static mode_t kind(const char *path) {
    struct stat sb;
    assert_int_equal(lstat(path, &sb), 0);
    return sb.st_mode & S_IFMT;
}

static void expect_refused(const char *path, const char *what) {
    sg_err err = {{0}};
    FILE *f = NULL;
    assert_int_equal(sg_wfile_check(path, "-o", &err), SG_WFILE_REFUSED);
    assert_non_null(strstr(err.msg, what));
    assert_non_null(strstr(err.msg, "-o "));
    assert_int_equal(sg_wfile_atomic(path, "x", 1, &err), SG_WFILE_REFUSED);
    assert_int_equal(sg_wfile_fopen(path, 0, &f, &err), SG_WFILE_REFUSED);
    assert_null(f);
}

static void test_not_regular(void **state) {
    (void)state;
    assert_int_equal(mkfifo(at("fifo"), 0644), 0);
    expect_refused(at("fifo"), "is a FIFO, not a regular file; refusing to replace it");
    assert_int_equal(kind(at("fifo")), S_IFIFO);

    FILE *t = fopen(at("target"), "w");
    assert_non_null(t);
    fputs("kept", t);
    fclose(t);
    assert_int_equal(symlink("target", at("link")), 0);
    expect_refused(at("link"), "is a symbolic link");
    char buf[16] = {0};
    assert_int_equal(readlink(at("link"), buf, sizeof buf - 1), 6);
    assert_string_equal(buf, "target");
    t = fopen(at("target"), "r");
    assert_non_null(fgets(buf, sizeof buf, t));
    fclose(t);
    assert_string_equal(buf, "kept");

    assert_int_equal(mkdir(at("folder"), 0755), 0);
    expect_refused(at("folder"), "is a folder");

    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", at("sock"));
    assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof sa), 0);
    expect_refused(at("sock"), "is a socket");
    close(s);

    /* a regular file is replaced, as asked; nothing there is written */
    sg_err err;
    assert_int_equal(sg_wfile_atomic(at("target"), "new", 3, &err), 0);
    assert_int_equal(kind(at("target")), S_IFREG);
    FILE *f;
    assert_int_equal(sg_wfile_fopen(at("fresh"), 0, &f, &err), 0);
    fclose(f);
    /* excl: anything there is EEXIST, a link included */
    assert_int_equal(sg_wfile_fopen(at("link"), 1, &f, &err), -1);
    assert_int_equal(errno, EEXIST);
}

static void test_database_protected(void **state) {
    (void)state;
    sg_results *r;
    sg_err err;
    assert_int_equal(sg_results_open(at("r.db"), 0, &r, &err), 0);
    assert_int_equal(link(at("r.db"), at("hard")), 0);
    const char *names[] = {at("r.db"), at("hard"), at("r.db-wal")};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(sg_wfile_check(names[i], NULL, &err), SG_WFILE_REFUSED);
        assert_non_null(strstr(err.msg, "the results database in use"));
    }
    assert_int_equal(sg_results_close(r, &err), 0);
    /* closed: no longer protected (the user may replace a file of their own) */
    assert_int_equal(sg_wfile_check(at("hard"), NULL, &err), 0);
    /* --db naming a FIFO is refused rather than opened (it would block) */
    assert_int_equal(sg_results_open(at("fifo"), 1, &r, &err), SG_WFILE_REFUSED);
    assert_non_null(strstr(err.msg, "is a FIFO"));
}

/* A full database (max_page_count: SQLite's own "database or disk is full"): the first
 * failure and every refused write after it name SQLite's reason. */
static void test_db_failure_reason(void **state) {
    (void)state;
    sg_results *r;
    sg_err err;
    assert_int_equal(sg_results_open(at("full.db"), 0, &r, &err), 0);
    json_t *cfg = json_object();
    int64_t c = sg_results_campaign_begin(r, "optimize", "t", cfg, &err);
    json_decref(cfg);
    assert_true(c > 0);
    assert_int_equal(sqlite3_exec(sg_results_db(r), "PRAGMA max_page_count = 40", NULL, NULL, NULL),
                     0);
    char *big = malloc(8001);
    memset(big, 'x', 8000);
    big[8000] = 0;
    int rc = 0, i;
    for (i = 0; i < 200 && rc == 0; i++) {
        json_t *ev = json_pack("{s:s,s:f,s:s}", "ev", "note", "t_ms", 1.0, "text", big);
        rc = sg_results_record(r, c, 0, ev, &err);
        if (rc == 0) rc = sg_results_flush(r, &err);
        json_decref(ev);
    }
    free(big);
    assert_int_equal(rc, -1);
    print_message("# first: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "database or disk is full"));
    assert_true(sg_results_task_begin(r, c, "t", "d", &err) < 0);
    print_message("# then: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "an earlier write failed: "));
    assert_non_null(strstr(err.msg, "database or disk is full"));
    sg_results_close(r, NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_not_regular),
        cmocka_unit_test(test_database_protected),
        cmocka_unit_test(test_db_failure_reason),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
