/* `specgen results`: the subcommands over a read-only connection to the database. */
#include "common/cli.h"
#include "common/opts.h"
#include "common/wfile.h"
#include "results/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct args {
    const char *db, *task, *iteration, *format, *table, *out;
    const char *p;  /* fastp: --p thresholds */
    const char *kb; /* export --kernelbench TASK */
    sg_results_kb_writer kb_writer;
    int kb_check;          /* fastp: --kb-check */
    const char *campaigns; /* --campaign as given: one id, or (compare) a list */
    int64_t campaign;
    int json, csv;
    sg_results_fmt fmt;
    FILE *to; /* stdout, or -o FILE (export opens its own) */
    sg_results *r;
    const sg_cmd_spec *spec;
} args;

static const char *const campaigns_sql =
    "SELECT c.id, c.kind, c.suite, c.status, c.started, c.ended, "
    "(SELECT count(*) FROM task WHERE campaign = c.id) AS tasks, "
    "(SELECT max(best_speedup) FROM task WHERE campaign = c.id) AS best_speedup "
    "FROM campaign c ORDER BY c.id";

/* candidates: the task's highest candidate number (an index seek, not a count). best_n is
 * the task's candidate number (what the console and `results candidates` call it),
 * best_candidate_id its row (what `results best` and `results show ID` take). */
static const char *const tasks_sql =
    "SELECT t.id, t.campaign, t.name, t.status, t.best_speedup, t.best_n, t.best_candidate_id, "
    "t.target, "
    "t.iterations, (SELECT max(n) FROM candidate WHERE task = t.id) AS candidates, "
    "t.reasoning_tokens, t.tokens, t.elapsed_s, t.baseline_ns, t.error "
    "FROM task t WHERE (?1 IS NULL OR t.campaign = ?1) ORDER BY t.id";

/* The best correct candidate of each task name over the campaigns chosen (index
 * candidate_speed: one seek per task row). */
static const char *const best_sql =
    "SELECT task, speedup, n, candidate_id, task_id, campaign, iteration, origin, rule, "
    "at_tokens, time_ns, baseline_ns FROM (SELECT t.name AS task, c.speedup, c.id AS "
    "candidate_id, t.id AS task_id, t.campaign, c.n, c.iteration, c.origin, c.rule, c.at_tokens, "
    "coalesce(c.time_ns, t.baseline_ns / c.speedup) AS time_ns, "
    "coalesce(c.baseline_ns, t.baseline_ns) AS baseline_ns, "
    "row_number() OVER (PARTITION BY t.name ORDER BY c.speedup DESC, c.id) AS rk "
    "FROM task t JOIN candidate c ON c.id = (SELECT id FROM candidate WHERE task = t.id AND "
    "correct = 1 ORDER BY speedup DESC LIMIT 1) "
    "WHERE (?1 IS NULL OR t.campaign = ?1) AND (?2 IS NULL OR t.name = ?2 OR t.id = ?2)) "
    "WHERE rk = 1 ORDER BY task";

static const char *const candidates_sql =
    "SELECT id, n, iteration, origin, fork, rule, at_tokens, status, verdict, speedup, noise, "
    "time_ns, baseline_ns, created_ms, coalesce(message, reason) AS message FROM candidate "
    "WHERE task = ? ORDER BY n";

static const char *const iterations_sql =
    "SELECT i.rowid AS id, i.n AS iteration, i.started_ms, i.early_stop_ms, "
    "i.early_stop_tokens, (SELECT count(*) FROM generation g WHERE g.task = i.task AND "
    "g.iteration = i.n AND g.kind = 'fork') AS forks, (SELECT count(*) FROM candidate c WHERE "
    "c.task = i.task AND c.iteration = i.n) AS candidates, (SELECT max(speedup) FROM candidate "
    "c WHERE c.task = i.task AND c.iteration = i.n AND c.correct = 1) AS best_speedup "
    "FROM iteration i WHERE i.task = ? ORDER BY i.n";

/* The iteration's events in time order; `data` columns print as JSON objects with --json. */
static const char *const timeline_sql =
    "SELECT t_ms, task_t_ms, ev, json_remove(data, '$.ev', '$.t_ms', '$.iteration', "
    "'$.source') AS data "
    "FROM event WHERE task = ? AND iteration = ? ORDER BY t_ms, id";

