/* cli.h — declarative command-line parsing shared by every `specgen` command.
 *
 * Contract: a command describes itself with an sg_cmd_spec (usage line, summary,
 * options, positional bounds, longer help). sg_cli_parse accepts `--name value`,
 * `--name=value`, flags, `--` and `-h/--help`; an option with a short name (its `short_name`
 * field, e.g. 'o' for --out) is also `-o value`, `-oVALUE` or `-o=VALUE` (flags: `-v`), and
 * --help shows it as `-o, --out FILE`. Short flags do not combine (`-vq` is an error), writes
 * parsed values into the option slots, and moves positional arguments to the front of argv (so *pos
 * points into argv). It prints to stdout for --help (returns SG_CLI_HELP) and one message to stderr
 * naming the option and the bad value for any usage error (returns SG_CLI_USAGE; the command exits
 * 2). Slots of options not given keep their values, which are the defaults shown in --help when
 * `def` is set.
 * Zero: a numeric option (INT, DOUBLE, DURATION, SIZE, COUNT) refuses a value that is 0
 * (a usage error naming the option and what it takes) unless its help or def says what 0
 * means, spelled "0: MEANING" (e.g. "(0: no limit)"): the help is the flag, so --help and
 * the parser cannot disagree, and 0 never silently means a default.
 * Range: a numeric option with min < max refuses a value outside min..max (in the kind's
 * units: nanoseconds, bytes), naming the option and the range; --help shows the range.
 * Other names: `aliases` are accepted as they are and shown in --help ("also --slots");
 * `deprecated` names are accepted with a warning on stderr ("--slots-per-gpu is deprecated;
 * use --slots-per-device") and not shown in --help (docs/options.md lists them).
 * Write option tables with designated initializers ({.name = "out", .kind = SG_OPT_STR, ...});
 * options shared by several commands come from one table (common/opts.h).
 * Sources: a command with options also takes `--config FILE|none` and `--show-config`
 * (cli_config.c). An option not given on the command line takes, in this order, its `env`
 * variable (the first of the list set and not empty), then the config file's value (--config
 * FILE, else ./specgen.json, else $XDG_CONFIG_HOME/specgen/config.json or
 * ~/.config/specgen/config.json): flag > env > file > default. The file is a JSON object
 * whose top-level keys are the shared options (common/opts.h, for every command that takes
 * them) and command names, each an object of that command's long options (beating the top
 * level); a key that is neither is an error naming the file and the key (with a
 * did-you-mean). Values go through the same parser, range and zero checks as on the command
 * line (a number or a string for numeric kinds, true/false for flags, a string or an array
 * of strings for SG_OPT_FN). --show-config prints each option's value and its source to
 * stdout (URL credentials as ***; an env_secret variable's value never) and returns
 * SG_CLI_HELP. --help reads no file. */
#ifndef SG_CLI_H
#define SG_CLI_H

#include "common/err.h"

#include <stddef.h>
#include <stdint.h>

/* One `specgen <command>`: the table of them lives on top (orchestrator/commands.c). */
typedef struct sg_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} sg_command;

typedef enum {
    SG_OPT_FLAG,     /* int*: set to 1 */
    SG_OPT_STR,      /* const char**: borrowed from argv */
    SG_OPT_INT,      /* int64_t* */
    SG_OPT_DOUBLE,   /* double* */
    SG_OPT_DURATION, /* int64_t* nanoseconds: 90, 30s, 30m, 2h */
    SG_OPT_SIZE,     /* uint64_t* bytes: 4096, 64k, 4G */
    SG_OPT_COUNT,    /* uint64_t*: 500, 500k, 2M */
    SG_OPT_FN,       /* custom: fn(value, out, err); may repeat */
} sg_opt_kind;

typedef struct sg_opt {
    const char *name; /* long name without "--" */
    sg_opt_kind kind;
    void *out;
    const char *metavar; /* shown in help: --target X */
    const char *help;
    const char *def; /* default shown in help, or NULL */
    int (*fn)(const char *value, void *out, sg_err *err);
    char short_name;        /* 'o' for -o, or 0: none ('h' is taken by --help) */
    const char *aliases;    /* other names, space-separated, shown in help ("slots"), or NULL */
    const char *deprecated; /* old names, space-separated, accepted with a warning, or NULL */
    double min, max;        /* the range checked by the parser when min < max (ns, bytes) */
    const char *units;      /* what the number counts ("tokens"), for docs; NULL: the kind's */
    const char *env;        /* environment variables (space-separated) giving the value when
                               the command line does not (before the config file), or NULL */
    int env_secret;         /* env holds a secret the command reads itself (an API key): the slot is
                               left alone (so the file's value yields) and it is never shown */
} sg_opt;

typedef struct sg_cmd_spec {
    const char *name;     /* "optimize" */
    const char *args;     /* "TASK_DIR|KERNEL.cu" */
    const char *summary;  /* one line for `specgen --help` */
    const char *details;  /* paragraphs printed after the options; may be NULL */
    const sg_opt *opts;   /* ends with {NULL} */
    int min_pos, max_pos; /* positional bounds; max_pos < 0: unlimited */
} sg_cmd_spec;

enum { SG_CLI_OK = 0, SG_CLI_HELP = 1, SG_CLI_USAGE = 2 };

int sg_cli_parse(const sg_cmd_spec *spec, int argc, char **argv, char ***pos, int *npos);
void sg_cli_print_help(const sg_cmd_spec *spec);

/* The kind's name for docs and completion: "int", "duration", "size", ... */
const char *sg_cli_kind_name(sg_opt_kind kind);
/* An option's range as a user types it ("1..64", "1s..10m", "4k..1G"), or "" (no range). */
const char *sg_cli_range(const sg_opt *o, char *out, size_t n);

/* Describe mode, for `specgen completion` and `specgen options` (which run nothing else):
 * while fn is set, sg_cli_parse hands each spec it is given to fn and returns SG_CLI_HELP
 * without parsing or printing, so running a command with no arguments yields its table.
 * NULL ends it. Process-wide: call only from a command that runs no other work. */
typedef void (*sg_cli_describe_fn)(const sg_cmd_spec *spec, void *arg);
void sg_cli_describe(sg_cli_describe_fn fn, void *arg);

/* For commands whose implementation has not landed: parse (so bad options are still
 * reported), then say plainly that it is not built yet and which issue tracks it.
 * Returns the exit code (0 for --help, 2 otherwise). */
int sg_cli_not_built(const sg_cmd_spec *spec, int argc, char **argv, const char *tracking);

/* The commands whose names are sections of the config file (orchestrator/main.c sets them;
 * unset: any object-valued top-level key is taken as a section). */
void sg_cli_config_commands(const sg_command *cmds);

/* Print "specgen CMD: message" to stderr and return 2 (usage) or 1 (runtime). */
int sg_cli_fail(const sg_cmd_spec *spec, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
