/* The password file of --requirepass-file (and the pool agent's --kv-requirepass-file). */
#include "kvstore/kvstore.h"

#include "common/buf.h"
#include "common/log.h"

#include <stdio.h>

int sg_kv_password_file(const char *opt, const char *path, char **out, sg_err *err) {
    int others;
    char label[128];
    snprintf(label, sizeof label, "%s:", opt); /* "--requirepass-file: 'F': ..." */
    if (!(*out = sg_read_secret_line(label, path, "password", &others, err))) return -1;
    if (others) sg_warn("kvstore", "%s is readable by other users (chmod 600 it)", path);
    return 0;
}
