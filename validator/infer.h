/* infer.h — `task init`'s reading of a kernel file (validator-internal).
 *  - infer_sig.c: every kernel's name, template parameters and parameters, with element
 *    types resolved through the file's typedefs and vector types (float4: f32 x 4);
 *    __launch_bounds__ read as the block size, not as the parameter list.
 *  - infer_body.c: what the body says: which buffers it writes (and reads), the size
 *    parameters its index expressions reach (element counts), the launch shape (one
 *    thread per element, one warp or one block per row, extern __shared__).
 * Both are pure text analysis on comment-stripped source; every result is a guess that
 * infer.c reports. */
#ifndef SG_VALIDATOR_INFER_H
#define SG_VALIDATOR_INFER_H

#include "common/buf.h"
#include "common/err.h"

#define SG_INFER_MAX_PARAMS 32
#define SG_INFER_MAX_KERNELS 64

typedef struct sg_infer_param {
    char name[64];
    char decl[160];   /* the declaration as written, for messages */
    int pointer;      /* a buffer */
    int is_const;     /* pointee is const */
    const char *type; /* task.json type name ("f32", "bf16", "u8"), NULL: unknown */
    int vec;          /* elements per pointee (float4: 4) */
    int is_float;     /* a by-value float / double */
    int boolean;      /* bool: stored as u8 (0 or 1) */
} sg_infer_param;

typedef struct sg_infer_kernel {
    char name[64];
    char tparams[160]; /* template parameter list as written ("" when not a template) */
    int launch_bounds; /* __launch_bounds__(N): N; 0 without */
    const char *body;  /* points into the stripped source: the '{' of the body */
    size_t body_len;
    char bad[sizeof(((sg_err *)0)->msg)]; /* why its parameters cannot be read ("": fine) */
    int np;
    sg_infer_param p[SG_INFER_MAX_PARAMS];
} sg_infer_kernel;

/* All __global__ kernels of a comment-stripped CUDA source (or __kernel for OpenCL).
 * targs: "float" or "float,128" for a template (NULL: guess float for each typename and
 * fail on non-type parameters). Parameters whose type cannot be mapped keep type NULL. */
int sg_infer_kernels(const char *src, int cuda, sg_infer_kernel *ks, int *nk, const char *path,
                     sg_err *err);
/* Resolve a kernel's parameter types (after the template arguments are known). */
int sg_infer_types(const char *src, sg_infer_kernel *k, const char *targs, sg_buf *report,
                   const char *path, sg_err *err);

typedef struct sg_infer_body {
    /* written: some statement stores to it; read: the first statement that touches it
     * reads it (x[i] += v, or a load before any store): in place */
    int written[SG_INFER_MAX_PARAMS], read[SG_INFER_MAX_PARAMS];
    int data_indexed[SG_INFER_MAX_PARAMS];       /* an index holds a value loaded from memory */
    unsigned long data_src[SG_INFER_MAX_PARAMS]; /* ... from these buffers (bits) */
    /* per parameter: the size parameters the buffer's indices reach, as a bit set over
     * parameter positions */
    unsigned long reach[SG_INFER_MAX_PARAMS];
    /* per parameter: the power of each size in its count (idx*T + t, idx < n*T: T twice) */
    unsigned char power[SG_INFER_MAX_PARAMS][SG_INFER_MAX_PARAMS];
    int rows_unbounded[SG_INFER_MAX_PARAMS]; /* indexed by blockIdx with no bound */
    int lanes[SG_INFER_MAX_PARAMS]; /* OpenCL vloadN / vstoreN(.., offset, p): elements of p
                                       per offset (0: none seen) */
    /* the launch: */
    enum { SG_SHAPE_UNKNOWN, SG_SHAPE_THREAD, SG_SHAPE_WARP, SG_SHAPE_BLOCK } shape;
    char bound[160];             /* THREAD / WARP: the guard's bound expression */
    int uses_y;                  /* blockIdx.y / threadIdx.y: a 2-D launch */
    char bound_y[160];           /* the y index's bound (a 2-D grid), "" when none is seen */
    char tile_x[32], tile_y[32]; /* blockIdx.x * TILE: the block size named ("" none) */
    char smem_type[32];          /* extern __shared__ element type ("" without) */
    unsigned long in_index;      /* int parameters seen in any index or guard */
    unsigned long rows;          /* int parameters the body never uses, taken as the row count of
                                    a blockIdx.x-per-row kernel */
} sg_infer_body;

void sg_infer_read_body(const sg_infer_kernel *k, sg_infer_body *b);

/* infer_chain.c: the kernels of a file launched in order, linked by scratch buffers. */
#define SG_INFER_MAX_SCRATCH 8
typedef struct sg_infer_chain {
    int n; /* kernels in the chain: all of the file's, in order; 0: no chain */
    int nscratch;
    char name[SG_INFER_MAX_SCRATCH][64];    /* scratch buffers */
    int writer[SG_INFER_MAX_SCRATCH];       /* the kernel that writes each */
    int writer_param[SG_INFER_MAX_SCRATCH]; /* its parameter position there */
} sg_infer_chain;
/* How many kernels form the chain (all nk, or 0 when they are not one). */
int sg_infer_find_chain(const sg_infer_kernel *ks, const sg_infer_body *bs, int nk,
                        sg_infer_chain *c);
/* The index of `name` among the chain's scratch buffers, or -1. */
int sg_infer_chain_scratch(const sg_infer_chain *c, const char *name);
int sg_infer_body_has(const sg_infer_kernel *k, const char *text); /* within the body */

#endif
