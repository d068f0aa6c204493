/* extract.h — the candidate kernel in a model's answer.
 *
 * Contract: sg_extract_kernel finds, in model text, the LAST fenced code block (``` or
 * ~~~ at a line start) whose tag names the target language, and copies its body
 * (launch lines included) into `out`. Tags accepted for "cuda": cuda, cu, cuh, c++,
 * cpp, c; for "opencl": opencl, cl, ocl, c, c++, cpp — a block tagged with the exact
 * language (cuda / opencl) wins over a generic one. An untagged block counts only if
 * its body looks like a kernel (__global__ / __kernel / kernel void). A block left open
 * at the end of the text (a generation cut by max_tokens) is taken when no complete one
 * exists and its body looks like a kernel; info->unterminated says so. Empty blocks never count.
 * Prose around the blocks is ignored. Returns 0 when a kernel was found, -1 otherwise with a reason
 * in err ("no code block", "only blocks in other languages: python", ...). Never reads beyond len;
 * the text need not be NUL-terminated. */
#ifndef SG_EXTRACT_H
#define SG_EXTRACT_H

#include "common/buf.h"
#include "common/err.h"

#include <stdint.h>

typedef struct sg_extract_info {
    size_t block_start, block_end; /* byte range of the body in the text */
    int unterminated;
    int generic_tag; /* taken from a c/cpp/untagged block, not an exact-language one */
    char tag[16];
    uint64_t hash; /* sg_srcnorm_hash of the body: equal for duplicates */
} sg_extract_info;

int sg_extract_kernel(const char *text, size_t len, const char *lang, sg_buf *out,
                      sg_extract_info *info, sg_err *err);

#endif
