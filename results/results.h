/* results.h — the results database (SQLite): what every run found, queries over it, and
 * the HTML report.
 *
 * Contract
 *  - sg_results_open opens (or creates, with its folder) a database in WAL mode and brings
 *    its schema to the current version (PRAGMA user_version; migrations in schema.c, the
 *    tables in docs/results.md). A database written by a newer specgen is refused with a
 *    message; read-only opens never write (nor migrate: an old schema is refused).
 *  - Writes are batched: a transaction opens with the first write and commits when
 *    sg_results_flush is called (the owner calls it at least once a second, and at the end)
 *    or when it is older than a second at the next write. Each event is one statement group
 *    inside the batch, so a crash loses at most the last batch and never leaves half a
 *    candidate. Every failure (disk full, read-only file, locked) is an error whose message
 *    names the file and SQLite's reason; after one, the handle refuses further writes (the
 *    caller stops cleanly) with a message that repeats the first one's reason.
 *  - The recorder takes the task loop's events (orchestrator/task.c, the pool's job and
 *    split events) as the JSON objects that go to events.jsonl: every event is kept whole in
 *    the event table, and the ones named in docs/results.md also fill the tables of tasks,
 *    iterations, generations, candidates, jobs and splits. Event names are the contract:
 *    new_best, early_stop, job_start, job_end, pool_split, ... keep their names.
 *  - A campaign (one optimize run, or one `specgen campaign`) has tasks; a resumed campaign
 *    finds its tasks by name (sg_results_task_find) so that finished ones are not redone.
 *  - Queries (query.c, resolve.c, show.c, export.c) read a database opened read-only; they
 *    print rows as an aligned table (text), JSON or CSV, and every reference a user types
 *    (a task, a candidate, an iteration) that matches nothing is an error that names it and
 *    says which command lists the valid ones. sg_results_query_user runs a user's SQL only
 *    when SQLite says the statement cannot write (and the connection is query_only).
 *  - The report (report*.c) is one self-contained HTML file (inline SVG and CSS, no script,
 *    nothing fetched); every text that came from a model or a database is HTML-escaped.
 *    A campaign of kind "sim" (`specgen sim --db`) is marked as simulated. Its chart
 *    primitives (sg_plot) are public, so that other commands draw their SVG the same way. */
#ifndef SG_RESULTS_H
#define SG_RESULTS_H

#include "common/buf.h"
#include "common/err.h"
#include "common/opts.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

typedef struct sg_results sg_results;

/* The default database of every command: specgen-out/results.db. */
#define SG_RESULTS_DEFAULT_DB SG_DB_DEFAULT /* common/opts.h: the --db row */

/* A path that is not a regular file (a device, a FIFO, a folder: after symbolic links) is
 * refused (SG_WFILE_REFUSED, common/wfile.h); while open, the database is protected from
 * every output of this process (sg_wfile_protect): `report -o X.db` cannot replace it. */
int sg_results_open(const char *path, int readonly, sg_results **out, sg_err *err);
/* Commits what is pending; a failure to commit is reported through err (may be NULL). */
int sg_results_close(sg_results *r, sg_err *err);
const char *sg_results_path(const sg_results *r);
/* The SQLite handle, for the query commands (read-only opens). */
void *sg_results_db(sg_results *r);

/* Commit the pending batch. */
int sg_results_flush(sg_results *r, sg_err *err);

/* A campaign row: kind "optimize" or "campaign", the suite (or task) path, the options as
 * a JSON object (borrowed). Returns its id (> 0), or -1. */
int64_t sg_results_campaign_begin(sg_results *r, const char *kind, const char *suite,
                                  const json_t *config, sg_err *err);
/* status: done | budget | stopped | error. */
int sg_results_campaign_end(sg_results *r, int64_t campaign, const char *status, sg_err *err);
/* For --resume: the campaign's kind, suite and config (a new reference), or -1. */
int sg_results_campaign_get(sg_results *r, int64_t campaign, char *suite, size_t n, json_t **config,
                            sg_err *err);

/* A task row, status running. Returns its id, or -1. */
int64_t sg_results_task_begin(sg_results *r, int64_t campaign, const char *name, const char *dir,
                              sg_err *err);
