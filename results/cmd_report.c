/* `specgen report`: one campaign as a self-contained HTML file. The file is written under a
 * temporary name and renamed, so a failure never leaves half a report; -o naming something
 * other than a regular file (a device, a FIFO, a symbolic link) or the database is refused. */
#include "common/cli.h"
#include "common/opts.h"
#include "common/wfile.h"
#include "results/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const details =
    "Draws, from the results database: the best speedup of each task (bars), the best speedup\n"
    "over time, the pool's utilisation (validate and profile jobs), and one timeline per\n"
    "iteration (the reasoning stream with its fork points and early stop, the forks, the jobs\n"
    "on each slot) with its candidates. One HTML file: inline SVG and CSS, no script, nothing\n"
    "fetched from the network; model text is escaped.\n"
    "\n"
    "With several campaigns (--campaign 3,5 or 3-29), one page puts them side by side, grouped\n"
    "by configuration (a simulation's seeds; a real campaign's kind and policy), each figure\n"
    "with its spread over the group: time-to-target curves, feedback latency and best speedup\n"
    "with error bars, tokens and the pool's utilisation over the campaign's time.\n"
    "\n"
    "Examples:\n"
    "  specgen report -o report.html                 # the latest campaign\n"
    "  specgen report --db runs/results.db --campaign 3 --out c3.html\n"
    "  specgen report --db sim.db --campaign 1-27 -o compare.html";

int sg_cmd_report(int argc, char **argv) {
    const char *db = SG_RESULTS_DEFAULT_DB, *out = NULL;
    const char *campaigns = NULL;
    int64_t campaign = 0, *ids = NULL;
    int nids = 0;
    const sg_opt opts[] = {
        sg_opt_shared(SG_OD_DB, &db),
        {.name = "campaign",
         .kind = SG_OPT_STR,
         .out = &campaigns,
         .metavar = "ID[,ID|A-B...]",
         .help = "the campaign to draw; several: side by side",
         .def = "the latest"},
        {.name = "out",
         .kind = SG_OPT_STR,
         .out = &out,
         .metavar = "FILE",
         .help = "the HTML file to write (required)",
         .short_name = 'o'},
        {0},
    };
    const sg_cmd_spec spec = {"report", "", "Write an HTML report of a campaign.", details, opts,
                              0,        0};
    int rc = sg_cli_parse(&spec, argc, argv, NULL, NULL);
    if (rc == SG_CLI_HELP) return 0;
    if (rc != SG_CLI_OK) return rc;
    if (!out) return sg_cli_fail(&spec, SG_CLI_USAGE, "missing -o FILE (the HTML file to write)");
    struct stat sb;
    if (stat(db, &sb) < 0)
        return sg_cli_fail(&spec, 1,
                           "no results database at %s: `specgen optimize TASK --db %s` records "
                           "one (the default of both is %s), or name one with --db FILE",
                           db, db, SG_RESULTS_DEFAULT_DB);
    sg_err err = {{0}};
    sg_results *r = NULL;
    if (sg_results_open(db, 1, &r, &err) < 0 ||
        (campaigns && (rc = sg_results_campaign_ids(r, campaigns, &ids, &nids, &err)) < 0) ||
        (nids <= 1 && sg_results_resolve_campaign(r, nids ? ids[0] : 0, &campaign, &err) < 0)) {
        sg_results_close(r, NULL);
        free(ids);
        return sg_cli_fail(&spec, rc == SG_RESULTS_USAGE ? SG_CLI_USAGE : 1, "%s", err.msg);
    }
    /* after the open: -o naming the database itself (its inode) is refused too */
    if ((rc = sg_wfile_check(out, "-o", &err)) < 0) {
        sg_results_close(r, NULL);
        free(ids);
        return sg_cli_fail(&spec, SG_CLI_USAGE, "%s", err.msg);
    }
    char *html = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&html, &len);
    if (!f) {
        int e = errno; /* closing the database would change errno */
        sg_results_close(r, NULL);
        free(ids);
        return sg_cli_fail(&spec, 1, "cannot write %s: %s", out, strerror(e));
    }
    rc = nids > 1 ? sg_results_report_compare(r, ids, nids, f, &err)
                  : sg_results_report(r, campaign, f, &err);
    sg_results_close(r, NULL);
    free(ids);
    if (fclose(f) != 0 && rc == 0) rc = sg_errf(&err, "cannot write %s: out of memory", out);
    if (rc == 0) rc = sg_wfile_atomic(out, html, len, &err); /* a temporary, then a rename */
    free(html);
    if (rc < 0) return sg_cli_fail(&spec, rc == SG_WFILE_REFUSED ? SG_CLI_USAGE : 1, "%s", err.msg);
    if (nids > 1)
        fprintf(stderr, "report of %d campaigns side by side written to %s\n", nids, out);
    else
        fprintf(stderr, "report of campaign %lld written to %s\n", (long long)campaign, out);
    return 0;
}