static const char *const details =
    "Subcommands:\n"
    "  campaigns                      every campaign (an optimize run is one with one task)\n"
    "  tasks [--campaign ID]          tasks: status, best speedup, iterations, tokens\n"
    "  best [--task T] [--campaign ID]  the best correct kernel of each task name\n"
    "  candidates --task T            a task's candidates: verdict, speedup, origin\n"
    "  show CANDIDATE                 one candidate: source, verdict, timing, message,\n"
    "                                 feedback, lineage to its fork point, its jobs\n"
    "  iterations --task T            a task's iterations: forks, early stop, best\n"
    "  timeline --iteration I         the events of one iteration, in time order\n"
    "  export --format csv|json       tables (--table T; -o FILE, or -o DIR: one CSV each)\n"
    "  export --kernelbench TASK      the best correct CUDA kernel of a task imported from a\n"
    "                                 KernelBench problem (or TASK:N) as a ModelNew file for\n"
    "                                 KernelBench's own evaluation (-o model_new.py)\n"
    "  query \"SQL\"                    one read-only SQL statement (docs/results.md: tables)\n"
    "  compare [--campaign A,B|A-B]   campaigns side by side (default: all): configuration,\n"
    "                                 tasks, reached, best speedup, time to target, feedback\n"
    "                                 latency, tokens, utilisation (`report` draws them)\n"
    "  fastp [--p 0,1,2] [--campaign A,B|A-B] [--kb-check]\n"
    "                                 fast_p per campaign as KernelBench reports it: the share\n"
    "                                 of its problems (all, those that did not import or run\n"
    "                                 too) whose best kernel is correct and > p times faster\n"
    "                                 than the baseline (docs/kernelbench.md)\n"
    "\n"
    "A task T is a task id or name (the latest task of that name); a CANDIDATE is its id or\n"
    "TASK:N (candidate N of the task); an iteration I is TASK:N or its id. Tables on a\n"
    "terminal, --json or --csv (--format json|csv) for scripts; show writes a table or JSON,\n"
    "export CSV or JSON, and a format a subcommand cannot write is refused. -o FILE writes\n"
    "to FILE instead of stdout. The database is opened read-only.\n"
    "\n"
    "Examples:\n"
    "  specgen results campaigns\n"
    "  specgen results best --json\n"
    "  specgen results candidates --task vector_scale\n"
    "  specgen results show vector_scale:2\n"
    "  specgen results timeline --iteration vector_scale:1\n"
    "  specgen results export --format csv --table candidate > candidates.csv\n"
    "  specgen results export --kernelbench 19_ReLU -o model_new.py\n"
    "  specgen results query \"SELECT name, best_speedup FROM task ORDER BY 2 DESC\"\n"
    "  specgen results compare --campaign 1-27 --format csv\n"
    "  specgen results fastp --campaign 3 --p 0,1,1.5,2";

static int usage(args *a, const char *fmt, const char *what) {
    return sg_cli_fail(a->spec, SG_CLI_USAGE, fmt, what);
}

static int need_task(args *a, const char *sub, int64_t *task, sg_err *err) {
    if (!a->task)
        return sg_errf(
            err, "%s needs --task T (a task id or name; `specgen results tasks` lists them)", sub);
    return sg_results_resolve_task(a->r, a->task, a->campaign, task, err);
}

/* export --kernelbench TASK: the ModelNew file to -o FILE (written whole, or not at all) or
 * stdout. */
static int export_kb(args *a, sg_err *err) {
    if (!a->kb_writer)
        return sg_errf(err, "export --kernelbench is not available in this build of results");
    sg_buf py = {0};
    int rc = sg_results_export_kb(a->r, a->kb, a->campaign, a->kb_writer, &py, err);
    if (rc == 0 && a->out) rc = sg_wfile_atomic(a->out, py.data, py.len, err);
    if (rc == 0 && !a->out) fwrite(py.data, 1, py.len, stdout);
    if (rc == 0 && a->out)
        fprintf(stderr,
                "ModelNew written to %s: check it with KernelBench's own evaluation on a GPU "
                "(docs/kernelbench.md \"Export\")\n",
                a->out);
    sg_buf_free(&py);
    return rc;
}

