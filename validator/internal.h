/* internal.h — pieces shared inside the validator (internal: other modules use
 * validator.h, whose section "another job kind built on validation" is the profiler's). */
#ifndef SG_VAL_INTERNAL_H
#define SG_VAL_INTERNAL_H

#include "device/device.h"
#include "validator/validator.h"

#include <jansson.h>

/* task.json's buffer and scalar objects (task_buffer.c); errors are prefixed by where. */
int sg_val_load_buffer(json_t *o, sg_val_buffer *b, const char *where, sg_err *err);
int sg_val_load_scalar(json_t *o, sg_val_scalar *s, const char *where, sg_err *err);

/* Whether file (a path in dir) resolves, through symbolic links, to a place outside dir. */
int sg_val_outside(const char *dir, const char *file);
/* A torch task's fields (task_torch.c): "reference"/"baseline" {"torch": ...}, "precision",
 * "origin", "constants"; and the rules that tie them (a "model" init needs a torch
 * reference). Errors name the file and the field. */
int sg_val_load_torch(sg_val_task *t, json_t *root, const char *path, sg_err *err);

/* ---- a torch task's reference engine (torchref.c; torchref/engine.py) ---- */
typedef struct sg_val_torch sg_val_torch;
/* The Python interpreter (SPECGEN_PYTHON, else the .venv beside specgen's torchref/, else
 * python3 on PATH) and the torchref/ folder. */
int sg_val_torch_paths(char *py, size_t pyn, char *dir, size_t dn, sg_err *err);
/* Start the engine for the task folder; lang picks its device (CUDA: "cuda", else "cpu").
 * Fails with one line saying how to install torch when it is missing. While it starts,
 * tick(arg, "starting") is called every few seconds (the worker's phase message, which
 * restarts the compile deadline). */
int sg_val_torch_start(const char *task_dir, sg_dev_lang lang, void (*tick)(void *, const char *),
                       void *arg, sg_val_torch **out, sg_err *err);
void sg_val_torch_free(sg_val_torch *e);
/* This worker's engine for task t, or -1 with why (it failed to start; it serves another
 * folder; it stopped). */
int sg_val_torch_get(sg_dev *d, const sg_val_task *t, sg_val_torch **out, sg_err *err);
/* Send req (its "given" blobs are data[b] of bytes[b] for the buffers it names) and read
 * the reply: its "drawn" and "out" blobs are written into data[b] (each must be bytes[b]
 * long). 0 with *reply (the caller's); -2 the problem's own error (err), the engine lives
 * on; -1 the engine stopped. */
int sg_val_torch_call(sg_val_torch *e, json_t *req, const sg_val_task *t, unsigned char **data,
                      const size_t *bytes, json_t **reply, sg_err *err);

/* Copy src with comments removed (//@ lines kept), backslash-newlines joined, `%:` as `#`. */
void sg_val_strip_comments(const char *src, size_t len, sg_buf *out);

/* d at shape s: randint's size expressions evaluated (lo <= hi); errors name the init. */
int sg_val_dist_at(const sg_val_dist *d, const sg_val_sizes *s, sg_val_dist *out, sg_err *err);

/* ---- the validation job, run inside a worker ---- */
/* Run one validation job in this process. Returns 0 with r filled, or SG_BE_STICKY
 * (r filled too) when the device context is lost and the process must exit. */
int sg_val_check(sg_dev *d, const sg_val_job *job, sg_val_result *r);

/* Reference then candidate at shape s with inputs drawn from seed and each input
 * buffer's distribution number `dist` (run.c). passed: the last shape that passed before
 * (NULL: none), for the precision-loss hint of a mismatch. 0: matched; -1: r says what
 * failed; SG_BE_STICKY: the device context is lost. */
int sg_val_check_shape(sg_dev *d, const sg_val_task *t, const sg_val_sizes *s, int dist,
                       uint64_t seed, const sg_val_source *cand, const sg_val_source *ref,
                       const sg_val_sizes *passed, sg_val_result *r);

/* A mismatch of output b (n elements of got against ref) that looks like precision loss
 * from accumulating in the task's bf16 / f16 type (precision.c says when): 1 with a
 * sentence in out, else 0 and out empty. n_passed: b's element count at the last shape
 * that passed (-1: none passed yet), shown as passed_shape with its max relative error. */
int sg_val_precision_hint(const sg_val_task *t, const sg_val_buffer *b, const void *got,
                          const void *ref, size_t n, int64_t n_passed, const char *passed_shape,
                          double passed_max_rel, char *out, size_t outn);

#endif
