/* Databases of every older schema version, brought to the current one. Each is made as the
 * specgen of its time made it: the migrations up to that version (results/schema.c keeps
 * them unedited, so its SQL is the old code path's), with rows as the old recorder wrote
 * them: times from each task's start, job.candidate and task.best_candidate holding the
 * task's candidate number, 0 for the baseline. Opening it for writing migrates it: times on
 * the campaign's clock (the task's offset from the ISO start times), ids that join, NULL
 * for the baseline; a read-only open refuses it and asks for one write. */
#include "results/internal.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* Rows of an old run: campaign 1 with two tasks, the second started 2 s after the first.
 * Task 2's candidate 1 (id 2) is its best; its job and its baseline job; an event. */
static const char *const old_rows =
    "INSERT INTO campaign (id, kind, suite, config, started, status) VALUES "
    "  (1, 'campaign', 'suites/demo', '{}', '2026-01-01T00:00:00Z', 'done');"
    "INSERT INTO task (id, campaign, name, dir, started, status, best_speedup, best_candidate, "
    "  baseline_ns) VALUES (1, 1, 'a', 'd/a', '2026-01-01T00:00:00Z', 'budget_time', 1, 0, 5e6),"
    "  (2, 1, 'b', 'd/b', '2026-01-01T00:00:02Z', 'target', 3, 1, 6e6);"
    "INSERT INTO iteration (task, n, started_ms) VALUES (2, 1, 100);"
    "INSERT INTO candidate (id, task, n, iteration, origin, status, created_ms, done_ms, speedup, "
    "  correct) VALUES (1, 1, 1, 1, 'fork', 'submitted', 50, 60, 0.5, 1),"
    "  (2, 2, 1, 1, 'fork', 'submitted', 150, 400, 3, 1);"
    "INSERT INTO job (campaign, task, pool_job, candidate, kind, iteration, started_ms, ended_ms) "
    "  VALUES (1, 2, 1, 0, 'validate', 0, 10, 20), (1, 2, 2, 1, 'validate', 1, 200, 300);"
    "INSERT INTO event (campaign, task, t_ms, ev, iteration, data) VALUES "
    "  (1, 2, 150, 'candidate', 1, '{}'), (1, NULL, 7, 'pool_split', 0, '{}');";

/* The same run as schema 3 recorded it: times on the campaign's clock, ids that join. */
static const char *const v3_rows =
    "INSERT INTO campaign (id, kind, suite, config, started, status) VALUES "
    "  (1, 'campaign', 'suites/demo', '{}', '2026-01-01T00:00:00Z', 'done');"
    "INSERT INTO task (id, campaign, name, dir, started, status, best_speedup, best_n, "
    "  best_candidate_id, baseline_ns, start_ms) VALUES (1, 1, 'a', 'd/a', "
    "  '2026-01-01T00:00:00Z', 'budget_time', 1, NULL, NULL, 5e6, 0),"
    "  (2, 1, 'b', 'd/b', '2026-01-01T00:00:02Z', 'target', 3, 1, 2, 6e6, 2000);"
    "INSERT INTO candidate (id, task, n, iteration, origin, status, created_ms, done_ms, speedup, "
    "  correct, time_ns, baseline_ns) VALUES (1, 1, 1, 1, 'fork', 'submitted', 50, 60, 0.5, 1, "
    "  1e7, 5e6), (2, 2, 1, 1, 'fork', 'submitted', 2150, 2400, 3, 1, 2e6, 6e6);"
    "INSERT INTO job (campaign, task, pool_job, candidate_n, candidate_id, kind, iteration, "
    "  started_ms, ended_ms) VALUES (1, 2, 1, NULL, NULL, 'validate', 0, 2010, 2020);";

static char path[64];

