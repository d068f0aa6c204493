/* internal.h — what the results module's files share. */
#ifndef SG_RESULTS_INTERNAL_H
#define SG_RESULTS_INTERNAL_H

#include "results/results.h"

#include <sqlite3.h>

#define SG_RESULTS_CACHED 32
#define SG_RESULTS_CLOCKS 16
typedef struct sg_results_stmt {
    const char *sql; /* a string literal: compared by address */
    sqlite3_stmt *st;
} sg_results_stmt;

struct sg_results {
    sqlite3 *db;
    char path[4096];
    int readonly;
    int failed;           /* a write failed: no more writes */
    char failed_why[512]; /* its reason, repeated by the writes refused after it */
    int in_tx;            /* a batch is open */
    int64_t tx_started;   /* monotonic ms */
    sg_results_stmt cached[SG_RESULTS_CACHED];
    int ncached;
    /* tasks' start offsets on the campaign's clock (task.start_ms), by task id % SG_RESULTS_CLOCKS
     */
    struct {
        int64_t task;
        double start_ms;
    } clock[SG_RESULTS_CLOCKS];
};

/* Finalize the recorder's cached statements (before sqlite3_close). */
void sg_results_finalize_all(sg_results *r);

/* Migration `from` -> from + 1 (NULL past the last), and how many there are. */
const char *sg_results_migration(int from);
int sg_results_schema_version(void);

/* Open the batch if needed (and commit one older than a second first). */
int sg_results_begin_write(sg_results *r, sg_err *err);
/* SQLite's error as a message naming the file; marks the handle failed when writing. */
int sg_results_fail(sg_results *r, const char *what, sg_err *err);
/* Run sql with one int64 parameter or none (when p < 0 is not meant: use exec). */
int sg_results_exec(sg_results *r, const char *sql, sg_err *err);
/* Step st to its end, printing its rows (query.c). Returns the row count, or -1. */
int sg_results_print_rows(sg_results *r, sqlite3_stmt *st, sg_results_fmt fmt, int max_cell,
                          FILE *out, sg_err *err);
/* Write s HTML-escaped (& < > " '), n bytes or up to its NUL when n < 0 (html.c). */
void sg_html_escape(FILE *out, const char *s, long n);

/* UTC now as "2026-12-01T04:30:00Z". */
void sg_results_now(char out[32]);

/* Binds a JSON scalar as its SQLite type (integer, real, text, 0/1 for a boolean; NULL for
 * anything else): the recorder's event columns and the calibration rows (recorder.c). */
void sg_results_bind_json(sqlite3_stmt *st, int k, const json_t *v);

#endif
