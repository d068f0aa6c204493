/* CUDA backend: NVRTC (libnvrtc, dlopen'ed) compiles to a cubin for the device's
 * architecture (or --arch when compile-only); the driver API (libcuda.so.1, dlopen'ed)
 * loads and runs it. Without a driver or GPU, open() fails with SG_BE_NODEV unless
 * compile-only was asked for. The CUDA headers are not needed: the entry points and the
 * few types come from common/cuda.h, with the ABI the libraries export. */
#include "device/device.h"

#include "common/cuda.h"
#include "device/cupti.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct sg_be {
    const sg_cuda_nvrtc *rt;
    const sg_cuda_driver *cu; /* NULL when compile-only */
    sg_cu_device dev;
    sg_cu_context ctx;
    char arch[16];
    int compile_only;
    sg_be_limits lim;
    char cuda_inc[512];
    char pch_dir[1024]; /* NVRTC's automatic PCH folder; "": no PCH */
    sg_cupti *cupti;    /* the profiler's: opened by the first timed region */
    sg_cupti_metrics *metrics;
};
struct sg_be_prog {
    sg_cu_module mod;
    int nk;
    sg_cu_function *k;
    unsigned char *params_ok; /* per kernel: check_params passed (a kernel's plan line is fixed) */
    uint64_t *smem_cap;       /* per kernel: the dynamic shared memory cap raised so far */
};
struct sg_be_mem {
    sg_cu_ptr p;
    size_t bytes;
};

/* Errors after which the context is unusable: the worker must be replaced (cuda.h says
 * "the process must be terminated and relaunched" for each of these). */
static int sticky(sg_cu_result r) {
    return r == SG_CU_ERR_ILLEGAL_ADDRESS || r == SG_CU_ERR_LAUNCH_TIMEOUT ||
           r == SG_CU_ERR_ASSERT ||
           (r >= SG_CU_ERR_HARDWARE_STACK_ERROR && r <= SG_CU_ERR_LAUNCH_FAILED) ||
           r == SG_CU_ERR_TENSOR_MEMORY_LEAK;
}

static int cufail(sg_be *be, sg_err *err, const char *what, sg_cu_result r) {
    const char *s = NULL;
    if (be->cu && be->cu->errstr) be->cu->errstr(r, &s);
    sg_errf(err, "CUDA %s failed: %s (error %d)%s", what, s ? s : "unknown error", r,
            sticky(r) ? "; the context is lost and the worker will be replaced" : "");
    return sticky(r) ? SG_BE_STICKY : -1;
}

static int load_driver(sg_be *be, int index, sg_err *err) {
    const sg_cuda_driver *a = be->cu = sg_cuda_driver_load(err);
    if (!a) return -1;
    sg_cu_result r = a->init(0);
    if (r != 0) return cufail(be, err, "cuInit (is there an NVIDIA GPU and driver?)", r);
    int n = 0;
    if ((r = a->device_count(&n)) != 0) return cufail(be, err, "cuDeviceGetCount", r);
    if (index < 0 || index >= n)
        return sg_errf(err, "there is no GPU cuda:%d (this machine has %d)", index, n);
    if ((r = a->device_get(&be->dev, index)) != 0) return cufail(be, err, "cuDeviceGet", r);
    if ((r = a->primary_retain(&be->ctx, be->dev)) != 0)
        return cufail(be, err, "cuDevicePrimaryCtxRetain", r);
    if ((r = a->set_current(be->ctx)) != 0) return cufail(be, err, "cuCtxSetCurrent", r);
    int major = 0, minor = 0, v = 0;
    a->attr(&major, SG_CU_DEV_COMPUTE_CAPABILITY_MAJOR, be->dev);
    a->attr(&minor, SG_CU_DEV_COMPUTE_CAPABILITY_MINOR, be->dev);
    /* From Hopper on, the arch-specific target ("sm_90a") unlocks instructions that the
     * portable one rejects (wgmma, setmaxnreg; ptxas aborts on them for sm_90). Code
     * for it runs only on this exact compute capability, which is the device here. */
    snprintf(be->arch, sizeof be->arch, "sm_%d%d%s", major, minor, major >= 9 ? "a" : "");
    a->attr(&v, SG_CU_DEV_MAX_THREADS_PER_BLOCK, be->dev);
    be->lim.max_block = (uint64_t)v;
    for (int d = 0; d < 3; d++) {
        a->attr(&v, SG_CU_DEV_MAX_GRID_DIM_X + d, be->dev);
        be->lim.max_grid[d] = (uint64_t)v;
    }
    a->attr(&v, SG_CU_DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, be->dev);
    be->lim.max_smem = (uint64_t)v;
    be->lim.align = 256;
    return 0;
}

