/* buf.h — growable byte buffers.
 *
 * Contract: an sg_buf starts zeroed ({0}) and owns `data`, which is always
 * NUL-terminated after any append (so text can be used as a C string) once it is
 * non-NULL. Appends grow the buffer geometrically; allocation failure aborts the
 * process (out of memory is not a recoverable condition for specgen). sg_buf_free
 * releases the memory and leaves an empty buffer that may be reused. */
#ifndef SG_BUF_H
#define SG_BUF_H

#include "common/err.h"

#include <stddef.h>

typedef struct sg_buf {
    char *data;
    size_t len;
    size_t cap;
} sg_buf;

void sg_buf_reserve(sg_buf *b, size_t extra);
void sg_buf_append(sg_buf *b, const void *p, size_t n);
void sg_buf_append_str(sg_buf *b, const char *s);
void sg_buf_printf(sg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append s as a JSON string literal, quotes included. A byte that does not begin a valid
 * UTF-8 sequence becomes U+FFFD, so the literal is always valid JSON. */
void sg_buf_append_json_string(sg_buf *b, const char *s);
/* The same for n bytes that need not be NUL-terminated. */
void sg_buf_append_json_stringn(sg_buf *b, const char *s, size_t n);
/* Append tmpl with every "{key}" replaced by its value (prompt and message templates).
 * Placeholders not named in keys are copied as they are. */
void sg_buf_fill(sg_buf *b, const char *tmpl, const char *const *keys, const char *const *values,
                 size_t n);
/* Drop the first n bytes (for parsers that consume from the front). */
void sg_buf_consume(sg_buf *b, size_t n);
void sg_buf_clear(sg_buf *b);
/* Hand over the data (caller frees it) and leave the buffer empty. Never NULL. */
char *sg_buf_steal(sg_buf *b);
void sg_buf_free(sg_buf *b);

/* Read a whole file into b (appending). Returns 0, or -1 with errno set. */
int sg_buf_read_file(sg_buf *b, const char *path);
/* The same, reading at most max bytes: a longer file (or /dev/zero) gives -1 with errno
 * EFBIG, after max + 1 bytes were read and nothing appended. Every file a user names
 * is read this way, so a wrong path cannot grow memory without end. */
int sg_buf_read_file_max(sg_buf *b, const char *path, size_t max);
/* "PATH: cannot read: REASON" into out, the limit named for EFBIG ("larger than the
 * limit of N bytes"). Returns out. */
const char *sg_read_error(char *out, size_t n, const char *path, size_t max);
/* Reads a small file (at most SG_SMALL_FILE_MAX) into *b for option opt: 0, or -1 with
 * "OPT PATH: reason" in err and *b empty. */
int sg_buf_read_small(sg_buf *b, const char *opt, const char *path, sg_err *err);
/* A secret's file (a token, an API key, a password: what): its first line without the line
 * end, a new string; NULL with err naming opt and path when it cannot be read or the line
 * is empty (or holds a NUL). *others: 1 when users other than the owner may read or write
 * it. */
char *sg_read_secret_line(const char *opt, const char *path, const char *what, int *others,
                          sg_err *err);

/* Limits for files read whole: a kernel source (baseline, reference, candidate), a
 * replay trace file, a password file. */
#define SG_SOURCE_MAX ((size_t)4 << 20)
#define SG_TRACE_MAX ((size_t)64 << 20)
#define SG_SMALL_FILE_MAX ((size_t)64 << 10)

/* Allocation helpers that abort on out-of-memory. */
void *sg_xmalloc(size_t n);
void *sg_xcalloc(size_t n, size_t size);
void *sg_xrealloc(void *p, size_t n);
char *sg_xstrdup(const char *s);

#endif
