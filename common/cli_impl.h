/* cli_impl.h — (internal to common/cli*.c) what the parser and the config file share. */
#ifndef SG_CLI_IMPL_H
#define SG_CLI_IMPL_H

#include "common/cli.h"

typedef enum { SG_SRC_DEFAULT = 0, SG_SRC_FLAG, SG_SRC_ENV, SG_SRC_FILE } sg_cli_src;

/* Where one option's value came from, for --show-config. */
typedef struct sg_cli_seen {
    sg_cli_src src;
    const char *raw;  /* the text given (NULL: a secret, or a flag) */
    const char *from; /* the variable's name, or the file's path */
    char num[48];     /* a number from the file, as text */
} sg_cli_seen;

/* Store value into o's slot and check it (zero rule, range); where names it in a message
 * ("--iterations", "$OPENAI_BASE_URL", "specgen.json: \"iterations\""). SG_CLI_OK or
 * SG_CLI_USAGE (the message printed). */
int sg_cli_take(const sg_cmd_spec *spec, const sg_opt *o, const char *value, const char *where);
/* After the command line: the env variables, then the config file (path: --config's value,
 * NULL: the default places, "none": no file), into the options not given (seen[i].src is
 * SG_SRC_FLAG for those). show: print them all (--show-config) and return SG_CLI_HELP. */
int sg_cli_sources(const sg_cmd_spec *spec, sg_cli_seen *seen, const char *path, int show);
/* A number as a user types it for its kind (30s, 4k, 500k). */
void sg_cli_fmt_value(sg_opt_kind kind, double v, char *out, size_t n);
/* The option called name[0..len) by its name or an alias (*old: by a deprecated name). */
const sg_opt *sg_cli_find(const sg_opt *opts, const char *name, size_t len, int *old);

#endif
