/* err.h — the error convention shared by every module.
 *
 * Contract: a function that can fail returns 0 on success and a negative value on
 * failure, after filling the caller's sg_err with one human-readable sentence that
 * names what was wrong (file, field, value). sg_err is a plain value the caller owns;
 * nothing is allocated. A NULL sg_err pointer is allowed and discards the message.
 * A message longer than its buffer keeps its beginning and its end (where the reason is)
 * and loses its middle (a long path or expression), marked "..." (sg_vfmt_fit). */
#ifndef SG_ERR_H
#define SG_ERR_H

#include <stdarg.h>
#include <stddef.h>

typedef struct sg_err {
    char msg[1024];
} sg_err;

/* Format a message into err (if not NULL) and return -1, so callers can write
 * `return sg_errf(err, "...", ...);`. */
int sg_errf(sg_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prefix an existing message: "prefix: old message". Returns -1. */
int sg_err_prefix(sg_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* As vsnprintf into out[n] (n > 0), but a text that does not fit keeps its first quarter
 * and its end, with "..." for the middle; a cut never splits a UTF-8 sequence. */
void sg_vfmt_fit(char *out, size_t n, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
void sg_fmt_fit(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
