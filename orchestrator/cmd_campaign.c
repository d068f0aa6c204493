/* `specgen campaign SUITE_DIR|suite.json`: optimize a suite under time and token budgets.
 * Option parsing only: the runner is orchestrator/campaign.c. */
#include "common/cli.h"
#include "orchestrator/campaign.h"
#include "orchestrator/commands.h"
#include "orchestrator/optimize_ui.h"

#include "common/redact.h"
#include "common/wfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The command that continues campaign id: its suite, --resume ID, then the options it was
 * given (every one that the run needs: --out, --db, --llm, ...; not an earlier --resume).
 * URLs lose their credentials (the line is shown); control characters are escaped. */
static void print_resume(int argc, char **argv, const char *suite, int64_t id) {
    sg_buf b = {0};
    int hidden = 0;
    sg_buf_append_str(&b, "resume:    specgen campaign ");
    sg_redact_append_shell_word(&b, suite);
    sg_buf_printf(&b, " --resume %lld", (long long)id);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--resume") && i + 1 < argc) {
            i++;
            continue;
        }
        if (argv[i] == suite || !strncmp(argv[i], "--resume=", 9)) continue;
        char *shown = sg_redact_url(argv[i]);
        hidden |= strcmp(shown, argv[i]) != 0;
        sg_buf_append_str(&b, " ");
        sg_redact_append_shell_word(&b, shown);
        free(shown);
    }
    sg_buf_append_str(&b, "\n");
    if (hidden) sg_buf_append_str(&b, "           (give the credentials hidden as *** again)\n");
    fputs(b.data, stderr);
    sg_buf_free(&b);
}

static const char details[] =
    "SUITE_DIR holds one folder per task (each with task.json: suites/builtin, suites/demo);\n"
    "suite.json lists task folders instead: {\"tasks\": [\"path\", ...]}, relative to it.\n"
    "A folder of KernelBench problems (NAME.py) is a suite too: each is imported into\n"
    "OUT/NAME/task at --precision with --baseline when its turn comes, beside the running\n"
    "tasks; one that does not import is recorded as not run (docs/kernelbench.md).\n"
    "\n"
    "The tasks run --concurrency at a time on one event loop: they share the LLM endpoints\n"
    "(--max-streams running streams per endpoint) and the validation/profiling pools\n"
    "(docs/pools.md), where tasks take turns. Each task has --task-budget-time and\n"
    "--task-budget-tokens (and --target, when given, overriding each task's); the campaign\n"
    "stops starting tasks and cancels the running ones when its --campaign-budget-time or\n"
    "--campaign-budget-tokens is spent. Without --llm, every task is served its own scripted "
    "trace\n"
    "(prompts/traces/TASK.jsonl), so `specgen campaign suites/demo` runs anywhere.\n"
    "\n"
    "Everything is recorded in the results database (--db; `specgen results` queries it,\n"
    "`specgen report` draws it) and each task writes OUT/TASK/{best.*,events.jsonl,\n"
    "summary.json}. stdout gets the result (a table of the tasks; --json: one object), stderr\n"
    "the log, with a status line on a terminal, else a progress line every\n"
    "--progress-interval; --metrics-listen serves Prometheus metrics (docs/deployment.md).\n"
    "Ctrl-C (or SIGTERM) cancels the running tasks, records them, and prints\n"
    "the command that resumes; after a crash or SIGKILL, --resume ID continues the campaign\n"
    "without redoing the tasks that ended (an unfinished one runs again from its start).\n"
    "A task that cannot run (its task.json does not load, its output folder cannot be\n"
    "written or is in use) is skipped with its reason, recorded as skipped, and run again by\n"
    "--resume. A task listed twice in a suite.json is refused (each runs once, in OUT/TASK).\n"
    "Exit status: 0 when the campaign ran to its end or its budget, every task having run;\n"
    "1 on an error, or when no task could run; 2 on bad usage; 3 when some tasks could not\n"
    "run (the last line says how many); 130 when it was stopped.\n"
    "\n"
    "Examples:\n"
    "  specgen campaign suites/demo\n"
    "  specgen campaign suites/builtin --tasks 'soft*' --llm http://127.0.0.1:8000 --model "
    "Qwen/Qwen3-8B\n"
    "  specgen campaign suites/builtin --resume 3\n";

