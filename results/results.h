/* results.h — the results database (SQLite), its queries and the HTML report.
 *
 * Contract (so far): sg_cmd_results and sg_cmd_report are the `specgen results` and
 * `specgen report` commands; they are not built yet and say so (exit 2). The schema, the
 * recorder and the queries come with the results issue; this folder is their home. */
#ifndef SG_RESULTS_H
#define SG_RESULTS_H

int sg_cmd_results(int argc, char **argv);
int sg_cmd_report(int argc, char **argv);

#endif
