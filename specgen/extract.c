#include "specgen/extract.h"

#include "common/srcnorm.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

typedef struct block {
    size_t body_start, body_end;
    char tag[16];
    int closed;
} block;

/* Rank of a tag for a language: 2 exact, 1 generic, 0 not ours. */
static int tag_rank(const char *tag, const char *lang) {
    static const char *const cuda_exact[] = {"cuda", "cu", "cuh", NULL};
    static const char *const ocl_exact[] = {"opencl", "cl", "ocl", NULL};
    static const char *const generic[] = {"c", "c++", "cpp", "cxx", NULL};
    const char *const *exact = strcmp(lang, "opencl") == 0 ? ocl_exact : cuda_exact;
    for (const char *const *t = exact; *t; t++)
        if (strcasecmp(tag, *t) == 0) return 2;
    for (const char *const *t = generic; *t; t++)
        if (strcasecmp(tag, *t) == 0) return 1;
    return 0;
}

static int looks_like_kernel(const char *s, size_t n, const char *lang) {
    const char *const cuda[] = {"__global__", NULL};
    const char *const ocl[] = {"__kernel", "kernel void", NULL};
    const char *const *keys = strcmp(lang, "opencl") == 0 ? ocl : cuda;
    for (const char *const *k = keys; *k; k++)
        if (memmem(s, n, *k, strlen(*k))) return 1;
    return 0;
}

/* Is there a fence (3+ backticks or tildes, at most 3 spaces indent) at line start p?
 * Returns the fence length, and its character in *fc. */
static size_t fence_at(const char *s, size_t n, size_t p, char *fc) {
    size_t i = p, indent = 0;
    while (i < n && s[i] == ' ' && indent < 4) i++, indent++;
    if (indent > 3 || i >= n || (s[i] != '`' && s[i] != '~')) return 0;
    char c = s[i];
    size_t k = 0;
    while (i + k < n && s[i + k] == c) k++;
    if (k < 3) return 0;
    *fc = c;
    return (i - p) + k;
}

/* Scan all fenced blocks; call back for each. */
/* The end of the line at p: its '\n', or n (memchr: answers are long, their lines too). */
static size_t line_end(const char *s, size_t n, size_t p) {
    const char *nl = p < n ? memchr(s + p, '\n', n - p) : NULL;
    return nl ? (size_t)(nl - s) : n;
}

static size_t scan_blocks(const char *s, size_t n, block *blocks, size_t max) {
    size_t nb = 0, p = 0;
    while (p < n) {
        size_t eol = line_end(s, n, p);
        char fc;
        size_t flen = fence_at(s, n, p, &fc);
        if (flen) {
            /* Opening fence: read the tag (first word of the info string). */
            block b = {0};
            size_t t = p + flen;
            while (t < eol && s[t] == ' ') t++;
            size_t tl = 0;
            while (t + tl < eol && !isspace((unsigned char)s[t + tl]) && s[t + tl] != '{' &&
                   tl < sizeof b.tag - 1)
                tl++;
            memcpy(b.tag, s + t, tl);
            b.tag[tl] = '\0';
            b.body_start = eol < n ? eol + 1 : n;
            /* Find the closing fence: same character, at least as long, nothing after. */
            size_t q = b.body_start;
            b.body_end = n;
            while (q < n) {
                size_t qe = line_end(s, n, q);
                char c2;
                size_t l2 = fence_at(s, n, q, &c2);
                if (l2 && c2 == fc && l2 >= flen) {
                    size_t r = q + l2;
                    while (r < qe && (s[r] == ' ' || s[r] == '\t' || s[r] == '\r')) r++;
                    if (r == qe) {
                        b.body_end = q;
                        b.closed = 1;
                        p = qe < n ? qe + 1 : n;
                        break;
                    }
                }
                q = qe < n ? qe + 1 : n;
            }
            if (nb < max)
                blocks[nb++] = b;
            else {
                memmove(blocks, blocks + 1, (max - 1) * sizeof *blocks);
                blocks[max - 1] = b;
            }
            if (!b.closed) break;
            continue;
        }
        p = eol < n ? eol + 1 : n;
    }
    return nb;
}

int sg_extract_kernel(const char *text, size_t len, const char *lang, sg_buf *out,
                      sg_extract_info *info, sg_err *err) {
    block blocks[64];
    size_t nb = scan_blocks(text, len, blocks, 64);
    if (nb == 0) return sg_errf(err, "no code block in the answer (%zu bytes of text)", len);
    int best = -1, best_rank = 0;
    for (size_t i = 0; i < nb; i++) {
        block *b = &blocks[i];
        const char *body = text + b->body_start;
        size_t blen = b->body_end - b->body_start;
        int rank = tag_rank(b->tag, lang);
        if (b->tag[0] == '\0' && looks_like_kernel(body, blen, lang)) rank = 1;
        if (!b->closed && !looks_like_kernel(body, blen, lang)) rank = 0;
        size_t k = 0;
        while (k < blen && isspace((unsigned char)body[k])) k++;
        if (k == blen) rank = 0; /* an empty block is no kernel */
        if (rank == 0) continue;
        /* Prefer complete blocks; among those, exact tags; among equals, the last. */
        int score = rank + (b->closed ? 10 : 0);
        if (score >= best_rank) {
            best_rank = score;
            best = (int)i;
        }
    }
    if (best < 0) {
        char tags[256] = "";
        for (size_t i = 0; i < nb; i++) {
            size_t tl = strlen(tags);
            snprintf(tags + tl, sizeof tags - tl, "%s%s", tl ? ", " : "",
                     blocks[i].tag[0] ? blocks[i].tag : "(untagged)");
        }
        return sg_errf(err, "no %s code block in the answer (found blocks tagged: %s)", lang, tags);
    }
    block *b = &blocks[best];
    sg_buf_clear(out);
    sg_buf_append(out, text + b->body_start, b->body_end - b->body_start);
    if (info) {
        memset(info, 0, sizeof *info);
        info->block_start = b->body_start;
        info->block_end = b->body_end;
        info->unterminated = !b->closed;
        info->generic_tag = tag_rank(b->tag, lang) != 2;
        snprintf(info->tag, sizeof info->tag, "%s", b->tag);
        info->hash = sg_srcnorm_hash(out->data, out->len);
    }
    return 0;
}
