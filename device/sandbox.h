/* sandbox.h — the worker's file sandbox (internal to device/: worker.c applies it).
 * Contract: sg_dev_sandbox_apply confines the calling process for good (Landlock): it may
 * then read only the system's libraries and toolkits, the OpenCL vendor files, /proc/self,
 * /sys, a few device nodes and the given folders (read_dirs, NULL-terminated: the task
 * folders), and write only PoCL's and CUDA's cache folders; no TCP. 0, or -1 with err
 * saying why (no Landlock on this kernel: fail closed). SPECGEN_UNSANDBOXED=1 skips it. */
#ifndef SG_DEV_SANDBOX_H
#define SG_DEV_SANDBOX_H

#include "common/err.h"

int sg_dev_sandbox_apply(const char *const *read_dirs, sg_err *err);

#endif