/* The task named so in the campaign: its id and status ("running" when a killed run left
 * it unfinished); 0 when there is none, -1 on an error. */
int64_t sg_results_task_find(sg_results *r, int64_t campaign, const char *name, char *status,
                             size_t n, sg_err *err);
/* A task that did not end (a killed run) starts again: its rows are removed. */
int sg_results_task_reset(sg_results *r, int64_t task, sg_err *err);
/* A task that could not run (it does not load, its output folder cannot be written or is
 * in use): status skipped, the reason in its error. A resumed campaign runs it again. */
int sg_results_task_skip(sg_results *r, int64_t task, const char *why, sg_err *err);

/* Where the task came from when it was brought from another suite (format "kernelbench",
 * the problem file, its content's SHA-256 in hex): called for every problem of a campaign,
 * also one that did not import (a skipped row: fast_p counts it). task_start's "origin"
 * object fills the same columns. */
int sg_results_task_origin(sg_results *r, int64_t task, const char *format, const char *file,
                           const char *sha256, sg_err *err);

/* Where the task starts on the campaign's clock (ms since the campaign started; 0 for an
 * optimize run's one task). Called before its first event: the recorder stores every time
 * on the campaign's clock (the event's t_ms, the task's own, plus this) and keeps the
 * task's own beside it (event.task_t_ms). */
int sg_results_task_clock(sg_results *r, int64_t task, double start_ms, sg_err *err);
/* How long ago (ms, wall clock) the campaign started: a resumed campaign's clock goes on
 * from there. -1 on an error. */
double sg_results_campaign_age_ms(sg_results *r, int64_t campaign, sg_err *err);

/* The task's token totals (the summary's), at its end. */
int sg_results_task_totals(sg_results *r, int64_t task, int64_t reasoning_tokens, int64_t tokens,
                           sg_err *err);

/* The task's prefix reuse at its end: its forks' prompt tokens and, when the server
 * reported them (reported), how many of those came from its prefix cache. */
int sg_results_task_prefix(sg_results *r, int64_t task, int64_t fork_prompt_tokens,
                           int64_t fork_cached_tokens, int reported, sg_err *err);

/* One event (borrowed) of a task (task 0: the campaign's own, e.g. pool events). */
int sg_results_record(sg_results *r, int64_t campaign, int64_t task, const json_t *ev, sg_err *err);

/* ---- calibration (`specgen calibrate`, `sim --calibration-run`; docs/calibration.md) ----
 * One row of a calibration table (calib_trace, calib_point, calib_fork, calib_rate,
 * calib_service; schema 4), its columns the keys of `row` (borrowed; numbers, strings,
 * booleans, null): an unknown table or column is an error naming it. */
int sg_results_calib_row(sg_results *r, const char *table, const json_t *row, sg_err *err);
/* A calibrated task ends: status done or error (error: why, may be NULL). */
int sg_results_calib_task_end(sg_results *r, int64_t task, const char *status, const char *error,
                              sg_err *err);
/* Rows of the campaign in calib_rate (a resumed calibration does not repeat its ramp); -1
 * on an error. */
int64_t sg_results_calib_rates(sg_results *r, int64_t campaign, sg_err *err);
/* A task's calibration rows are removed (a resumed run traces it again). */
int sg_results_calib_reset(sg_results *r, int64_t task, sg_err *err);