static int run_sub(args *a, const char *sub, const char *arg, sg_err *err) {
    sg_results *r = a->r;
    char id[32], id2[32], camp[32];
    snprintf(camp, sizeof camp, "%lld", (long long)a->campaign);
    const char *campaign = a->campaign > 0 ? camp : NULL;
    if (a->campaign > 0 && strcmp(sub, "compare") &&
        sg_results_resolve_campaign(r, a->campaign, &(int64_t){0}, err) < 0)
        return -1;
    int64_t task, n;
    if (!strcmp(sub, "campaigns"))
        return sg_results_query(r, campaigns_sql, NULL, 0, a->fmt, 60, a->to, err);
    if (!strcmp(sub, "tasks"))
        return sg_results_query(r, tasks_sql, &campaign, 1, a->fmt, 60, a->to, err);
    if (!strcmp(sub, "best")) {
        if (a->task && sg_results_resolve_task(r, a->task, a->campaign, &task, err) < 0) return -1;
        const char *p[] = {campaign, a->task};
        return sg_results_query(r, best_sql, p, 2, a->fmt, 60, a->to, err);
    }
    if (!strcmp(sub, "candidates") || !strcmp(sub, "iterations")) {
        if (need_task(a, sub, &task, err) < 0) return -1;
        snprintf(id, sizeof id, "%lld", (long long)task);
        const char *p[] = {id};
        return sg_results_query(r, sub[0] == 'c' ? candidates_sql : iterations_sql, p, 1, a->fmt,
                                60, a->to, err);
    }
    if (!strcmp(sub, "show")) {
        if (!arg)
            return sg_errf(err,
                           "show needs a CANDIDATE (its id, or TASK:N such as vector_scale:2)");
        if (sg_results_resolve_candidate(r, arg, &n, err) < 0) return -1;
        return sg_results_show_candidate(r, n, a->fmt, a->to, err);
    }
    if (!strcmp(sub, "timeline")) {
        const char *ref = a->iteration ? a->iteration : arg;
        if (!ref)
            return sg_errf(
                err,
                "timeline needs --iteration I (TASK:N such as vector_scale:1, or an iteration id)");
        if (sg_results_resolve_iteration(r, ref, &task, &n, err) < 0) return -1;
        snprintf(id, sizeof id, "%lld", (long long)task);
        snprintf(id2, sizeof id2, "%lld", (long long)n);
        const char *p[] = {id, id2};
        return sg_results_query(r, timeline_sql, p, 2, a->fmt, 120, a->to, err);
    }
    if (!strcmp(sub, "export") && a->kb) return export_kb(a, err);
    if (!strcmp(sub, "export")) {
        sg_results_fmt f = a->fmt; /* csv or json: pick_format */
        int to_dir = a->out && f == SG_RESULTS_CSV && !a->table;
        FILE *out = stdout;
        int rc = a->out && !to_dir ? sg_wfile_check(a->out, "-o", err) : 0;
        if (rc == 0 && a->out && !to_dir) rc = sg_wfile_fopen(a->out, 0, &out, err);
        if (rc < 0) return rc;
        rc = sg_results_export(r, f, a->table, to_dir ? a->out : NULL, out, err);
        if (out != stdout && fclose(out) != 0 && rc == 0)
            return sg_errf(err, "cannot write %s: %s", a->out, strerror(errno));
        return rc;
    }
    if (!strcmp(sub, "query")) {
        if (!arg) return sg_errf(err, "query needs one SQL statement, e.g. \"SELECT * FROM task\"");
        return sg_results_query_user(r, arg, a->fmt, a->to, err);
    }
    if (!strcmp(sub, "compare") || !strcmp(sub, "fastp")) {
        int64_t *ids;
        double p[SG_RESULTS_MAX_P];
        int np = 0, nids, rc = sg_results_campaign_ids(r, a->campaigns, &ids, &nids, err);
        if (rc == 0 && sub[0] == 'c') rc = sg_results_compare(r, ids, nids, a->fmt, a->to, err);
        if (rc == 0 && sub[0] == 'f' &&
            sg_results_fastp_parse(a->p, p, SG_RESULTS_MAX_P, &np, err) == 0)
            rc = sg_results_fastp(r, ids, nids, p, np, a->kb_check, a->fmt, a->to, err);
        free(ids);
        return rc;
    }
    return sg_errf(err,
                   "unknown subcommand '%s' (campaigns, tasks, best, candidates, show, iterations, "
                   "timeline, export, query, compare, fastp)",
                   sub);
}

/* --format, --json and --csv into a->fmt. Each subcommand is refused a format it cannot
 * write: show writes a table or JSON; export CSV or JSON, and needs one. */
