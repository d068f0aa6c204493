/* commands.h — the entry points of `specgen <command>`.
 *
 * Contract: each command is `int sg_cmd_NAME(int argc, char **argv)` where argv[0]
 * is the command name; it parses its own options with cli.h, prints its own errors,
 * and returns the process exit code: 0 success, 1 failure at run time, 2 usage error
 * or "not built yet". Each lives in its module's folder (kvstore/cmd_kvstore.c, ...). */
#ifndef SG_COMMANDS_H
#define SG_COMMANDS_H

typedef struct sg_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} sg_command;

int sg_cmd_optimize(int argc, char **argv);
int sg_cmd_campaign(int argc, char **argv);
int sg_cmd_results(int argc, char **argv);
int sg_cmd_report(int argc, char **argv);
int sg_cmd_task(int argc, char **argv);
int sg_cmd_validate(int argc, char **argv);
int sg_cmd_profile(int argc, char **argv);
int sg_cmd_pool(int argc, char **argv);
int sg_cmd_kvstore(int argc, char **argv);
int sg_cmd_replay_llm(int argc, char **argv);
int sg_cmd_llm_check(int argc, char **argv);
int sg_cmd_sim(int argc, char **argv);

/* The table, in the order `specgen --help` lists it; ends with {NULL}. */
extern const sg_command sg_commands[];

#endif