static void cu_close(sg_be *be) {
    if (!be) return;
    sg_cupti_close(be->cupti);
    free(be);
}

static int cu_open(sg_be **out, const sg_dev_opts *o, sg_err *err) {
    sg_be *be = sg_xcalloc(1, sizeof *be);
    const char *home = getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "/usr/local/cuda";
    snprintf(be->cuda_inc, sizeof be->cuda_inc, "%s/include", home);
    be->compile_only = o->compile_only;
    if (!(be->rt = sg_cuda_nvrtc_load(err))) {
        cu_close(be);
        return sg_err_prefix(err, "NVRTC is needed to compile CUDA kernels");
    }
    if (!o->compile_only) {
        sg_err e2;
        if (load_driver(be, o->cuda_device, &e2) < 0) {
            sg_errf(err, "CUDA execution needs an NVIDIA GPU with its driver (%s)", e2.msg);
            cu_close(be);
            return SG_BE_NODEV;
        }
    }
    if (o->arch && (o->compile_only || !be->arch[0]))
        snprintf(be->arch, sizeof be->arch, "%s", o->arch);
    if (!be->arch[0]) snprintf(be->arch, sizeof be->arch, "sm_90");
    sg_dev_pch_dir(o, be->pch_dir, sizeof be->pch_dir);
    if (be->pch_dir[0]) {
        /* NVRTC writes a PCH through a temporary file in $TMPDIR (else /tmp), which the
         * worker's sandbox does not let it write: this process's temporary files go to a
         * folder inside the PCH folder, which it may. */
        char tmp[1100];
        snprintf(tmp, sizeof tmp, "%s/tmp", be->pch_dir);
        mkdir(tmp, 0700);
        setenv("TMPDIR", tmp, 1);
    }
    *out = be;
    return 0;
}

static void cu_limits(sg_be *be, sg_be_limits *l) {
    if (be->compile_only) {
        sg_be_limits d = {1024, {2147483647u, 65535, 65535}, 227 * 1024, 256, "", 0};
        *l = d;
    } else {
        *l = be->lim;
    }
    snprintf(l->arch, sizeof l->arch, "%s", be->arch);
}

static void cu_free_prog(sg_be *be, sg_be_prog *p) {
    if (!p) return;
    if (p->mod) be->cu->unload(p->mod);
    free(p->k);
    free(p->params_ok);
    free(p->smem_cap);
    free(p);
}