static int pick_format(args *a, const char *sub, sg_err *err) {
    const char *f = a->format, *flag = a->json ? "json" : a->csv ? "csv" : NULL;
    if (f && strcmp(f, "csv") && strcmp(f, "json") && strcmp(f, "table"))
        return sg_errf(err, "--format '%s': expected csv, json or table", f);
    if (a->json && a->csv) return sg_errf(err, "--json --csv: choose one of --json and --csv");
    if (flag && f && strcmp(flag, f))
        return sg_errf(err, "--%s and --format %s: choose one", flag, f);
    if (!f) f = flag;
    int is_export = !strcmp(sub, "export"), is_show = !strcmp(sub, "show");
    if (a->kb && !is_export) return sg_errf(err, "--kernelbench is an option of results export");
    if (a->kb && (f || a->table))
        return sg_errf(err, "export --kernelbench writes a Python file: drop --%s",
                       a->table  ? "table"
                       : a->json ? "json"
                       : a->csv  ? "csv"
                                 : "format");
    if (a->kb) return 0;
    if (is_export && !f) return sg_errf(err, "export needs --format csv|json (or --csv, --json)");
    if (f && ((is_export && !strcmp(f, "table")) || (is_show && !strcmp(f, "csv"))))
        return sg_errf(err, "results %s cannot write %s (it writes %s)", sub, f,
                       is_export ? "csv or json" : "a table or json");
    a->fmt = !f || !strcmp(f, "table") ? SG_RESULTS_TEXT
             : !strcmp(f, "csv")       ? SG_RESULTS_CSV
                                       : SG_RESULTS_JSON;
    return 0;
}

/* What can be told wrong before the database is opened (exit 2). */
static int check_usage(args *a, const char *sub, const char *arg, sg_err *err) {
    static const char *const subs[] = {"campaigns", "tasks",      "best",     "candidates",
                                       "show",      "iterations", "timeline", "export",
                                       "query",     "compare",    "fastp"};
    int known = 0;
    for (size_t i = 0; i < sizeof subs / sizeof *subs; i++) known |= !strcmp(sub, subs[i]);
    if (!known)
        return sg_errf(err,
                       "unknown subcommand '%s' (campaigns, tasks, best, candidates, show, "
                       "iterations, timeline, export, query, compare, fastp)",
                       sub);
    if ((!strcmp(sub, "candidates") || !strcmp(sub, "iterations")) && !a->task)
        return sg_errf(err,
                       "%s needs --task T (a task id or name; `specgen results tasks` lists "
                       "them)",
                       sub);
    if (!strcmp(sub, "show") && !arg)
        return sg_errf(err, "show needs a CANDIDATE (its id, or TASK:N such as vector_scale:2)");
    if (!strcmp(sub, "timeline") && !arg && !a->iteration)
        return sg_errf(err, "timeline needs --iteration I (TASK:N such as vector_scale:1, or an "
                            "iteration id)");
    if (!strcmp(sub, "query") && !arg)
        return sg_errf(err, "query needs one SQL statement, e.g. \"SELECT * FROM task\"");
    if ((a->p || a->kb_check) && strcmp(sub, "fastp"))
        return sg_errf(err, "--%s is an option of results fastp", a->p ? "p" : "kb-check");
    double p[SG_RESULTS_MAX_P];
    int np;
    if (!strcmp(sub, "fastp") && sg_results_fastp_parse(a->p, p, SG_RESULTS_MAX_P, &np, err) < 0)
        return -1;
    /* one id (compare and fastp take a list) */
    if (a->campaigns && strcmp(sub, "compare") && strcmp(sub, "fastp")) {
        char *end;
        long long v = strtoll(a->campaigns, &end, 10);
        if (end == a->campaigns || *end || v < 1)
            return sg_errf(err,
                           "--campaign '%s': expected one campaign id (several: results compare, "
                           "results fastp)",
                           a->campaigns);
        a->campaign = v;
    }
    return pick_format(a, sub, err);
}

static int open_db(args *a, sg_err *err) {
    struct stat sb;
    if (stat(a->db, &sb) < 0) {
        if (errno == ENOENT)
            return sg_errf(err,
                           "no results database at %s: `specgen optimize TASK --db %s` records "
                           "one (the default of both is %s), or name one with --db FILE",
                           a->db, a->db, SG_RESULTS_DEFAULT_DB);
        return sg_errf(err, "results database %s: %s", a->db, strerror(errno));
    }
    if (S_ISDIR(sb.st_mode))
        return sg_errf(err,
                       "results database %s is a folder; --db names the file (e.g. %s/results.db)",
                       a->db, a->db);
    if (sg_results_open(a->db, 1, &a->r, err) < 0) return -1;
    /* a second lock on top of the read-only open: no statement may write */
    if (sqlite3_exec(sg_results_db(a->r), "PRAGMA query_only = ON", NULL, NULL, NULL) != SQLITE_OK)
        return sg_results_fail(a->r, "cannot make the connection read-only", err);
    return 0;
}

/* -o FILE for a subcommand other than export (which writes a file or a folder itself):
 * what would be printed goes there. After the open: naming the database is refused. */
