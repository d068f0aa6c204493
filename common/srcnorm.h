/* srcnorm.h — the normalized form of kernel source and its hash, so that candidates
 * that differ only in comments or whitespace count as duplicates (and share a compile
 * cache entry).
 *
 * Contract: sg_srcnorm appends to out the source with comments removed and whitespace
 * dropped except where it separates two tokens that would otherwise fuse (then one
 * space); newlines are kept only after preprocessor directives. Launch-plan lines
 * (`//@...`) are kept verbatim on lines of their own (trimmed), since they change what
 * runs. String and character literals are copied untouched. The hash is 64-bit
 * FNV-1a of the normalized text, printed as 16 hex digits by sg_srcnorm_hex. */
#ifndef SG_SRCNORM_H
#define SG_SRCNORM_H

#include "common/buf.h"

#include <stdint.h>

void sg_srcnorm(const char *src, size_t len, sg_buf *out);
uint64_t sg_hash64(const void *data, size_t len);
/* Normalize and hash in one step. */
uint64_t sg_srcnorm_hash(const char *src, size_t len);
/* 16 lowercase hex digits + NUL into out[17]. */
void sg_srcnorm_hex(uint64_t h, char out[17]);
/* 32 hex chars: two 64-bit hashes of the normalized source, plus opts (the compile cache's
 * key and a candidate's hash in results). */
void sg_srcnorm_key(const char *src, size_t len, const char *opts, char out[33]);

#endif
