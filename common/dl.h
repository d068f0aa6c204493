/* dl.h — loading optional shared libraries (CUDA, NVRTC, CUPTI) at run time.
 *
 * Contract: sg_dl_load tries each candidate file name in order and resolves every
 * symbol in the table into its slot. On failure it returns -1 and the message says
 * which library could not be found (with the names tried and dlerror's reason) or
 * which symbol is missing from which library; slots of optional symbols that are
 * absent are set to NULL without failing. The handle is the caller's: sg_dl_close. */
#ifndef SG_DL_H
#define SG_DL_H

#include "common/err.h"

typedef struct sg_dl_sym {
    const char *name;
    void **slot;
    int optional;
} sg_dl_sym;

/* names: NULL-terminated list of file names to try (e.g. "libcuda.so.1").
 * syms: table ending with {NULL}. *handle receives the dlopen handle. */
int sg_dl_load(const char *const *names, const sg_dl_sym *syms, void **handle, sg_err *err);
/* Resolve syms from an open handle; lib names the library in the message. -1 when a
 * required symbol is missing (the slots resolved so far stay filled). */
int sg_dl_resolve(void *handle, const char *lib, const sg_dl_sym *syms, sg_err *err);
void sg_dl_close(void *handle);

#endif