/* A database at schema `version` with the old rows. */
static void make_old(int version) {
    snprintf(path, sizeof path, "/tmp/sg-migrate-%d-XXXXXX", (int)getpid());
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    for (int v = 0; v < version; v++)
        assert_int_equal(sqlite3_exec(db, sg_results_migration(v), NULL, NULL, NULL), SQLITE_OK);
    char bump[64];
    snprintf(bump, sizeof bump, "PRAGMA user_version = %d", version);
    assert_int_equal(sqlite3_exec(db, bump, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, version >= 3 ? v3_rows : old_rows, NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
}

/* The database and SQLite's files beside it. */
static void remove_db(void) {
    char side[80];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
}

/* One number (NaN for NULL) from a read of the migrated database. */
static double one(sg_results *r, const char *sql) {
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(sg_results_db(r), sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    double v = sqlite3_column_type(st, 0) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Schema 4's columns (problems from other suites, KernelBench's check) start NULL. */
static void check_origin_columns(sg_results *r) {
    assert_true(one(r, "SELECT count(*) FROM task WHERE coalesce(origin_format, origin_file, "
                       "origin_sha256, baseline_kind, precision) IS NOT NULL") == 0);
    assert_true(one(r, "SELECT count(*) FROM candidate WHERE coalesce(kb_correct, kb_check) IS "
                       "NOT NULL") == 0);
    /* and the recorder fills them: a task's origin, KernelBench's check with a candidate */
    sg_err err;
    assert_int_equal(sg_results_task_origin(r, 2, "kernelbench", "l1/19_ReLU.py", "ab", &err), 0);
    json_t *ev = json_pack("{s:s,s:f,s:i,s:i,s:b,s:f,s:{s:b,s:i}}", "ev", "job_done", "t_ms", 600.0,
                           "iteration", 1, "candidate", 1, "correct", 1, "speedup", 3.0, "kb_check",
                           "correct", 0, "trials", 5);
    assert_int_equal(sg_results_record(r, 1, 2, ev, &err), 0);
    json_decref(ev);
    assert_int_equal(sg_results_flush(r, &err), 0);
    assert_true(one(r, "SELECT kb_correct FROM candidate WHERE id = 2") == 0);
    assert_true(one(r, "SELECT json_extract(kb_check, '$.trials') FROM candidate WHERE id = 2") ==
                5);
    assert_true(one(r, "SELECT origin_file = 'l1/19_ReLU.py' FROM task WHERE id = 2") == 1);
}

/* A database of schema `version` opened for writing: migrated (a read-only open refuses it
 * and says what to do). */
static sg_results *open_migrated(int version) {
    make_old(version);
    sg_results *r;
    sg_err err;
    assert_int_equal(sg_results_open(path, 1, &r, &err), -1);
    assert_non_null(strstr(err.msg, "open it once for writing"));
    assert_int_equal(sg_results_open(path, 0, &r, &err), 0);
    assert_int_equal((int)one(r, "PRAGMA user_version"), sg_results_schema_version());
    return r;
}

static void check_migrated(int version) {
    sg_results *r = open_migrated(version);
    sg_err err;
    /* the task's start on the campaign's clock, and every time moved onto it */
    assert_true(one(r, "SELECT start_ms FROM task WHERE id = 1") == 0);
    assert_true(one(r, "SELECT start_ms FROM task WHERE id = 2") == 2000);
    assert_true(one(r, "SELECT started_ms FROM iteration WHERE task = 2") == 2100);
    assert_true(one(r, "SELECT created_ms FROM candidate WHERE id = 2") == 2150);
    assert_true(one(r, "SELECT done_ms FROM candidate WHERE id = 2") == 2400);
    assert_true(one(r, "SELECT created_ms FROM candidate WHERE id = 1") == 50);
    assert_true(one(r, "SELECT ended_ms FROM job WHERE pool_job = 2") == 2300);
    assert_true(one(r, "SELECT t_ms FROM event WHERE ev = 'candidate'") == 2150);
    assert_true(one(r, "SELECT task_t_ms FROM event WHERE ev = 'candidate'") == 150);
    /* the campaign's own event: on the campaign's clock already, no task time */
    assert_true(one(r, "SELECT t_ms FROM event WHERE ev = 'pool_split'") == 7);
    assert_true(isnan(one(r, "SELECT task_t_ms FROM event WHERE ev = 'pool_split'")));
    /* ids: the best candidate's row, the job's; the baseline NULL */
    assert_true(one(r, "SELECT best_candidate_id FROM task WHERE id = 2") == 2);
    assert_true(one(r, "SELECT best_n FROM task WHERE id = 2") == 1);
    assert_true(isnan(one(r, "SELECT best_n FROM task WHERE id = 1")));
    assert_true(isnan(one(r, "SELECT best_candidate_id FROM task WHERE id = 1")));
    assert_true(one(r, "SELECT candidate_id FROM job WHERE pool_job = 2") == 2);
    assert_true(isnan(one(r, "SELECT candidate_n FROM job WHERE pool_job = 1")));
    assert_true(isnan(one(r, "SELECT candidate_id FROM job WHERE pool_job = 1")));
    /* the old names are gone: a query written for them fails instead of joining wrong */
    sqlite3_stmt *st;
    assert_int_not_equal(
        sqlite3_prepare_v2(sg_results_db(r), "SELECT candidate FROM job", -1, &st, NULL),
        SQLITE_OK);
    /* and the recorder writes into it: a new task's event on the campaign's clock */
    assert_int_equal(sg_results_task_clock(r, 1, 0, &err), 0);
    assert_int_equal(sg_results_task_clock(r, 2, 2000, &err), 0);
    json_t *ev =
        json_pack("{s:s,s:f,s:i,s:i,s:f,s:f,s:f}", "ev", "job_done", "t_ms", 500.0, "iteration", 1,
                  "candidate", 1, "speedup", 3.0, "time_ns", 2e6, "baseline_ns", 6e6);
    assert_int_equal(sg_results_record(r, 1, 2, ev, &err), 0);
    json_decref(ev);
    assert_int_equal(sg_results_flush(r, &err), 0);
    assert_true(one(r, "SELECT done_ms FROM candidate WHERE id = 2") == 2500);
    assert_true(one(r, "SELECT time_ns FROM candidate WHERE id = 2") == 2e6);
    check_origin_columns(r);
    assert_int_equal(sg_results_close(r, &err), 0);
    /* opened again: nothing more to migrate, the rows as they were */
    assert_int_equal(sg_results_open(path, 1, &r, &err), 0);
    assert_true(one(r, "SELECT start_ms FROM task WHERE id = 2") == 2000);
    sg_results_close(r, NULL);
    remove_db();
}

static void test_from_version_1(void **state) {
    (void)state;
    check_migrated(1);
}

static void test_from_version_2(void **state) {
    (void)state;
    check_migrated(2);
}

/* Schema 3 (rows as its recorder wrote them: times on the campaign's clock, ids that join)
 * to now: the calibration tables (4) are added, empty, and take rows; the old rows are as they
 * were. */
static void test_calib_from_version_3(void **state) {
    (void)state;
    snprintf(path, sizeof path, "/tmp/sg-migrate-%d-XXXXXX", (int)getpid());
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    for (int v = 0; v < 3; v++)
        assert_int_equal(sqlite3_exec(db, sg_results_migration(v), NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "PRAGMA user_version = 3;"
                                  "INSERT INTO campaign (id, kind, suite, config, started, status) "
                                  "VALUES (1, 'campaign', 's', '{}', '2026-01-01T00:00:00Z', "
                                  "'done');"
                                  "INSERT INTO task (id, campaign, name, dir, started, status, "
                                  "start_ms, best_n) VALUES (1, 1, 'a', 'd/a', "
                                  "'2026-01-01T00:00:00Z', 'target', 250, 1);",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    sg_results *r;
    sg_err err;
    assert_int_equal(sg_results_open(path, 1, &r, &err), -1);
    assert_int_equal(sg_results_open(path, 0, &r, &err), 0);
    assert_int_equal((int)one(r, "PRAGMA user_version"), sg_results_schema_version());
    assert_true(one(r, "SELECT start_ms FROM task WHERE id = 1") == 250);
    assert_true(one(r, "SELECT count(*) FROM calib_fork") == 0);
    json_t *row =
        json_pack("{s:i,s:s,s:i,s:f,s:s,s:i,s:f}", "task", 1, "kind", "code_block", "at_tokens",
                  120, "fraction", 0.25, "status", "kernel", "correct", 1, "speedup", 1.5);
    assert_int_equal(sg_results_calib_row(r, "calib_fork", row, &err), 0);
    assert_int_equal(sg_results_calib_row(r, "task", row, &err), -1); /* not a calibration table */
    json_decref(row);
    row = json_pack("{s:i,s:s,s:f}", "campaign", 1, "kind", "validate", "service_s", 2.5);
    assert_int_equal(sg_results_calib_row(r, "calib_service", row, &err), 0);
    json_decref(row);
    assert_int_equal(sg_results_flush(r, &err), 0);
    assert_true(one(r, "SELECT speedup FROM calib_fork WHERE task = 1") == 1.5);
    sg_calib_data d;
    int64_t c = 1;
    assert_int_equal(sg_results_calib_load(r, &c, 1, &d, &err), 0);
    assert_int_equal(d.nobs, 1);
    assert_true(d.obs[0].fraction == 0.25 && d.obs[0].kernel && d.obs[0].correct);
    assert_int_equal(d.nservice[0], 1);
    sg_calib_data_free(&d);
    sg_results_close(r, NULL);
    char side[80];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
}

/* Schema 3 (one time base, one id space): its rows stay as they were, schema 4's columns
 * start NULL and the recorder fills them. */
static void test_from_version_3(void **state) {
    (void)state;
    sg_results *r = open_migrated(3);
    sg_err err;
    assert_true(one(r, "SELECT start_ms FROM task WHERE id = 2") == 2000);
    assert_true(one(r, "SELECT created_ms FROM candidate WHERE id = 2") == 2150);
    assert_true(one(r, "SELECT best_candidate_id FROM task WHERE id = 2") == 2);
    assert_true(one(r, "SELECT time_ns FROM candidate WHERE id = 1") == 1e7);
    assert_true(isnan(one(r, "SELECT candidate_id FROM job WHERE pool_job = 1")));
    check_origin_columns(r);
    assert_int_equal(sg_results_close(r, &err), 0);
    remove_db();
}

/* Schema 4 (the calibration tables) to 5: the problems' origin columns start NULL. */
static void test_from_version_4(void **state) {
    (void)state;
    sg_results *r = open_migrated(4);
    sg_err err;
    assert_true(one(r, "SELECT start_ms FROM task WHERE id = 2") == 2000);
    assert_true(one(r, "SELECT count(*) FROM calib_fork") == 0);
    check_origin_columns(r);
    assert_int_equal(sg_results_close(r, &err), 0);
    remove_db();
}

/* Every version before the current one has its test above. */
static void test_every_version_covered(void **state) {
    (void)state;
    assert_int_equal(sg_results_schema_version(), 5);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_from_version_1),       cmocka_unit_test(test_from_version_2),
        cmocka_unit_test(test_calib_from_version_3), cmocka_unit_test(test_from_version_3),
        cmocka_unit_test(test_from_version_4),       cmocka_unit_test(test_every_version_covered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