static int nvrtc_compile(sg_be *be, const char *src, const char *dir, const char *const *kernels,
                         int nk, char **cubin, size_t *cubin_len, char ***lowered, sg_buf *log,
                         sg_err *err) {
    sg_nvrtc_program prog = NULL;
    const char **hnames, **htexts;
    int nh = sg_nvrtc_headers(&hnames, &htexts);
    sg_nvrtc_result r = be->rt->create(&prog, src, "candidate.cu", nh, htexts, hnames);
    if (r != 0) return sg_errf(err, "nvrtcCreateProgram failed: %s", be->rt->errstr(r));
    for (int i = 0; i < nk; i++) be->rt->add_name(prog, kernels[i]);
    char arch[48], inc1[600], inc2[600], inc3[620], pre[96], pch[1100];
    snprintf(arch, sizeof arch, "--gpu-architecture=%s", be->arch);
    snprintf(inc1, sizeof inc1, "-I%s", dir);
    snprintf(inc2, sizeof inc2, "-I%s", be->cuda_inc);
    /* CUDA 13 keeps CCCL (cub/, cuda/std/, cuda/barrier, the part of cooperative_groups
     * built on them) in include/cccl; CUDA 12 has them in include/ (the path is then
     * absent, which NVRTC ignores). */
    snprintf(inc3, sizeof inc3, "-I%s/cccl", be->cuda_inc);
    snprintf(pre, sizeof pre, "--pre-include=%s", sg_nvrtc_prelude_name);
    snprintf(pch, sizeof pch, "--pch-dir=%s", be->pch_dir);
    /* The task folder only for a source that includes a file by "name": -I is part of a
     * PCH's key, so without it every task's candidates share the same PCHs. */
    const char *opts[10] = {arch, inc2, inc3, "--std=c++17", "-lineinfo"};
    int no = 5;
    if (strstr(src, "#include \"") || strstr(src, "# include \"")) opts[no++] = inc1;
    if (sg_nvrtc_needs_prelude(src)) opts[no++] = pre;
    if (be->pch_dir[0]) opts[no++] = "--pch", opts[no++] = pch;
    r = be->rt->compile(prog, no, opts);
    size_t n = 0;
    be->rt->log_size(prog, &n);
    if (n > 1) {
        sg_buf_reserve(log, n);
        be->rt->log(prog, log->data + log->len);
        log->len += strnlen(log->data + log->len, n);
    }
    int rc = 0;
    if (r != 0) {
        rc = sg_errf(err, "NVRTC rejected the source for %s (%s)", be->arch, be->rt->errstr(r));
    } else {
        be->rt->cubin_size(prog, cubin_len);
        *cubin = sg_xmalloc(*cubin_len + 1);
        be->rt->cubin(prog, *cubin);
        *lowered = sg_xcalloc((size_t)nk + 1, sizeof **lowered);
        for (int i = 0; i < nk; i++) {
            const char *lw = NULL;
            be->rt->lowered(prog, kernels[i], &lw);
            (*lowered)[i] = sg_xstrdup(lw ? lw : kernels[i]);
        }
    }
    be->rt->destroy(&prog);
    return rc;
}

static int cu_compile(sg_be *be, const char *src, const char *dir, const char *const *kernels,
                      int nk, sg_be_prog **out, sg_buf *log, sg_err *err) {
    char *cubin = NULL, **lowered = NULL;
    size_t clen = 0;
    if (nvrtc_compile(be, src, dir, kernels, nk, &cubin, &clen, &lowered, log, err) < 0) return -1;
    sg_be_prog *p = sg_xcalloc(1, sizeof *p);
    p->nk = nk;
    p->k = sg_xcalloc((size_t)nk + 1, sizeof *p->k);
    p->params_ok = sg_xcalloc((size_t)nk + 1, 1);
    p->smem_cap = sg_xcalloc((size_t)nk + 1, sizeof *p->smem_cap);
    int rc = 0;
    if (!be->compile_only) {
        sg_cu_result r = be->cu->load(&p->mod, cubin);
        if (r != 0) rc = cufail(be, err, "cuModuleLoadData", r);
        for (int i = 0; rc == 0 && i < nk; i++) {
            r = be->cu->get_function(&p->k[i], p->mod, lowered[i]);
            if (r != 0)
                rc = sg_errf(err, "no __global__ kernel named \"%s\" in the module", kernels[i]);
        }
    }
    for (int i = 0; i < nk; i++) free(lowered[i]);
    free(lowered);
    free(cubin);
    if (rc < 0) {
        cu_free_prog(be, p);
        return rc;
    }
    *out = p;
    return 0;
}

static int cu_alloc(sg_be *be, size_t bytes, sg_be_mem **out, sg_err *err) {
    if (be->compile_only) return sg_errf(err, "compile-only: no device memory");
    sg_be_mem *m = sg_xcalloc(1, sizeof *m);
    sg_cu_result r = be->cu->alloc(&m->p, bytes ? bytes : 1);
    if (r != 0) {
        free(m);
        return cufail(be, err, "cuMemAlloc", r);
    }
    m->bytes = bytes;
    *out = m;
    return 0;
}

static void cu_free_mem(sg_be *be, sg_be_mem *m) {
    if (!m) return;
    be->cu->free(m->p);
    free(m);
}

static int cu_write(sg_be *be, sg_be_mem *m, size_t off, const void *src, size_t n, sg_err *err) {
    sg_cu_result r = n ? be->cu->htod(m->p + off, src, n) : 0;
    return r ? cufail(be, err, "cuMemcpyHtoD", r) : 0;
}

