/* Checked writes: every write, flush, fsync and close; a temporary name and rename. */
#include "common/wfile.h"

#include "common/buf.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- what an output may not replace ---- */
#define NPROTECT 8
static pthread_mutex_t protect_mu = PTHREAD_MUTEX_INITIALIZER;
static char protected_path[NPROTECT][4096];

void sg_wfile_protect(const char *path) {
    pthread_mutex_lock(&protect_mu);
    for (int i = 0; i < NPROTECT; i++)
        if (!protected_path[i][0]) {
            snprintf(protected_path[i], sizeof protected_path[i], "%s", path);
            break;
        }
    pthread_mutex_unlock(&protect_mu);
}

void sg_wfile_unprotect(const char *path) {
    pthread_mutex_lock(&protect_mu);
    for (int i = 0; i < NPROTECT; i++)
        if (!strcmp(protected_path[i], path)) {
            protected_path[i][0] = 0;
            break;
        }
    pthread_mutex_unlock(&protect_mu);
}

const char *sg_wfile_kind(mode_t mode) {
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISLNK(mode)) return "a symbolic link";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

/* Whether sb is a protected file (1) or one of its side files (2); its path into db. */
static int is_protected(const struct stat *sb, char *db, size_t n) {
    static const char *const side[] = {"", "-wal", "-shm", "-journal"};
    int found = 0;
    pthread_mutex_lock(&protect_mu);
    for (int i = 0; i < NPROTECT && !found; i++) {
        if (!protected_path[i][0]) continue;
        for (size_t k = 0; k < sizeof side / sizeof *side && !found; k++) {
            char p[4200];
            struct stat ps;
            snprintf(p, sizeof p, "%s%s", protected_path[i], side[k]);
            if (stat(p, &ps) == 0 && ps.st_dev == sb->st_dev && ps.st_ino == sb->st_ino) {
                snprintf(db, n, "%s", protected_path[i]);
                found = k ? 2 : 1;
            }
        }
    }
    pthread_mutex_unlock(&protect_mu);
    return found;
}

/* The refusal for what sb names at path; 0 when it may be replaced. */
static int refuse(const char *path, const char *label, const struct stat *sb, sg_err *err) {
    const char *l = label ? label : "", *sp = label ? " " : "";
    char db[4200];
    if (!S_ISREG(sb->st_mode)) {
        sg_errf(err, "%s%s%s: is %s, not a regular file; refusing to replace it", l, sp, path,
                sg_wfile_kind(sb->st_mode));
        return SG_WFILE_REFUSED;
    }
    int which = is_protected(sb, db, sizeof db);
    if (which) {
        sg_errf(err, "%s%s%s: is %sthe results database in use (%s); refusing to write over it", l,
                sp, path, which == 2 ? "a side file (-wal, -shm) of " : "", db);
        return SG_WFILE_REFUSED;
    }
    return 0;
}

int sg_wfile_check(const char *path, const char *label, sg_err *err) {
    struct stat sb;
    if (lstat(path, &sb) != 0) return 0; /* nothing there, or the write says why */
    return refuse(path, label, &sb, err);
}

int sg_wfile_fopen(const char *path, int excl, FILE **out, sg_err *err) {
    *out = NULL;
    int rc = excl ? 0 : sg_wfile_check(path, NULL, err);
    if (rc < 0) return rc;
    /* O_NOFOLLOW and O_NONBLOCK: what appeared since the check is not followed nor waited on */
    int fd = open(
        path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (excl ? O_EXCL : 0), 0644);
    if (fd < 0) {
        int e = errno;
        sg_errf(err, "cannot write %s: %s", path, strerror(e));
        errno = e;
        return -1;
    }
    struct stat sb;
    int e = 0;
    if (fstat(fd, &sb) != 0)
        e = errno;
    else if ((rc = refuse(path, NULL, &sb, err)) < 0) {
        close(fd);
        return rc;
    }
    if (!e && (ftruncate(fd, 0) != 0 || fcntl(fd, F_SETFL, 0) != 0)) e = errno;
    if (!e && !(*out = fdopen(fd, "w"))) e = errno;
    if (e) {
        close(fd);
        return sg_errf(err, "cannot write %s: %s", path, strerror(e));
    }
    return 0;
}

int sg_wfile_atomic(const char *path, const void *data, size_t n, sg_err *err) {
    int refused = sg_wfile_check(path, NULL, err);
    if (refused < 0) return refused;
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
    return sg_wfile_fopen(path, 0, &w->f, err);
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
