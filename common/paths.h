/* paths.h — where specgen's data folders (prompts/, suites/) are, and making folders.
 *
 * Contract: sg_data_dir finds the folder `name` by looking, in order, under
 * $SPECGEN_DATA, beside the running binary, one folder above it (bin/specgen in a source
 * checkout), in <binary>/../share/specgen (an installed copy), and in the current
 * folder. It writes the first that exists into out and returns 0, or -1 with the places
 * it looked. */
#ifndef SG_PATHS_H
#define SG_PATHS_H

#include "common/err.h"

#include <stddef.h>

int sg_data_dir(const char *name, char *out, size_t n, sg_err *err);

/* Create dir and any missing parents (mode 0755); an existing folder is fine. */
int sg_mkdir_p(const char *dir, sg_err *err);

#endif
