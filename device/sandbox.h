/* sandbox.h — the worker's file sandbox (internal to device/: worker.c applies it).
 * Contract: sg_dev_sandbox_apply confines the calling process for good (Landlock): it may
 * then read only the system's libraries and toolkits, the OpenCL vendor files, /proc/self,
 * /sys, a few device nodes and the given folders (read_dirs, NULL-terminated: the task
 * folders), and write only PoCL's and CUDA's cache folders and write_dir (NVRTC's PCH
 * folder, sg_dev_pch_dir; NULL or "": none); no TCP. 0, or -1 with err
 * saying why (no Landlock on this kernel: fail closed). SPECGEN_UNSANDBOXED=1 skips it. */
#ifndef SG_DEV_SANDBOX_H
#define SG_DEV_SANDBOX_H

#include "common/err.h"

int sg_dev_sandbox_apply(const char *const *read_dirs, const char *write_dir, sg_err *err);

/* Drop every environment variable the compilers and runtimes do not need (API keys and
 * tokens above all: a candidate runs as native code in the worker on PoCL), zeroing their
 * text (common/proc.h's sg_proc_env_keep). Kept: PATH, HOME, TMPDIR, locale, the loader's
 * LD_LIBRARY_PATH, CUDA_*, NVIDIA_*, POCL_*, OCL_*, OPENCL_*, the sanitizers' *SAN_OPTIONS
 * and the worker's own SPECGEN_UNSANDBOXED, SPECGEN_SANDBOX_READ, SPECGEN_WORKER_STDERR. */
void sg_dev_sandbox_env(void);

/* A cache folder: $env, else $XDG_CACHE_HOME/xdg_sub, else $HOME/home_sub (into path, n
 * bytes); 0 if none of them is set. */
int sg_dev_cache_path(const char *env, const char *xdg_sub, const char *home_sub, char *path,
                      size_t n);

/* PoCL (3.1) leaves files in its kernel cache's top folder: an empty tempfile_XXXXXX at
 * every process's device start, and the tempfile_*.cl / *.preproc*.tmp of a compile whose
 * worker was killed (a timeout, a preempted validation) — about 1.4 GB over a day of tests.
 * Remove such tempfile_* entries older than an hour (a compile never takes that long, so
 * none is a live one), the cache folder's own entries untouched. Returns how many. */
int sg_dev_pocl_sweep(void);

#endif