static int cu_read(sg_be *be, sg_be_mem *m, size_t off, void *dst, size_t n, sg_err *err) {
    sg_cu_result r = n ? be->cu->dtoh(dst, m->p + off, n) : 0;
    return r ? cufail(be, err, "cuMemcpyDtoH", r) : 0;
}

/* The driver reads as many parameters as the kernel declares: a launch passing fewer
 * would hand it garbage, so count and size them first (when the driver can tell).
 * cuFuncGetParamInfo answers CUDA_ERROR_INVALID_VALUE past the last parameter; any other
 * error on the first one means it cannot tell, and no check is made. */
static int check_params(sg_be *be, sg_cu_function f, const sg_be_arg *args, int nargs,
                        sg_err *err) {
    if (!be->cu->param_info) return 0;
    size_t off, size;
    sg_cu_result r = be->cu->param_info(f, 0, &off, &size);
    if (r != 0 && r != SG_CU_ERR_INVALID_VALUE)
        return sticky(r) ? cufail(be, err, "cuFuncGetParamInfo", r) : 0;
    int n = 0;
    while (n < 256 && be->cu->param_info(f, (size_t)n, &off, &size) == 0) {
        if (n < nargs) {
            size_t want = args[n].mem ? sizeof(sg_cu_ptr) : args[n].bytes;
            if (size != want)
                return sg_errf(err,
                               "parameter %d of the kernel is %zu bytes but the launch passes %zu",
                               n, size, want);
        }
        n++;
    }
    /* n == 0: a kernel without parameters, or a driver that cannot tell yet (a lazily
     * loaded module; only a GPU run can say): never fail a launch on that alone. */
    if (n != nargs && n > 0)
        return sg_errf(err, "the kernel takes %d parameters but the launch passes %d", n, nargs);
    return 0;
}

static int cu_launch(sg_be *be, sg_be_prog *p, int ki, const sg_be_arg *args, int nargs,
                     const uint64_t grid[3], const uint64_t block[3], uint64_t smem, sg_err *err) {
    sg_cu_ptr ptrs[64];
    void *params[64];
    if (nargs > 64) return sg_errf(err, "more than 64 kernel arguments");
    for (int i = 0; i < nargs; i++) {
        if (args[i].mem) {
            ptrs[i] = args[i].mem->p + args[i].offset;
            params[i] = &ptrs[i];
        } else {
            params[i] = (void *)args[i].scalar;
        }
    }
    int rc = p->params_ok[ki] ? 0 : check_params(be, p->k[ki], args, nargs, err);
    if (rc < 0) return rc;
    p->params_ok[ki] = 1; /* once: the timed launches should not pay for it */
    /* Dynamic shared memory is capped at 48 KiB minus the kernel's static shared memory
     * unless raised, so a kernel with static shared memory fails below 48 KiB of dynamic:
     * raise the cap to what this launch asks for whenever it asks for more than before
     * (once per kernel and size: the timed launches should not pay for it). */
    sg_cu_result r = 0;
    if (smem > p->smem_cap[ki]) {
        r = be->cu->func_set_attr(p->k[ki], SG_CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem);
        if (r == 0) p->smem_cap[ki] = smem;
    }
    if (r != 0) {
        int st = 0;
        be->cu->func_attr(&st, SG_CU_FUNC_SHARED_SIZE_BYTES, p->k[ki]);
        rc = cufail(be, err, "cuFuncSetAttribute (dynamic shared memory)", r);
        return rc == SG_BE_STICKY ? rc
                                  : sg_err_prefix(err,
                                                  "%llu bytes of dynamic shared memory on top of "
                                                  "the kernel's %d static do not fit the device",
                                                  (unsigned long long)smem, st);
    }
    r = be->cu->launch(p->k[ki], (unsigned)grid[0], (unsigned)grid[1], (unsigned)grid[2],
                       (unsigned)block[0], (unsigned)block[1], (unsigned)block[2], (unsigned)smem,
                       NULL, params, NULL);
    return r ? cufail(be, err, "cuLaunchKernel", r) : 0;
}

static int cu_finish(sg_be *be, sg_err *err) {
    sg_cu_result r = be->cu->sync();
    return r ? cufail(be, err, "the kernel (cuCtxSynchronize)", r) : 0;
}

