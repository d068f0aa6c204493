/* units.h — parsing and printing the quantities users type on the command line.
 *
 * Contract: parsers accept the whole string or fail with a message naming it.
 *   durations: "90" (seconds), "250ms", "30s", "30m", "2h", "1.5h" -> nanoseconds
 *   sizes:     "4096", "64k", "512M", "4G", "1T" (binary, 1k = 1024) -> bytes
 *   counts:    "500", "500k", "2M" (decimal, 1k = 1000) -> count (tokens, ...) */
#ifndef SG_UNITS_H
#define SG_UNITS_H

#include "common/err.h"

#include <stddef.h>
#include <stdint.h>

int sg_parse_duration_ns(const char *s, int64_t *out, sg_err *err);
int sg_parse_size_bytes(const char *s, uint64_t *out, sg_err *err);
int sg_parse_count(const char *s, uint64_t *out, sg_err *err);
int sg_parse_double(const char *s, double *out, sg_err *err);
int sg_parse_int(const char *s, int64_t *out, sg_err *err);

/* "1.25 s", "340 ms", "12 us"; "3.5 MiB". Write into out and return it. */
const char *sg_fmt_duration(int64_t ns, char *out, size_t n);
const char *sg_fmt_bytes(uint64_t bytes, char *out, size_t n);

#endif
