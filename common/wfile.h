/* wfile.h — writing output files so that a full disk or a crash never leaves a short or
 * empty file that looks complete.
 *
 * Contract: sg_wfile_atomic writes data to a temporary file beside path, checks every
 * write, fsync and close, then renames it over path (readers see the old file or the
 * new one, never a part). sg_wfile_stream_* wrap an append-only stream (events.jsonl):
 * each write is checked and flushed; the first failure is kept and every later call
 * returns -1. Errors name the final file and the system's reason ("cannot write
 * OUT/best.cl: No space left on device").
 *
 * An output never replaces, nor writes through, something that is not a regular file:
 * sg_wfile_check refuses a path that names a symbolic link, a device, a FIFO, a socket or a
 * folder, and a file registered with sg_wfile_protect (the results database being read or
 * written, by inode). Every writer calls it (sg_wfile_atomic, sg_wfile_open and
 * sg_wfile_fopen do), so `report -o /dev/null` or `-o results.db` is refused, not
 * replaced; an existing regular file is replaced, as asked. */
#ifndef SG_WFILE_H
#define SG_WFILE_H

#include "common/err.h"

#include <stddef.h>
#include <stdio.h>

#include <sys/types.h>

/* A refused output path (sg_wfile_check): bad input, commands exit 2 for it. */
enum { SG_WFILE_REFUSED = -2 };

/* 0 when path may be written: nothing is there, or a regular file that is not protected.
 * SG_WFILE_REFUSED otherwise, with "LABEL PATH: is a FIFO, not a regular file; refusing to
 * replace it" (label: how the user named it, e.g. "-o", or NULL). A path that cannot be
 * looked at (no folder, no permission) is 0: the write itself says why. */
int sg_wfile_check(const char *path, const char *label, sg_err *err);
/* "a FIFO", "a character device", "a folder", ...: what a st_mode names. */
const char *sg_wfile_kind(mode_t mode);
/* No output may replace path (nor its -wal, -shm, -journal) until sg_wfile_unprotect:
 * the results database while it is open (at most 8 at once; the path is copied). */
void sg_wfile_protect(const char *path);
void sg_wfile_unprotect(const char *path);

/* A file written in place (a stream, an export): checked as sg_wfile_check, opened without
 * following a symbolic link nor waiting on a FIFO, and checked again once open, then
 * truncated. excl: refused with EEXIST (errno) when anything is there. Returns 0,
 * SG_WFILE_REFUSED or -1 ("cannot write PATH: reason"). */
int sg_wfile_fopen(const char *path, int excl, FILE **out, sg_err *err);

/* 0, -1 ("cannot write PATH: reason") or SG_WFILE_REFUSED (sg_wfile_check). */
int sg_wfile_atomic(const char *path, const void *data, size_t n, sg_err *err);

typedef struct sg_wfile {
    FILE *f;
    char path[4096];
    int failed;
    sg_err err; /* the first failure */
} sg_wfile;

/* Opens as sg_wfile_fopen (returns as it does). */
int sg_wfile_open(sg_wfile *w, const char *path, sg_err *err);
/* Append one line (a newline is added) and flush. */
int sg_wfile_line(sg_wfile *w, const char *line);
/* fsync and close; 0 also when it was never opened. Returns -1 after any failure. */
int sg_wfile_close(sg_wfile *w, sg_err *err);

#endif
