/* commands.h — the entry points of `specgen <command>`.
 *
 * Contract: each command is `int sg_cmd_NAME(int argc, char **argv)` where argv[0]
 * is the command name; it parses its own options with cli.h, prints its own errors,
 * and returns the process exit code: 0 success, 1 failure at run time, 2 usage error
 * or "not built yet". Each lives in its module's folder (kvstore/cmd_kvstore.c, ...) and
 * is declared in that module's public header; the table (commands.c) includes those
 * headers, so commands register downward and no module includes orchestrator/. */
#ifndef SG_COMMANDS_H
#define SG_COMMANDS_H

#include "common/cli.h"

/* The commands that live here, on top: they wire the modules below into one run. */
int sg_cmd_optimize(int argc, char **argv);
int sg_cmd_campaign(int argc, char **argv);
int sg_cmd_sim(int argc, char **argv);
int sg_cmd_sim_fit(int argc, char **argv); /* `specgen sim fit` */
int sg_cmd_calibrate(int argc, char **argv);
int sg_cmd_completion(int argc, char **argv); /* cmd_completion.c */
int sg_cmd_options(int argc, char **argv);

/* The table, in the order `specgen --help` lists it; ends with {NULL}. */
extern const sg_command sg_commands[];

#endif
