/* The password file of --requirepass-file (and the pool agent's --kv-requirepass-file). */
#include "kvstore/kvstore.h"

#include "common/buf.h"
#include "common/log.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int sg_kv_password_file(const char *opt, const char *path, char **out, sg_err *err) {
    sg_buf b = {0};
    char why[512];
    if (sg_buf_read_file_max(&b, path, SG_SMALL_FILE_MAX) != 0) {
        sg_buf_free(&b);
        return sg_errf(err, "%s %s", opt, sg_read_error(why, sizeof why, path, SG_SMALL_FILE_MAX));
    }
    char *nl = b.data ? memchr(b.data, '\n', b.len) : NULL;
    if (nl) b.len = (size_t)(nl - b.data);
    if (b.len && b.data[b.len - 1] == '\r') b.len--;
    if (b.data) b.data[b.len] = 0;
    if (b.len == 0 || strlen(b.data) != b.len) {
        sg_buf_free(&b);
        return sg_errf(err, "%s: '%s': its first line holds no password (or a NUL byte)", opt,
                       path);
    }
    struct stat st;
    if (stat(path, &st) == 0 && (st.st_mode & 077))
        sg_warn("kvstore", "%s is readable by other users (chmod 600 it)", path);
    *out = sg_buf_steal(&b);
    return 0;
}