/* ---- the profiler's part: CUPTI timing, L2 flush, kernel facts from the driver ---- */
static int cu_time_begin(sg_be *be, sg_err *err) {
    if (be->compile_only) return sg_errf(err, "compile-only: nothing can be timed");
    if (!be->cupti && sg_cupti_open(&be->cupti, err) < 0) return -1;
    int rc = cu_finish(be, err); /* earlier work must not fall into the region */
    return rc < 0 ? rc : sg_cupti_begin(be->cupti, err);
}

static int cu_time_end(sg_be *be, double *ns, sg_err *err) {
    int rc = cu_finish(be, err); /* every stream: the context, not one stream */
    if (rc < 0) return rc;
    return sg_cupti_end(be->cupti, ns, NULL, err);
}

static int cu_fill(sg_be *be, sg_be_mem *m, size_t n, sg_err *err) {
    if (!be->cu->memset8) return sg_errf(err, "the driver lacks cuMemsetD8");
    sg_cu_result r = be->cu->memset8(m->p, 0x5a, n);
    if (r == 0) r = be->cu->sync();
    return r ? cufail(be, err, "cuMemsetD8 (cache flush)", r) : 0;
}

static uint64_t cu_llc_bytes(sg_be *be) {
    int v = 0;
    if (be->compile_only || be->cu->attr(&v, SG_CU_DEV_L2_CACHE_SIZE, be->dev) != 0) return 0;
    return (uint64_t)v;
}

static int cu_facts(sg_be *be, sg_be_prog *p, int ki, const uint64_t block[3], uint64_t smem,
                    sg_be_facts *f, sg_err *err) {
    if (be->compile_only) return sg_errf(err, "compile-only: no driver to ask");
    sg_cu_function fn = p->k[ki];
    int maxt = 0, sh = 0, local = 0, regs = 0;
    memset(f, 0, sizeof *f);
    be->cu->func_attr(&maxt, SG_CU_FUNC_MAX_THREADS_PER_BLOCK, fn);
    be->cu->func_attr(&sh, SG_CU_FUNC_SHARED_SIZE_BYTES, fn); /* static */
    be->cu->func_attr(&local, SG_CU_FUNC_LOCAL_SIZE_BYTES, fn);
    be->cu->func_attr(&regs, SG_CU_FUNC_NUM_REGS, fn);
    f->wg_limit = (uint64_t)maxt;
    f->shared_bytes = (uint64_t)sh + smem;
    f->local_bytes = (uint64_t)local;
    f->registers = regs;
    int threads = (int)(block[0] * block[1] * block[2]), per_sm = 0;
    int sm_threads = 0, sm_regs = 0, sm_smem = 0, sm_blocks = 0;
    be->cu->attr(&sm_threads, SG_CU_DEV_MAX_THREADS_PER_MULTIPROCESSOR, be->dev);
    be->cu->attr(&sm_smem, SG_CU_DEV_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, be->dev);
    be->cu->attr(&sm_regs, SG_CU_DEV_MAX_REGISTERS_PER_MULTIPROCESSOR, be->dev);
    be->cu->attr(&sm_blocks, SG_CU_DEV_MAX_BLOCKS_PER_MULTIPROCESSOR, be->dev);
    if (!be->cu->occupancy || be->cu->occupancy(&per_sm, fn, threads, (size_t)smem) != 0 ||
        sm_threads <= 0)
        return 0;
    f->occupancy = (double)per_sm * threads / sm_threads;
    /* The limiter: whichever resource allows the fewest blocks per multiprocessor. */
    long by_threads = sm_threads / (threads ? threads : 1);
    long reg_need = (long)regs * (threads ? threads : 1);
    long by_regs = reg_need > 0 ? sm_regs / reg_need : 1L << 30;
    long by_smem = f->shared_bytes ? sm_smem / (long)f->shared_bytes : 1L << 30;
    long by_blocks = sm_blocks > 0 ? sm_blocks : 1L << 30;
    f->limiter = "block size";
    long best = by_threads;
    if (by_regs < best) best = by_regs, f->limiter = "registers";
    if (by_smem < best) best = by_smem, f->limiter = "shared memory";
    if (by_blocks < best) f->limiter = "blocks per multiprocessor";
    return 0;
}