static int open_to(args *a, const char *sub, sg_err *err) {
    a->to = stdout;
    if (!a->out || !strcmp(sub, "export")) return 0;
    int rc = sg_wfile_check(a->out, "-o", err);
    return rc < 0 ? rc : sg_wfile_fopen(a->out, 0, &a->to, err);
}

/* Opens the database, runs sub, closes; the exit status. */
static int run(args *a, const char *sub, const char *arg) {
    sg_err err = {{0}};
    int rc;
    if ((rc = open_db(a, &err)) < 0 || (rc = open_to(a, sub, &err)) < 0 ||
        (rc = run_sub(a, sub, arg, &err)) < 0) {
        /* an -o that names a device, a FIFO, a link or the database: bad input */
        rc = sg_cli_fail(a->spec,
                         rc == SG_WFILE_REFUSED || rc == SG_RESULTS_USAGE ? SG_CLI_USAGE : 1, "%s",
                         err.msg);
    } else {
        rc = 0;
    }
    if (a->to && a->to != stdout && fclose(a->to) != 0 && rc == 0)
        rc = sg_cli_fail(a->spec, 1, "cannot write %s: %s", a->out, strerror(errno));
    sg_results_close(a->r, NULL);
    return rc;
}

int sg_cmd_results(int argc, char **argv) { return sg_cmd_results_with(argc, argv, NULL); }

int sg_cmd_results_with(int argc, char **argv, sg_results_kb_writer kb) {
    args a = {.db = SG_RESULTS_DEFAULT_DB, .kb_writer = kb};
    const sg_opt opts[] = {
        sg_opt_shared(SG_OD_DB, &a.db),
        sg_opt_shared(SG_OD_JSON, &a.json),
        {.name = "csv",
         .kind = SG_OPT_FLAG,
         .out = &a.csv,
         .help = "print CSV with a header line (--format csv)"},
        {.name = "format",
         .kind = SG_OPT_STR,
         .out = &a.format,
         .metavar = "csv|json|table",
         .help = "output format (show: table|json; export: csv|json)",
         .def = "table"},
        {.name = "campaign",
         .kind = SG_OPT_STR,
         .out = &a.campaigns,
         .metavar = "ID",
         .help = "only this campaign (tasks, best, ...); compare: a list, 3,5 or 3-9"},
        {.name = "task",
         .kind = SG_OPT_STR,
         .out = &a.task,
         .metavar = "T",
         .help = "task id or name"},
        {.name = "iteration",
         .kind = SG_OPT_STR,
         .out = &a.iteration,
         .metavar = "I",
         .help = "TASK:N or iteration id (timeline)"},
        {.name = "p",
         .kind = SG_OPT_STR,
         .out = &a.p,
         .metavar = "P,P...",
         .help = "fastp: the speedup thresholds (fast_P: correct and more than P times faster)",
         .def = "0,1,2"},
        {.name = "kb-check",
         .kind = SG_OPT_FLAG,
         .out = &a.kb_check,
         .help = "fastp: count a kernel as correct only when KernelBench's own check (recorded "
                 "with it) passed too"},
        {.name = "kernelbench",
         .kind = SG_OPT_STR,
         .out = &a.kb,
         .metavar = "TASK",
         .help = "export: the best CUDA kernel of TASK (or TASK:N) as a KernelBench ModelNew"},
        {.name = "table",
         .kind = SG_OPT_STR,
         .out = &a.table,
         .metavar = "NAME",
         .help = "export one table"},
        {.name = "out",
         .kind = SG_OPT_STR,
         .out = &a.out,
         .metavar = "FILE|DIR",
         .help = "write to FILE instead of stdout (export in CSV of every table: a folder)",
         .short_name = 'o'},
        {0},
    };
    const sg_cmd_spec spec = {
        "results", "SUBCOMMAND [ARG]", "Query the results database.", details, opts, 1, 2};
    a.spec = &spec;
    char **pos;
    int npos;
    int rc = sg_cli_parse(&spec, argc, argv, &pos, &npos);
    if (rc == SG_CLI_HELP) return 0;
    if (rc != SG_CLI_OK) return rc;
    const char *sub = pos[0], *arg = npos > 1 ? pos[1] : NULL;
    static const char *const with_arg[] = {"show", "query", "timeline"};
    int takes = 0;
    for (size_t i = 0; i < 3; i++) takes |= !strcmp(sub, with_arg[i]);
    if (arg && !takes) return usage(&a, "unexpected argument '%s'", arg);
    sg_err err = {{0}};
    if (check_usage(&a, sub, arg, &err) < 0) return sg_cli_fail(&spec, SG_CLI_USAGE, "%s", err.msg);
    return run(&a, sub, arg);
}
