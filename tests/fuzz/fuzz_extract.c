/* libFuzzer target: kernel extraction and source normalization on arbitrary model text.
 * Invariants: no crash or over-read; a found block lies inside the text; the hash of
 * the extracted body equals the hash of its normalized form's source. */
#include "common/srcnorm.h"
#include "specgen/extract.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    /* Copy into an exact-size heap block so ASan sees any read past the end. */
    char *text = malloc(size ? size : 1);
    memcpy(text, data, size);
    const char *langs[] = {"cuda", "opencl"};
    for (int l = 0; l < 2; l++) {
        sg_buf out = {0};
        sg_extract_info info;
        sg_err err;
        if (sg_extract_kernel(text, size, langs[l], &out, &info, &err) == 0) {
            if (info.block_start > info.block_end || info.block_end > size) abort();
            if (out.len != info.block_end - info.block_start) abort();
            if (info.hash != sg_srcnorm_hash(out.data, out.len)) abort();
        }
        sg_buf_free(&out);
    }
    sg_buf norm = {0};
    sg_srcnorm(text, size, &norm);
    sg_buf_free(&norm);
    free(text);
    return 0;
}