/* The activity collector is closed first (reopened by the next timed region): the
 * Range Profiler replays kernels and must not share them with activity records. */
static int cu_metrics_begin(sg_be *be, sg_err *err) {
    if (be->compile_only) return sg_errf(err, "metrics unavailable: compile-only");
    int rc = cu_finish(be, err);
    if (rc < 0) return rc;
    sg_cupti_close(be->cupti);
    be->cupti = NULL;
    return sg_cupti_metrics_begin(&be->metrics, be->ctx, (int)be->dev, err);
}

static int cu_metrics_end(sg_be *be, char *out, size_t n, sg_err *err) {
    int rc = cu_finish(be, err);
    sg_cupti_metrics *m = be->metrics;
    be->metrics = NULL;
    if (!m) return sg_errf(err, "metrics unavailable: collection was not started");
    int rc2 = sg_cupti_metrics_end(m, out, n, err);
    return rc < 0 ? rc : rc2;
}

/* Peaks from the driver: DDR memory clock x bus width, and SMs x clock x FP32 lanes per
 * SM x 2 (FMA); the lanes per SM by architecture (64 on sm_70/sm_80, 128 from sm_86). The
 * name and compute capability let the profiler use a datasheet entry instead
 * (profiler/peaks.c), which also knows the tensor-core peaks no attribute gives. */
static int cu_peaks(sg_be *be, sg_be_peaks *p, sg_err *err) {
    if (be->compile_only) return sg_errf(err, "compile-only: no device");
    int mem_khz = 0, bus_bits = 0, sms = 0, khz = 0, major = 0, minor = 0;
    memset(p, 0, sizeof *p);
    be->cu->attr(&mem_khz, SG_CU_DEV_MEMORY_CLOCK_RATE, be->dev);
    be->cu->attr(&bus_bits, SG_CU_DEV_GLOBAL_MEMORY_BUS_WIDTH, be->dev);
    be->cu->attr(&sms, SG_CU_DEV_MULTIPROCESSOR_COUNT, be->dev);
    be->cu->attr(&khz, SG_CU_DEV_CLOCK_RATE, be->dev);
    be->cu->attr(&major, SG_CU_DEV_COMPUTE_CAPABILITY_MAJOR, be->dev);
    be->cu->attr(&minor, SG_CU_DEV_COMPUTE_CAPABILITY_MINOR, be->dev);
    if (be->cu->device_name(p->device, (int)sizeof p->device, be->dev) != 0) p->device[0] = 0;
    int lanes = major < 8 || (major == 8 && minor == 0) ? 64 : 128;
    p->gbs = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) / 1e9;
    p->fp32_gflops = (double)sms * khz * 1e3 * lanes * 2 / 1e9;
    p->cc_major = major;
    p->cc_minor = minor;
    return p->gbs > 0 && p->fp32_gflops > 0 ? 0
                                            : sg_errf(err, "the driver did not report the peaks");
}

/* How many GPUs the driver sees (cuInit in this process: call it in a child, device.h). */
static int cu_count(const sg_dev_opts *o, int *n, sg_err *err) {
    (void)o;
    const sg_cuda_driver *a = sg_cuda_driver_load(err);
    if (!a) return SG_BE_NODEV;
    sg_cu_result r = a->init(0);
    if (r != 0)
        return sg_errf(err, "cuInit failed (error %d): no usable NVIDIA GPU", r), SG_BE_NODEV;
    if ((r = a->device_count(n)) != 0) return sg_errf(err, "cuDeviceGetCount failed (error %d)", r);
    return 0;
}

const sg_be_ops sg_be_cuda_ops = {
    "cuda",         cu_open,     cu_close, cu_limits,    cu_compile, cu_free_prog,
    cu_alloc,       cu_free_mem, cu_write, cu_read,      cu_launch,  cu_finish,
    cu_time_begin,  cu_time_end, cu_fill,  cu_llc_bytes, cu_facts,   cu_metrics_begin,
    cu_metrics_end, cu_peaks,    cu_count, NULL,         NULL};

const sg_be_ops *sg_be_ops_for(sg_dev_lang lang) {
    return lang == SG_DEV_CUDA ? &sg_be_cuda_ops : &sg_be_opencl_ops;
}