/* What a fit reads back (sg_results_calib_load): the rows of the given campaigns' tasks. */
typedef struct sg_calib_obs { /* a calib_fork row */
    int64_t task;
    char kind[16];                 /* code_block | transition | interval | final */
    double at_tokens, fraction;    /* where in the reasoning */
    int kernel, compiled, correct; /* kernel: one was extracted and validated */
    double speedup;                /* correct: its speedup */
    double fork_tokens, prompt_tokens, cached_tokens, first_token_ms;
} sg_calib_obs;
typedef struct sg_calib_trace_row { /* a calib_trace row */
    int64_t task;
    double reasoning_tokens, answer_tokens, prompt_tokens, first_token_ms, reasoning_ms;
} sg_calib_trace_row;
typedef struct sg_calib_point_row { /* a calib_point row, by task then position */
    int64_t task;
    int code; /* 1: code_block, 0: transition */
    double at_tokens;
} sg_calib_point_row;
typedef struct sg_calib_rate_row { /* a calib_rate row */
    int decode;                    /* 1: decode, 0: prefill */
    int streams;
    double prompt_tokens, cached_tokens, tokens, seconds, tok_s, tok_s_sd, first_token_ms;
} sg_calib_rate_row;
typedef struct sg_calib_data {
    sg_calib_obs *obs;
    int nobs;
    sg_calib_trace_row *traces;
    int ntraces;
    sg_calib_point_row *points;
    int npoints;
    sg_calib_rate_row *rates;
    int nrates;
    double *service[2]; /* validate, profile: seconds */
    int nservice[2];
} sg_calib_data;
/* campaigns: ids (n of them), or every calibration campaign when n == 0. The arrays are
 * owned by d (sg_calib_data_free). */
int sg_results_calib_load(sg_results *r, const int64_t *campaigns, int n, sg_calib_data *d,
                          sg_err *err);
void sg_calib_data_free(sg_calib_data *d);

/* ---- queries (read-only handles) ---- */

typedef enum { SG_RESULTS_TEXT, SG_RESULTS_JSON, SG_RESULTS_CSV } sg_results_fmt;

/* Run sql with its text parameters (params[i] binds ?i+1; NULL binds NULL; SQLite's column
 * affinity turns "3" into 3 where a column is numeric) and print every row to out: an aligned
 * table (cells cut at max_cell bytes, newlines shown as a space; 0: no cut), a JSON array of
 * objects (numbers stay numbers) or CSV with a header. Returns the number of rows, or -1. */
int sg_results_query(sg_results *r, const char *sql, const char *const *params, int nparams,
                     sg_results_fmt fmt, int max_cell, FILE *out, sg_err *err);
/* A user's one statement, refused (with a message naming it) unless it only reads. */
int sg_results_query_user(sg_results *r, const char *sql, sg_results_fmt fmt, FILE *out,
                          sg_err *err);

/* References as users type them. A task: its id, or its name (the latest task of that name,
 * within `campaign` when > 0). A candidate: its id, or TASK:N (the task's candidate N). An
 * iteration: TASK:N (iteration N of the task) or the iteration row's id. 0 when it resolves,
 * else -1 and a message naming the reference and the listing command. */
int sg_results_resolve_task(sg_results *r, const char *ref, int64_t campaign, int64_t *task,
                            sg_err *err);
int sg_results_resolve_candidate(sg_results *r, const char *ref, int64_t *candidate, sg_err *err);
int sg_results_resolve_iteration(sg_results *r, const char *ref, int64_t *task, int64_t *n,
                                 sg_err *err);
/* The campaign given (must exist), or the latest when want <= 0; -1 when there is none. */
int sg_results_resolve_campaign(sg_results *r, int64_t want, int64_t *campaign, sg_err *err);

/* One candidate in full: source, verdict, timing, message, feedback, and its lineage (the
 * generation it came from: rule, cue, token offset, iteration, how that generation ended). */
int sg_results_show_candidate(sg_results *r, int64_t candidate, sg_results_fmt fmt, FILE *out,
                              sg_err *err);

/* Every table: JSON (one object, a key per table) to out; CSV: one table (`table`) to out,
 * or, when table is NULL, one TABLE.csv per table in the folder dir (SG_WFILE_REFUSED for
 * one that is not a regular file, common/wfile.h). */
int sg_results_export(sg_results *r, sg_results_fmt fmt, const char *table, const char *dir,
                      FILE *out, sg_err *err);

/* `results export --kernelbench`: the writer of a KernelBench ModelNew file for a task
 * folder and a kernel source (validator.h's sg_val_kb_export, handed in by the command
 * table: results stands on common alone). note: lines for the file's docstring. */
typedef int (*sg_results_kb_writer)(const char *task_dir, const char *source, const char *note,
                                    sg_buf *out, sg_err *err);
