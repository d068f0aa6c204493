/* wfile.h — writing output files so that a full disk or a crash never leaves a short or
 * empty file that looks complete.
 *
 * Contract: sg_wfile_atomic writes data to a temporary file beside path, checks every
 * write, fsync and close, then renames it over path (readers see the old file or the
 * new one, never a part). sg_wfile_stream_* wrap an append-only stream (events.jsonl):
 * each write is checked and flushed; the first failure is kept and every later call
 * returns -1. Errors name the final file and the system's reason ("cannot write
 * OUT/best.cl: No space left on device"). */
#ifndef SG_WFILE_H
#define SG_WFILE_H

#include "common/err.h"

#include <stddef.h>
#include <stdio.h>

int sg_wfile_atomic(const char *path, const void *data, size_t n, sg_err *err);

typedef struct sg_wfile {
    FILE *f;
    char path[4096];
    int failed;
    sg_err err; /* the first failure */
} sg_wfile;

int sg_wfile_open(sg_wfile *w, const char *path, sg_err *err);
/* Append one line (a newline is added) and flush. */
int sg_wfile_line(sg_wfile *w, const char *line);
/* fsync and close; 0 also when it was never opened. Returns -1 after any failure. */
int sg_wfile_close(sg_wfile *w, sg_err *err);

#endif
