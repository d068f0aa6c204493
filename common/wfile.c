/* Checked writes: every write, flush, fsync and close; a temporary name and rename. */
#include "common/wfile.h"

#include "common/buf.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sg_wfile_atomic(const char *path, const void *data, size_t n, sg_err *err) {
    size_t plen = strlen(path);
    char *tmp = sg_xmalloc(plen + 16);
    snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return sg_errf(err, "cannot write %s: %s", path, strerror(e));
    }
    fchmod(fd, 0644); /* mkstemp makes 0600: outputs are read by others, as before */
    const char *p = data;
    int e = 0;
    for (size_t left = n; left > 0 && !e;) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0)
            e = w < 0 ? errno : ENOSPC;
        else
            p += w, left -= (size_t)w;
    }
    if (!e && fsync(fd) != 0) e = errno;
    if (close(fd) != 0 && !e) e = errno;
    if (!e && rename(tmp, path) != 0) e = errno;
    if (e) {
        unlink(tmp);
        free(tmp);
        return sg_errf(err, "cannot write %s: %s", path, strerror(e));
    }
    /* the rename itself reaches the disk with the folder */
    char *dir = sg_xstrdup(path);
    int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    free(dir);
    free(tmp);
    return 0;
}

static int fail(sg_wfile *w, int e) {
    if (!w->failed) sg_errf(&w->err, "cannot write %s: %s", w->path, strerror(e ? e : EIO));
    w->failed = 1;
    return -1;
}

int sg_wfile_open(sg_wfile *w, const char *path, sg_err *err) {
    memset(w, 0, sizeof *w);
    snprintf(w->path, sizeof w->path, "%s", path);
    w->f = fopen(path, "w");
    if (!w->f) return sg_errf(err, "cannot write %s: %s", path, strerror(errno));
    return 0;
}

int sg_wfile_line(sg_wfile *w, const char *line) {
    if (w->failed) return -1;
    if (!w->f) return 0;
    errno = 0;
    if (fputs(line, w->f) == EOF || fputc('\n', w->f) == EOF || fflush(w->f) != 0)
        return fail(w, errno);
    return 0;
}

int sg_wfile_close(sg_wfile *w, sg_err *err) {
    if (w->f) {
        errno = 0;
        if (fflush(w->f) != 0 || fsync(fileno(w->f)) != 0) fail(w, errno);
        if (fclose(w->f) != 0) fail(w, errno);
        w->f = NULL;
    }
    if (w->failed) {
        if (err) *err = w->err;
        return -1;
    }
    return 0;
}