/* The best correct kernel of task ref (its name: over every task of that name, within
 * campaign when > 0; or its id), or the candidate TASK:N, through writer into out. Refused
 * with a message: no correct kernel, a candidate that is not correct, an OpenCL kernel
 * (KernelBench runs CUDA). */
int sg_results_export_kb(sg_results *r, const char *ref, int64_t campaign,
                         sg_results_kb_writer writer, sg_buf *out, sg_err *err);

/* Campaign ids as users type them ("3", "3,5", "3-9,12"; NULL: every campaign), each
 * checked to exist: 0, or SG_RESULTS_USAGE for a malformed list, -1 for one not there. */
enum { SG_RESULTS_USAGE = -3 };
int sg_results_campaign_ids(sg_results *r, const char *spec, int64_t **ids, int *n, sg_err *err);
/* `results compare`: one row per campaign (configuration, tasks, reached, figures). */
int sg_results_compare(sg_results *r, const int64_t *ids, int n, sg_results_fmt fmt, FILE *out,
                       sg_err *err);
/* `results fastp`: one row per campaign: problems (every task row: one that did not import
 * or could not run counts), not_run, correct, then fast_P for each threshold p (the share of
 * problems whose best correct kernel is more than p times faster than the task's baseline;
 * p = 0: correct), the baselines and precisions, and the check (kb: a kernel counts as
 * correct only when KernelBench's own check recorded with it passed too), kb_checked (the
 * problems with any candidate that KernelBench's check ran on). */
int sg_results_fastp(sg_results *r, const int64_t *ids, int n, const double *p, int np, int kb,
                     sg_results_fmt fmt, FILE *out, sg_err *err);
#define SG_RESULTS_MAX_P 16
/* --p as users type it ("0,1,2"; NULL or "": that default) into at most max thresholds. */
int sg_results_fastp_parse(const char *spec, double *p, int max, int *n, sg_err *err);

/* The report's comparison page: the campaigns side by side, by configuration. */
int sg_results_report_compare(sg_results *r, const int64_t *ids, int n, FILE *out, sg_err *err);

/* The HTML report of one campaign (docs/results.md says what it draws). */
int sg_results_report(sg_results *r, int64_t campaign, FILE *out, sg_err *err);

/* ---- SVG charts (report_svg.c): the report's, and `specgen sim`'s plots ----
 * A chart: width and height in px, the data ranges, and the margins around the plot. */
typedef struct sg_plot {
    FILE *out;
    double w, h, left, right, top, bottom;
    double x0, x1, y0, y1;
} sg_plot;

/* <svg> with a title (escaped) read by screen readers; close with sg_plot_end. */
void sg_plot_begin(sg_plot *p, const char *title);
void sg_plot_end(sg_plot *p);
double sg_plot_x(const sg_plot *p, double x);
double sg_plot_y(const sg_plot *p, double y);
/* Axes with about n ticks at round values; labels formatted with fmt (e.g. "%gs"). */
void sg_plot_axes(sg_plot *p, int nx, const char *xfmt, int ny, const char *yfmt);
/* A text label (escaped). anchor: start | middle | end. */
void sg_plot_text(sg_plot *p, double px, double py, const char *anchor, const char *cls,
                  const char *text);
/* The axes' titles (escaped; NULL: none): x under the plot, y turned along the left edge.
 * Every chart has both (tests/integration/report_compare.sh checks it in Chromium). */
void sg_plot_titles(sg_plot *p, const char *xtitle, const char *ytitle);
/* A rectangle in data x and pixel y (class "data"), with a tooltip (escaped; may be NULL). */
void sg_plot_bar(sg_plot *p, double x0, double x1, double py, double ph, const char *color,
                 const char *tip);

/* `specgen results` and `specgen report` (cmd_results.c, cmd_report.c). */
int sg_cmd_results(int argc, char **argv);
/* The same with the ModelNew writer for `export --kernelbench` (NULL: that export says it
 * is not available). */
int sg_cmd_results_with(int argc, char **argv, sg_results_kb_writer kb);
int sg_cmd_report(int argc, char **argv);

#endif