/* What the parse cannot check alone (the ranges are the table's), as a usage error. */
static int check(const sg_cmd_spec *spec, sg_run_opts *ro, sg_run_config *rc, const char *admission,
                 sg_campaign_config *cc) {
    sg_err err;
    if (sg_run_opts_apply(ro, rc, &err) < 0) return sg_cli_fail(spec, 2, "%s", err.msg);
    char amsg[256];
    if (sg_admit_parse(admission, &cc->admit, amsg, sizeof amsg) < 0)
        return sg_cli_fail(spec, 2, "--admission: %s", amsg);
    /* A --db that is a FIFO or a device is bad usage, said before any task starts. */
    if (rc->db && strcmp(rc->db, "none") && sg_wfile_check(rc->db, "--db", &err) < 0)
        return sg_cli_fail(spec, 2, "%s", err.msg);
    return 0;
}

/* The result on stdout (the log is stderr's): a table of the tasks, or with --json one object
 * with the campaign's counts and the same rows. */
static void print_result(const sg_run_config *rc, const sg_campaign_result *res) {
    size_t n = json_array_size(res->rows);
    if (rc->json) {
        json_t *o = json_pack("{s:I,s:i,s:i,s:i,s:i,s:i,s:b,s:b,s:O}", "campaign",
                              (json_int_t)res->id, "tasks", res->tasks, "done", res->done, "failed",
                              res->failed, "skipped", res->skipped, "not_run", res->not_run,
                              "stopped", res->stopped, "budget", res->budget, "rows", res->rows);
        json_dumpf(o, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
        json_decref(o);
        fflush(stdout);
        return;
    }
    if (!n) return;
    sg_ui_row *rows = sg_xcalloc(n, sizeof *rows);
    for (size_t i = 0; i < n; i++) {
        json_t *r = json_array_get(res->rows, i);
        rows[i] =
            (sg_ui_row){.task = json_string_value(json_object_get(r, "task")),
                        .best = json_number_value(json_object_get(r, "best_speedup")),
                        .target = json_number_value(json_object_get(r, "target")),
                        .met = json_is_true(json_object_get(r, "met")),
                        .time_ns = (int64_t)(json_number_value(json_object_get(r, "time_s")) * 1e9),
                        .tokens = (uint64_t)json_integer_value(json_object_get(r, "tokens")),
                        .end = json_string_value(json_object_get(r, "end"))};
    }
    fputc('\n', stdout);
    sg_ui_table(stdout, rows, (int)n);
    free(rows);
}

/* Runs the campaign, prints its end, and returns the exit status (see details). */
static int run(const sg_cmd_spec *spec, const sg_campaign_config *cc, const sg_run_config *rc,
               int argc, char **args) {
    sg_err err;
    sg_campaign_result res;
    int ran = sg_campaign_run(cc, rc, &res, &err);
    print_result(rc, &res);
    json_decref(res.rows);
    if (res.first_token_timeouts)
        fprintf(stderr,
                "llm stalls: %d generation%s got no token within the first-token timeout of %g s "
                "(--first-token-timeout)\n",
                res.first_token_timeouts, res.first_token_timeouts == 1 ? "" : "s",
                (double)rc->first_token_timeout_ns / 1e9);
    char not_run[48] = "";
    if (res.not_run) snprintf(not_run, sizeof not_run, ", %d could not run", res.not_run);
    fprintf(stderr, "\n== specgen campaign %lld: %d task%s: %d done, %d failed, %d skipped%s%s%s\n",
            (long long)res.id, res.tasks, res.tasks == 1 ? "" : "s", res.done, res.failed,
            res.skipped, not_run, res.stopped ? "; stopped" : "",
            res.budget ? "; budget spent" : "");
    if (res.forks_done) { /* the forks' prefix reuse over every task that ran */
        sg_task_stats ps = {.fork_prompt_tokens = res.fork_prompt_tokens,
                            .fork_cached_tokens = res.fork_cached_tokens,
                            .forks_cache_reported = res.forks_cache_reported,
                            .forks_done = res.forks_done};
        sg_ui_prefix_reuse(stderr, &ps);
    }
    if (res.id > 0) {
        sg_buf db = {0};
        if (rc->db) sg_redact_append_shell_word(&db, rc->db);
        fprintf(stderr, "results:   specgen results tasks --campaign %lld%s%s\n", (long long)res.id,
                rc->db ? " --db " : "", rc->db ? db.data : "");
        sg_buf_free(&db);
    }
    if (res.id > 0 && (res.stopped || ran < 0 || res.not_run))
        print_resume(argc, args, cc->suite, res.id);
    char shown[1200];
    if (ran < 0) return sg_cli_fail(spec, 1, "%s", sg_redact_ctrl(shown, sizeof shown, err.msg));
    if (res.stopped) return 130;
    if (!res.not_run) return 0;
    if (res.not_run == res.tasks - res.skipped)
        return sg_cli_fail(spec, 1, "no task could run (%d of %d: the reasons are above)",
                           res.not_run, res.tasks);
    fprintf(stderr,
            "specgen campaign: %d of %d tasks could not run (the reasons are above): exit 3\n",
            res.not_run, res.tasks);
    return 3;
}

int sg_cmd_campaign(int argc, char **argv) {
    sg_run_config rc;
    sg_run_config_default(&rc);
    rc.log_name = "specgen campaign";
    sg_campaign_config cc;
    sg_campaign_config_default(&cc);
    sg_run_opts ro;
    sg_run_opts_default(&ro, &rc);
    int64_t concurrency = cc.concurrency, resume = 0, max_streams = 0;
    const char *admission = "auto";
    sg_val_init_opts io = {0}; /* a KernelBench problem's import: --precision, --baseline */
    rc.init = &io;
    sg_opt opts[SG_RUN_NOPTS + 16] = {
        {.name = "tasks",
         .kind = SG_OPT_STR,
         .out = &cc.glob,
         .metavar = "GLOB",
         .help = "only the task folders whose name matches",
         .def = "all"},
        {.name = "concurrency",
         .kind = SG_OPT_INT,
         .out = &concurrency,
         .metavar = "N",
         .help = "tasks running at once",
         .def = "2",
         .min = 1,
         .max = 256},
        {.name = "admission",
         .kind = SG_OPT_STR,
         .out = &admission,
         .metavar = "P",
         .help = "how many tasks run iterations at once, at most --concurrency: auto (follows "
                 "the LLM servers' cache pressure: KV usage, preemptions, waiting requests on "
                 "/metrics, and the token rate and failed streams seen here) or fixed:N; a "
                 "task over the limit waits between iterations (docs/campaign.md)",
         .def = "auto"},
        {.name = "admission-interval",
         .kind = SG_OPT_DURATION,
         .out = &cc.admit.interval_ns,
         .metavar = "T",
         .help = "time between admission decisions (and /metrics reads)",
         .def = "10s",
         .min = 100000000,
         .max = 3600LL * 1000000000LL},
        sg_opt_shared(SG_OD_CAMPAIGN_BUDGET_TIME, &cc.budget_ns),
        sg_opt_shared(SG_OD_CAMPAIGN_BUDGET_TOKENS, &cc.budget_tokens),
        {.name = "resume",
         .kind = SG_OPT_INT,
         .out = &resume,
         .metavar = "ID",
         .help = "continue campaign ID (same suite)",
         .min = 1,
         .max = 1e9},
        {.name = "out",
         .kind = SG_OPT_STR,
         .out = &rc.out_dir,
         .metavar = "DIR",
         .help = "output folder (one subfolder per task)",
         .def = "specgen-out/campaign-ID",
         .short_name = 'o'},
        sg_opt_shared(SG_OD_PRECISION, &io.precision),
        sg_opt_shared(SG_OD_TORCH_BASELINE, &io.baseline),
        {.name = "max-streams",
         .kind = SG_OPT_INT,
         .out = &max_streams,
         .metavar = "N",
         .help = "running streams per endpoint (0: no cap)",
         .def = "no cap",
         .min = 0,
         .max = 4096},
    };
    int nopts = 0;
    while (opts[nopts].name) nopts++;
    sg_run_opts_table(&ro, &rc, 1, opts + nopts);
    const sg_cmd_spec spec = {"campaign",
                              "SUITE_DIR|suite.json",
                              "Optimize a whole kernel suite under time and token budgets; every "
                              "result goes to the results database.",
                              details,
                              opts,
                              1,
                              1};
    char **pos;
    int npos;
    char **args = sg_xcalloc((size_t)argc + 1, sizeof *args); /* the parse reorders argv */
    memcpy(args, argv, (size_t)argc * sizeof *args);
    int rcode = sg_cli_parse(&spec, argc, argv, &pos, &npos);
    if (rcode == SG_CLI_OK) rcode = check(&spec, &ro, &rc, admission, &cc);
    if (rcode == SG_CLI_OK) {
        cc.suite = pos[0];
        cc.concurrency = (int)concurrency;
        cc.resume = resume;
        rc.max_per_endpoint = (int)max_streams;
        rcode = run(&spec, &cc, &rc, argc, args);
    } else if (rcode == SG_CLI_HELP) {
        rcode = 0;
    }
    free(args);
    return rcode;
}
