/* prof_streams (make gpu-check): the profiler's CUDA timing counts work on every stream.
 * A short kernel runs on the default stream while a long one runs on a second,
 * non-blocking stream, both inside one timed region. CUPTI's span (device/cupti.h,
 * what the profiler uses) must cover the long kernel; a CUDA-event timer on the default
 * stream (what KernelBench uses) sees only the short one, and is printed beside it.
 * Needs an NVIDIA GPU with its driver, and the CUDA headers at build time. TAP output;
 * exit 0 all good, 1 a check failed, 77 cannot run here (says why). */
#include "device/cupti.h"

#include <stdio.h>
#include <string.h>

#if defined(SG_HAVE_CUDA_H)
#include <cuda.h>
#include <dlfcn.h>

/* A clock64 spin loop (nvcc -ptx of a 4-line kernel), PTX 7.0 so older drivers JIT it. */
static const char spin_ptx[] = ".version 7.0\n"
                               ".target sm_80\n"
                               ".address_size 64\n"
                               ".visible .entry spin(.param .u64 spin_param_0)\n"
                               "{\n"
                               "  .reg .pred %p<2>;\n"
                               "  .reg .b64 %rd<8>;\n"
                               "  ld.param.u64 %rd3, [spin_param_0];\n"
                               "  mov.u64 %rd5, %clock64;\n"
                               "$L__BB0_1:\n"
                               "  mov.u64 %rd6, %clock64;\n"
                               "  sub.s64 %rd7, %rd6, %rd5;\n"
                               "  setp.lt.s64 %p1, %rd7, %rd3;\n"
                               "  @%p1 bra $L__BB0_1;\n"
                               "  ret;\n"
                               "}\n";

typedef struct api {
    CUresult (*init)(unsigned);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*retain)(CUcontext *, CUdevice);
    CUresult (*set_current)(CUcontext);
    CUresult (*load)(CUmodule *, const void *);
    CUresult (*get_function)(CUfunction *, CUmodule, const char *);
    CUresult (*stream_create)(CUstream *, unsigned);
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       unsigned, CUstream, void **, void **);
    CUresult (*sync)(void);
    CUresult (*event_create)(CUevent *, unsigned);
    CUresult (*event_record)(CUevent, CUstream);
    CUresult (*event_sync)(CUevent);
    CUresult (*elapsed)(float *, CUevent, CUevent);
} api;

static int tap_n, failed;
static void check(int ok, const char *what) {
    printf("%s %d - %s\n", ok ? "ok" : "not ok", ++tap_n, what);
    failed |= !ok;
}

static int launch(api *a, CUfunction f, long long cycles, CUstream s) {
    void *params[] = {&cycles};
    return a->launch(f, 1, 1, 1, 32, 1, 1, 0, s, params, NULL) == CUDA_SUCCESS ? 0 : -1;
}

/* One timed region: short on the default stream, long (or nothing) on `side`. */
static int region(api *a, sg_cupti *c, CUfunction f, long long shortc, long long longc,
                  CUstream side, double *cupti_ns, double *event_ns, int *nk) {
    sg_err err;
    CUevent e0, e1;
    a->event_create(&e0, 0);
    a->event_create(&e1, 0);
    if (sg_cupti_begin(c, &err) < 0) return fprintf(stderr, "%s\n", err.msg), -1;
    a->event_record(e0, NULL);
    if (longc && launch(a, f, longc, side) < 0) return -1;
    if (launch(a, f, shortc, NULL) < 0) return -1;
    a->event_record(e1, NULL);
    a->event_sync(e1);
    float ms = 0;
    a->elapsed(&ms, e0, e1);
    *event_ns = ms * 1e6;
    a->sync();
    if (sg_cupti_end(c, cupti_ns, nk, &err) < 0) return fprintf(stderr, "%s\n", err.msg), -1;
    return 0;
}

int main(void) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) return printf("1..0 # SKIP no NVIDIA driver (libcuda.so.1: %s)\n", dlerror()), 77;
    api a;
    struct {
        const char *name;
        void **slot;
    } syms[] = {{"cuInit", (void **)&a.init},
                {"cuDeviceGet", (void **)&a.device_get},
                {"cuDevicePrimaryCtxRetain", (void **)&a.retain},
                {"cuCtxSetCurrent", (void **)&a.set_current},
                {"cuModuleLoadData", (void **)&a.load},
                {"cuModuleGetFunction", (void **)&a.get_function},
                {"cuStreamCreate", (void **)&a.stream_create},
                {"cuLaunchKernel", (void **)&a.launch},
                {"cuCtxSynchronize", (void **)&a.sync},
                {"cuEventCreate", (void **)&a.event_create},
                {"cuEventRecord_v2", (void **)&a.event_record},
                {"cuEventSynchronize", (void **)&a.event_sync},
                {"cuEventElapsedTime_v2", (void **)&a.elapsed}};
    for (size_t i = 0; i < sizeof syms / sizeof *syms; i++) {
        *syms[i].slot = dlsym(h, syms[i].name);
        if (!*syms[i].slot && !strcmp(syms[i].name, "cuEventRecord_v2"))
            *syms[i].slot = dlsym(h, "cuEventRecord");
        if (!*syms[i].slot && !strcmp(syms[i].name, "cuEventElapsedTime_v2"))
            *syms[i].slot = dlsym(h, "cuEventElapsedTime");
        if (!*syms[i].slot) return printf("1..0 # SKIP the driver lacks %s\n", syms[i].name), 77;
    }
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    CUstream side;
    if (a.init(0) || a.device_get(&dev, 0) || a.retain(&ctx, dev) || a.set_current(ctx))
        return printf("1..0 # SKIP no usable NVIDIA GPU (cuInit/cuDeviceGet failed)\n"), 77;
    if (a.load(&mod, spin_ptx) || a.get_function(&f, mod, "spin") ||
        a.stream_create(&side, CU_STREAM_NON_BLOCKING))
        return printf("1..1\nnot ok 1 - the spin fixture loads (PTX JIT)\n"), 1;
    sg_cupti *c;
    sg_err err;
    if (sg_cupti_open(&c, &err) < 0)
        return printf("1..1\nnot ok 1 - CUPTI opens: %s\n", err.msg), 1;
    printf("1..5\n");
    const long long shortc = 200000, longc = 20000000; /* ~0.1 ms and ~10 ms of clocks */
    double alone_ns, alone_ev, short_ns, short_ev, both_ns, both_ev;
    int nk = 0;
    check(region(&a, c, f, longc, 0, NULL, &alone_ns, &alone_ev, &nk) == 0 && nk == 1,
          "the long kernel alone is timed (one kernel record)");
    check(region(&a, c, f, shortc, 0, NULL, &short_ns, &short_ev, &nk) == 0 && nk == 1,
          "the short kernel alone is timed");
    check(region(&a, c, f, shortc, longc, side, &both_ns, &both_ev, &nk) == 0 && nk == 2,
          "short on the default stream + long on a second stream: two kernel records");
    printf("# long alone %.3f ms, short alone %.3f ms; both: CUPTI span %.3f ms, CUDA events "
           "on the default stream %.3f ms\n",
           alone_ns / 1e6, short_ns / 1e6, both_ns / 1e6, both_ev / 1e6);
    check(both_ns >= 0.9 * alone_ns, "the measured time includes the second stream's work");
    check(both_ns > 5 * short_ns, "and is far above the default stream's kernel alone");
    sg_cupti_close(c);
    return failed;
}

#else
int main(void) {
    printf("1..0 # SKIP built without the CUDA headers (cuda.h, cupti_activity.h)\n");
    return 77;
}
#endif
