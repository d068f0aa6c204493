/* The CUDA entry-point tables (see cuda.h): one pthread_once per library. A handle is
 * never dlclosed: the driver's state lives as long as the process, and libcupti, once
 * attached, has hooked the driver's callbacks and may run its own threads; it has no
 * NODELETE flag and CUPTI only supports detaching through cuptiFinalize, so unloading it
 * mid-process would be undefined. */
#include "common/cuda.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct lib {
    pthread_once_t once;
    void *handle;
    int ok;
    sg_err err; /* why it did not load, for every later call */
} lib;

static sg_cuda_driver driver;
static sg_cuda_nvrtc nvrtc;
static sg_cuda_cupti cupti;
static lib driver_lib = {.once = PTHREAD_ONCE_INIT};
static lib nvrtc_lib = {.once = PTHREAD_ONCE_INIT};
static lib cupti_lib = {.once = PTHREAD_ONCE_INIT};

#define SYM(name, member, optional, ret, params) {#name, (void **)&a->member, optional},

static const char *cuda_home(void) {
    const char *home = getenv("CUDA_HOME");
    return home ? home : "/usr/local/cuda";
}

static int loaded(const lib *l, sg_err *err) {
    if (!l->ok && err) *err = l->err;
    return l->ok;
}

static void load_driver(void) {
    static const char *const names[] = {"libcuda.so.1", "libcuda.so", NULL};
    sg_cuda_driver *a = &driver;
    const sg_dl_sym syms[] = {SG_CUDA_DRIVER_SYMS(SYM){NULL, NULL, 0}};
    driver_lib.ok = sg_dl_load(names, syms, &driver_lib.handle, &driver_lib.err) == 0;
}

/* Not on the loader path: the toolkit folder. The message stays the loader path's. */
static void load_nvrtc(void) {
    static const char *const names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
                                        "libnvrtc.so.11.2", NULL};
    sg_cuda_nvrtc *a = &nvrtc;
    const sg_dl_sym syms[] = {SG_CUDA_NVRTC_SYMS(SYM){NULL, NULL, 0}};
    lib *l = &nvrtc_lib;
    if ((l->ok = sg_dl_load(names, syms, &l->handle, &l->err) == 0)) return;
    char p[2][600];
    snprintf(p[0], sizeof p[0], "%s/lib64/libnvrtc.so", cuda_home());
    snprintf(p[1], sizeof p[1], "%s/targets/x86_64-linux/lib/libnvrtc.so", cuda_home());
    const char *const alt[] = {p[0], p[1], NULL};
    l->ok = sg_dl_load(alt, syms, &l->handle, NULL) == 0;
}

static void load_cupti(void) {
    char p[3][600];
    snprintf(p[0], sizeof p[0], "%s/lib64/libcupti.so", cuda_home());
    snprintf(p[1], sizeof p[1], "%s/extras/CUPTI/lib64/libcupti.so", cuda_home());
    snprintf(p[2], sizeof p[2], "%s/targets/x86_64-linux/lib/libcupti.so", cuda_home());
    const char *const names[] = {
        "libcupti.so", "libcupti.so.13", "libcupti.so.12", p[0], p[1], p[2], NULL};
    sg_cuda_cupti *a = &cupti;
    const sg_dl_sym syms[] = {SG_CUDA_CUPTI_SYMS(SYM){NULL, NULL, 0}};
    cupti_lib.ok = sg_dl_load(names, syms, &cupti_lib.handle, &cupti_lib.err) == 0;
}

const sg_cuda_driver *sg_cuda_driver_load(sg_err *err) {
    pthread_once(&driver_lib.once, load_driver);
    return loaded(&driver_lib, err) ? &driver : NULL;
}

const sg_cuda_nvrtc *sg_cuda_nvrtc_load(sg_err *err) {
    pthread_once(&nvrtc_lib.once, load_nvrtc);
    return loaded(&nvrtc_lib, err) ? &nvrtc : NULL;
}

const sg_cuda_cupti *sg_cuda_cupti_load(sg_err *err) {
    pthread_once(&cupti_lib.once, load_cupti);
    return loaded(&cupti_lib, err) ? &cupti : NULL;
}

int sg_cuda_cupti_resolve(const sg_dl_sym *syms, sg_err *err) {
    if (!sg_cuda_cupti_load(err)) return -1;
    return sg_dl_resolve(cupti_lib.handle, "libcupti", syms, err);
}
