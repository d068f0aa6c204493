/* `specgen report`: one campaign as a self-contained HTML file. The file is written under a
 * temporary name and renamed, so a failure never leaves half a report. */
#include "common/cli.h"
#include "results/internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const details =
    "Draws, from the results database: the best speedup of each task (bars), the best speedup\n"
    "over time, the pool's utilisation (validate and profile jobs), and one timeline per\n"
    "iteration (the reasoning stream with its fork points and early stop, the forks, the jobs\n"
    "on each slot) with its candidates. One HTML file: inline SVG and CSS, no script, nothing\n"
    "fetched from the network; model text is escaped.\n"
    "\n"
    "Examples:\n"
    "  specgen report -o report.html                 # the latest campaign\n"
    "  specgen report --db runs/results.db --campaign 3 --out c3.html";

int sg_cmd_report(int argc, char **argv) {
    const char *db = SG_RESULTS_DEFAULT_DB, *out = NULL;
    int64_t campaign = 0;
    const sg_opt opts[] = {
        {"db", SG_OPT_STR, &db, "FILE", "results database", SG_RESULTS_DEFAULT_DB, NULL, 0},
        {"campaign", SG_OPT_INT, &campaign, "ID", "the campaign to draw", "the latest", NULL, 0},
        {"out", SG_OPT_STR, &out, "FILE", "the HTML file to write (required)", NULL, NULL, 'o'},
        {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
    };
    const sg_cmd_spec spec = {"report", "", "Write an HTML report of a campaign.", details, opts,
                              0,        0};
    int rc = sg_cli_parse(&spec, argc, argv, NULL, NULL);
    if (rc == SG_CLI_HELP) return 0;
    if (rc != SG_CLI_OK) return rc;
    if (!out) return sg_cli_fail(&spec, SG_CLI_USAGE, "missing -o FILE (the HTML file to write)");
    if (campaign < 0)
        return sg_cli_fail(&spec, SG_CLI_USAGE, "--campaign %lld: expected a campaign id (> 0)",
                           (long long)campaign);
    struct stat sb;
    if (stat(db, &sb) < 0)
        return sg_cli_fail(&spec, 1,
                           "no results database at %s: `specgen optimize TASK --db %s` records "
                           "one (the default of both is %s), or name one with --db FILE",
                           db, db, SG_RESULTS_DEFAULT_DB);
    sg_err err = {{0}};
    sg_results *r = NULL;
    if (sg_results_open(db, 1, &r, &err) < 0 ||
        sg_results_resolve_campaign(r, campaign, &campaign, &err) < 0) {
        sg_results_close(r, NULL);
        return sg_cli_fail(&spec, 1, "%s", err.msg);
    }
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        sg_results_close(r, NULL);
        return sg_cli_fail(&spec, 1, "cannot write %s: %s", tmp, strerror(errno));
    }
    rc = sg_results_report(r, campaign, f, &err);
    sg_results_close(r, NULL);
    if (fclose(f) != 0 && rc == 0) rc = sg_errf(&err, "cannot write %s: %s", tmp, strerror(errno));
    if (rc == 0 && rename(tmp, out) < 0)
        rc = sg_errf(&err, "cannot rename %s to %s: %s", tmp, out, strerror(errno));
    if (rc < 0) {
        unlink(tmp);
        return sg_cli_fail(&spec, 1, "%s", err.msg);
    }
    fprintf(stderr, "report of campaign %lld written to %s\n", (long long)campaign, out);
    return 0;
}
