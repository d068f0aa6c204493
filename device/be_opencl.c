/* OpenCL backend: the ICD loader (PoCL on CPU machines). grid counts work-groups, so the
 * global size is grid*block per dimension. A buffer argument with an offset (the guard
 * bytes in front) is passed as a sub-buffer. smem > 0 appends a __local argument. */
#define CL_TARGET_OPENCL_VERSION 300
#include "device/device.h"

#include "common/buf.h"

#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CUTS 16

struct sg_be {
    cl_platform_id platform;
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue q;
    sg_be_limits lim;
    /* profiler: events of the launches in a timed region */
    int timing, nev, cap;
    cl_event *ev;
    int ncut, cut[MAX_CUTS]; /* several runs in one region: where each ends in ev */
    int peaks_rc;            /* 1: peaks measured (they do not change while the worker lives) */
    sg_be_peaks peaks;
};
struct sg_be_prog {
    cl_program prog;
    int nk;
    cl_kernel *k;
};
struct sg_be_mem {
    cl_mem m;
    size_t bytes;
};

static int clfail(sg_err *err, const char *what, cl_int rc) {
    return sg_errf(err, "OpenCL %s failed (error %d)", what, (int)rc);
}

static int cl_open(sg_be **out, const sg_dev_opts *o, sg_err *err) {
    cl_platform_id plats[16];
    cl_uint np = 0, nd = 0;
    cl_int rc = clGetPlatformIDs(16, plats, &np);
    if (rc != CL_SUCCESS || np == 0)
        return sg_errf(err, "no OpenCL platform found (install an ICD such as pocl-opencl-icd)");
    if ((cl_uint)o->opencl_platform >= np)
        return sg_errf(err, "OpenCL platform %d does not exist (%u found)", o->opencl_platform, np);
    sg_be *be = sg_xcalloc(1, sizeof *be);
    be->platform = plats[o->opencl_platform];
    cl_device_id devs[16];
    rc = clGetDeviceIDs(be->platform, CL_DEVICE_TYPE_ALL, 16, devs, &nd);
    if (rc != CL_SUCCESS || (cl_uint)o->opencl_device >= nd) {
        free(be);
        return sg_errf(err, "OpenCL device %d does not exist on platform %d", o->opencl_device,
                       o->opencl_platform);
    }
    be->dev = devs[o->opencl_device];
    be->ctx = clCreateContext(NULL, 1, &be->dev, NULL, NULL, &rc);
    if (!be->ctx) {
        free(be);
        return clfail(err, "clCreateContext", rc);
    }
    /* Profiling on from the start: the profiler's job type times with events on this queue. */
    const cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    be->q = clCreateCommandQueueWithProperties(be->ctx, be->dev, props, &rc);
    if (!be->q) {
        clReleaseContext(be->ctx);
        free(be);
        return clfail(err, "clCreateCommandQueue", rc);
    }
    size_t wg = 0;
    cl_ulong lmem = 0;
    cl_uint align_bits = 1024;
    clGetDeviceInfo(be->dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
    clGetDeviceInfo(be->dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lmem, &lmem, NULL);
    clGetDeviceInfo(be->dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
    be->lim.max_block = wg;
    be->lim.max_smem = lmem;
    be->lim.align = align_bits / 8 ? align_bits / 8 : 128;
    for (int d = 0; d < 3; d++) be->lim.max_grid[d] = (1ULL << 31) - 1;
    cl_device_type type = 0;
    clGetDeviceInfo(be->dev, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    be->lim.cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
    *out = be;
    return 0;
}

static void cl_close(sg_be *be) {
    if (!be) return;
    for (int i = 0; i < be->nev; i++) clReleaseEvent(be->ev[i]);
    free(be->ev);
    clReleaseCommandQueue(be->q);
    clReleaseContext(be->ctx);
    free(be);
}

static void cl_limits(sg_be *be, sg_be_limits *l) { *l = be->lim; }

static void cl_free_prog(sg_be *be, sg_be_prog *p) {
    if (!p) return;
    for (int i = 0; i < p->nk; i++)
        if (p->k[i]) clReleaseKernel(p->k[i]);
    free(p->k);
    if (p->prog) clReleaseProgram(p->prog);
    free(p);
}

static int cl_compile(sg_be *be, const char *src, const char *dir, const char *const *kernels,
                      int nk, sg_be_prog **out, sg_buf *log, sg_err *err) {
    cl_int rc;
    sg_be_prog *p = sg_xcalloc(1, sizeof *p);
    p->prog = clCreateProgramWithSource(be->ctx, 1, &src, NULL, &rc);
    if (!p->prog) {
        free(p);
        return clfail(err, "clCreateProgramWithSource", rc);
    }
    sg_buf opts = {0};
    /* PoCL keeps quotes as part of the path: quote only a path that needs it. */
    sg_buf_printf(&opts, strchr(dir, ' ') ? "-I \"%s\"" : "-I %s", dir);
    rc = clBuildProgram(p->prog, 1, &be->dev, opts.data, NULL, NULL);
    sg_buf_free(&opts);
    size_t n = 0;
    clGetProgramBuildInfo(p->prog, be->dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
    if (n > 1) {
        sg_buf_reserve(log, n);
        clGetProgramBuildInfo(p->prog, be->dev, CL_PROGRAM_BUILD_LOG, n, log->data + log->len,
                              NULL);
        log->len += strnlen(log->data + log->len, n);
        log->data[log->len] = 0;
    }
    if (rc != CL_SUCCESS) {
        cl_free_prog(be, p);
        return sg_errf(err, "the OpenCL compiler rejected the source (error %d)", (int)rc);
    }
    p->k = sg_xcalloc((size_t)nk + 1, sizeof *p->k);
    p->nk = nk;
    for (int i = 0; i < nk; i++) {
        p->k[i] = clCreateKernel(p->prog, kernels[i], &rc);
        if (!p->k[i]) {
            cl_free_prog(be, p);
            return sg_errf(err, "no __kernel named \"%s\" in the program (error %d)", kernels[i],
                           (int)rc);
        }
        cl_ulong lm = 0;
        clGetKernelWorkGroupInfo(p->k[i], be->dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof lm, &lm, NULL);
        if (lm > be->lim.max_smem) {
            cl_free_prog(be, p);
            return sg_errf(
                err, "kernel \"%s\" uses %llu bytes of local memory, over the device's %llu",
                kernels[i], (unsigned long long)lm, (unsigned long long)be->lim.max_smem);
        }
    }
    *out = p;
    return 0;
}

static int cl_alloc(sg_be *be, size_t bytes, sg_be_mem **out, sg_err *err) {
    cl_int rc;
    sg_be_mem *m = sg_xcalloc(1, sizeof *m);
    m->m = clCreateBuffer(be->ctx, CL_MEM_READ_WRITE, bytes ? bytes : 1, NULL, &rc);
    if (!m->m) {
        free(m);
        return sg_errf(err, "cannot allocate %zu bytes of device memory (OpenCL error %d)", bytes,
                       (int)rc);
    }
    m->bytes = bytes;
    *out = m;
    return 0;
}

static void cl_free_mem(sg_be *be, sg_be_mem *m) {
    if (!m) return;
    clReleaseMemObject(m->m);
    free(m);
}

static int cl_write(sg_be *be, sg_be_mem *m, size_t off, const void *src, size_t n, sg_err *err) {
    if (!n) return 0;
    cl_int rc = clEnqueueWriteBuffer(be->q, m->m, CL_TRUE, off, n, src, 0, NULL, NULL);
    return rc == CL_SUCCESS ? 0 : clfail(err, "clEnqueueWriteBuffer", rc);
}

static int cl_read(sg_be *be, sg_be_mem *m, size_t off, void *dst, size_t n, sg_err *err) {
    if (!n) return 0;
    cl_int rc = clEnqueueReadBuffer(be->q, m->m, CL_TRUE, off, n, dst, 0, NULL, NULL);
    return rc == CL_SUCCESS ? 0 : clfail(err, "clEnqueueReadBuffer", rc);
}

static int cl_launch(sg_be *be, sg_be_prog *p, int ki, const sg_be_arg *args, int nargs,
                     const uint64_t grid[3], const uint64_t block[3], uint64_t smem, sg_err *err) {
    cl_kernel k = p->k[ki];
    cl_mem subs[64];
    int nsub = 0, rc = 0;
    cl_uint nparams = 0;
    clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nparams, &nparams, NULL);
    if (nparams != (cl_uint)nargs + (smem ? 1 : 0)) {
        char name[128] = "";
        clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
        return sg_errf(err, "kernel \"%s\" takes %u parameters but the launch passes %d%s", name,
                       nparams, nargs, smem ? " plus one __local buffer (smem=)" : "");
    }
    for (int i = 0; i < nargs && rc == 0; i++) {
        cl_int e;
        if (args[i].mem) {
            cl_buffer_region r = {args[i].offset, args[i].bytes ? args[i].bytes : 1};
            cl_mem s = clCreateSubBuffer(args[i].mem->m, CL_MEM_READ_WRITE,
                                         CL_BUFFER_CREATE_TYPE_REGION, &r, &e);
            if (!s) {
                rc = clfail(err, "clCreateSubBuffer", e);
                break;
            }
            subs[nsub++] = s;
            e = clSetKernelArg(k, (cl_uint)i, sizeof s, &s);
        } else {
            e = clSetKernelArg(k, (cl_uint)i, args[i].bytes, args[i].scalar);
        }
        if (e != CL_SUCCESS)
            rc = sg_errf(err, "argument %d does not fit the kernel's parameter (OpenCL error %d)",
                         i, (int)e);
    }
    if (rc == 0 && smem) {
        cl_int e = clSetKernelArg(k, (cl_uint)nargs, smem, NULL);
        if (e != CL_SUCCESS) rc = clfail(err, "clSetKernelArg(__local)", e);
    }
    if (rc == 0) {
        size_t g[3], l[3];
        for (int d = 0; d < 3; d++) {
            g[d] = (size_t)(grid[d] * block[d]);
            l[d] = (size_t)block[d];
        }
        cl_event ev = NULL;
        cl_int e =
            clEnqueueNDRangeKernel(be->q, k, 3, NULL, g, l, 0, NULL, be->timing ? &ev : NULL);
        if (e != CL_SUCCESS)
            rc = sg_errf(err, "the device refused the launch (OpenCL error %d)", (int)e);
        else if (ev) {
            if (be->nev == be->cap) {
                be->cap = be->cap ? 2 * be->cap : 16;
                be->ev = sg_xrealloc(be->ev, (size_t)be->cap * sizeof *be->ev);
            }
            be->ev[be->nev++] = ev;
        }
    }
    for (int i = 0; i < nsub; i++) clReleaseMemObject(subs[i]);
    return rc;
}

static int cl_finish(sg_be *be, sg_err *err) {
    cl_int rc = clFinish(be->q);
    return rc == CL_SUCCESS ? 0 : clfail(err, "clFinish", rc);
}

/* ---- the profiler's part: event timestamps, cache flush, kernel facts ---- */
static void drop_events(sg_be *be) {
    for (int i = 0; i < be->nev; i++) clReleaseEvent(be->ev[i]);
    be->nev = 0;
}

static int cl_time_begin(sg_be *be, sg_err *err) {
    drop_events(be);
    be->ncut = 0;
    be->timing = 1;
    return 0;
}

/* The span of events [from, to): first kernel's start to last kernel's end. */
static int span(sg_be *be, int from, int to, double *ns, sg_err *err) {
    cl_ulong first = ~0ULL, last = 0;
    for (int i = from; i < to; i++) {
        cl_ulong a = 0, b = 0;
        cl_int e =
            clGetEventProfilingInfo(be->ev[i], CL_PROFILING_COMMAND_START, sizeof a, &a, NULL);
        if (e == CL_SUCCESS)
            e = clGetEventProfilingInfo(be->ev[i], CL_PROFILING_COMMAND_END, sizeof b, &b, NULL);
        if (e != CL_SUCCESS) return clfail(err, "clGetEventProfilingInfo", e);
        if (a < first) first = a;
        if (b > last) last = b;
    }
    if (to <= from) return sg_errf(err, "no kernel was launched in the timed region");
    *ns = last > first ? (double)(last - first) : 0;
    return 0;
}

/* One run = first kernel's start to last kernel's end (every launch since begin). */
static int cl_time_end(sg_be *be, double *ns, sg_err *err) {
    be->timing = 0;
    int rc = cl_finish(be, err);
    *ns = 0;
    if (rc == 0) rc = span(be, 0, be->nev, ns, err);
    drop_events(be);
    return rc;
}

/* Several runs in one region, one wait for all of them: cut closes the current run. */
static int cl_time_cut(sg_be *be, sg_err *err) {
    if (be->ncut >= MAX_CUTS)
        return sg_errf(err, "more than %d runs in one timed region", MAX_CUTS);
    be->cut[be->ncut++] = be->nev;
    return 0;
}

static int cl_time_end_runs(sg_be *be, double *ns, int n, sg_err *err) {
    be->timing = 0;
    int rc = cl_finish(be, err);
    if (rc == 0 && n != be->ncut)
        rc = sg_errf(err, "%d runs asked for, %d cut in the timed region", n, be->ncut);
    for (int r = 0; rc == 0 && r < n; r++)
        rc = span(be, r ? be->cut[r - 1] : 0, be->cut[r], &ns[r], err);
    drop_events(be);
    be->ncut = 0;
    return rc;
}

static int cl_fill(sg_be *be, sg_be_mem *m, size_t n, sg_err *err) {
    static const cl_uint pattern = 0x5a5a5a5a;
    n &= ~(size_t)3;
    cl_int rc = clEnqueueFillBuffer(be->q, m->m, &pattern, sizeof pattern, 0, n, 0, NULL, NULL);
    /* No clFinish: the queue is in order, so the fill ends before the next launch starts
     * and outside its event's timestamps; a wait here would cost one more hand-over to the
     * device's threads per timed run (on PoCL under load, milliseconds). */
    return rc == CL_SUCCESS ? 0 : clfail(err, "clEnqueueFillBuffer", rc);
}

/* The largest cache of CPU 0 in sysfs (its last level: L3, or L2 where there is none). */
static uint64_t sysfs_llc(void) {
    uint64_t best = 0;
    for (int i = 0; i < 8; i++) {
        char path[96], line[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        char *got = fgets(line, sizeof line, f);
        fclose(f);
        char *end = NULL;
        unsigned long long v = got ? strtoull(line, &end, 10) : 0;
        if (end && (*end == 'K' || *end == 'k')) v <<= 10;
        if (end && *end == 'M') v <<= 20;
        if (v > best) best = v;
    }
    return best;
}

/* The device's word (CL_DEVICE_GLOBAL_MEM_CACHE_SIZE: PoCL gives the CPU's L3); a CPU
 * device that does not say is asked through sysfs. */
static uint64_t cl_llc_bytes(sg_be *be) {
    cl_ulong n = 0;
    clGetDeviceInfo(be->dev, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof n, &n, NULL);
    return n ? n : be->lim.cpu ? sysfs_llc() : 0;
}

static int cl_facts(sg_be *be, sg_be_prog *p, int ki, const uint64_t block[3], uint64_t smem,
                    sg_be_facts *f, sg_err *err) {
    size_t wg = 0;
    cl_ulong priv = 0, lm = 0;
    cl_int rc = clGetKernelWorkGroupInfo(p->k[ki], be->dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg,
                                         &wg, NULL);
    if (rc == CL_SUCCESS)
        rc = clGetKernelWorkGroupInfo(p->k[ki], be->dev, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof priv,
                                      &priv, NULL);
    if (rc == CL_SUCCESS)
        rc = clGetKernelWorkGroupInfo(p->k[ki], be->dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof lm, &lm,
                                      NULL);
    if (rc != CL_SUCCESS) return clfail(err, "clGetKernelWorkGroupInfo", rc);
    memset(f, 0, sizeof *f);
    f->wg_limit = wg;
    f->private_bytes = priv;
    f->shared_bytes = lm + smem;
    return 0;
}

/* No OpenCL query gives peaks: bandwidth is measured (the best of three device fills of
 * 64 MiB, timed by events), arithmetic is compute units x clock x float vector width x 2
 * (FMA). Estimates, good enough to tell memory-bound from compute-bound. */
static int cl_peaks_measure(sg_be *be, sg_be_peaks *p, sg_err *err) {
    const size_t n = 64u << 20;
    static const cl_uint pattern = 0;
    sg_be_mem *m;
    if (cl_alloc(be, n, &m, err) < 0) return -1;
    double best = 0;
    for (int i = 0; i < 3; i++) {
        cl_event ev = NULL;
        cl_ulong a = 0, b = 0;
        if (clEnqueueFillBuffer(be->q, m->m, &pattern, sizeof pattern, 0, n, 0, NULL, &ev) !=
            CL_SUCCESS)
            break;
        clWaitForEvents(1, &ev);
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof a, &a, NULL);
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof b, &b, NULL);
        clReleaseEvent(ev);
        if (b > a && (best == 0 || (double)(b - a) < best)) best = (double)(b - a);
    }
    cl_free_mem(be, m);
    cl_uint cus = 0, mhz = 0, width = 0;
    clGetDeviceInfo(be->dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL);
    clGetDeviceInfo(be->dev, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof mhz, &mhz, NULL);
    clGetDeviceInfo(be->dev, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, sizeof width, &width, NULL);
    memset(p, 0, sizeof *p);
    p->gbs = best > 0 ? n / best : 0;
    p->fp32_gflops = (double)cus * mhz * (width ? width : 1) * 2 / 1000;
    if (clGetDeviceInfo(be->dev, CL_DEVICE_NAME, sizeof p->device - 1, p->device, NULL) !=
        CL_SUCCESS)
        p->device[0] = 0;
    p->cpu = be->lim.cpu;
    return p->gbs > 0 && p->fp32_gflops > 0 ? 0 : sg_errf(err, "the device's peaks are unknown");
}

/* Measured once per worker: three 64 MiB fills cost tens of ms on a CPU device, which
 * every profile job paid before. */
static int cl_peaks(sg_be *be, sg_be_peaks *p, sg_err *err) {
    if (be->peaks_rc != 1) {
        if (cl_peaks_measure(be, &be->peaks, err) < 0) return -1;
        be->peaks_rc = 1;
    }
    *p = be->peaks;
    return 0;
}

static int cl_count(const sg_dev_opts *o, int *n, sg_err *err) {
    cl_platform_id plats[16];
    cl_uint np = 0, nd = 0;
    if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || np == 0)
        return sg_errf(err, "no OpenCL platform found (install an ICD such as pocl-opencl-icd)"),
               SG_BE_NODEV;
    if ((cl_uint)o->opencl_platform >= np)
        return sg_errf(err, "OpenCL platform %d does not exist (%u found)", o->opencl_platform, np);
    if (clGetDeviceIDs(plats[o->opencl_platform], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS)
        nd = 0;
    *n = (int)nd;
    return 0;
}

const sg_be_ops sg_be_opencl_ops = {
    "opencl",      cl_open,     cl_close, cl_limits,    cl_compile,      cl_free_prog,
    cl_alloc,      cl_free_mem, cl_write, cl_read,      cl_launch,       cl_finish,
    cl_time_begin, cl_time_end, cl_fill,  cl_llc_bytes, cl_facts,        NULL,
    NULL,          cl_peaks,    cl_count, cl_time_cut,  cl_time_end_runs};
