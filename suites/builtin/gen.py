#!/usr/bin/env python3
"""Writes suites/builtin/<task>/ (task.json, baseline.{cu,cl}, reference.{cu,cl}).

Each kernel is written once in a small dialect and rendered to CUDA and OpenCL:
KERNEL name(...)  GP/GCP (global pointer / const pointer)  GID0 GID1  LID0 GRP0 GRP1 LSZ0
LOCAL  BARRIER  ATOMIC_INC(p)  NEG_INF. Baselines are deliberately plain (one thread per
output, no tiling, tiny blocks); references are the most obvious serial form, with
double accumulation where order matters. Run from the repository root:
    python3 suites/builtin/gen.py
"""
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))

CL = {
    "KERNEL": "__kernel void", "GCP": "__global const", "GP": "__global",
    "GID0": "(int)get_global_id(0)", "GID1": "(int)get_global_id(1)",
    "LID0": "(int)get_local_id(0)", "GRP0": "(int)get_group_id(0)", "GRP1": "(int)get_group_id(1)",
    "LSZ0": "(int)get_local_size(0)", "LOCAL": "__local", "BARRIER": "barrier(CLK_LOCAL_MEM_FENCE)",
    "NEG_INF": "(-INFINITY)",
}
CU = {
    "KERNEL": 'extern "C" __global__ void', "GCP": "const", "GP": "@@",
    "GID0": "(int)(blockIdx.x * blockDim.x + threadIdx.x)",
    "GID1": "(int)(blockIdx.y * blockDim.y + threadIdx.y)",
    "LID0": "(int)threadIdx.x", "GRP0": "(int)blockIdx.x", "GRP1": "(int)blockIdx.y",
    "LSZ0": "(int)blockDim.x",
    "LOCAL": "__shared__", "BARRIER": "__syncthreads()", "NEG_INF": "(-__int_as_float(0x7f800000))",
}


def render(src, lang):
    table = CL if lang == "cl" else CU
    out = re.sub(r"\b(" + "|".join(table) + r")\b", lambda m: table[m.group(1)], src)
    if lang == "cl":
        out = re.sub(r"ATOMIC_INC\(([^)]*)\)", r"atomic_inc(\1)", out)
        if "double" in out:
            out = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + out
    else:
        out = re.sub(r"ATOMIC_INC\(([^)]*)\)", r"atomicAdd(\1, 1u)", out)
    return re.sub(r"@@ ?", "", out)


def f32(name, count, role, init=None, atol=None, rtol=None, type_="f32"):
    b = {"name": name, "type": type_, "count": count, "role": role}
    if init:
        b["init"] = init
    if atol is not None:
        b["atol"] = atol
    if rtol is not None:
        b["rtol"] = rtol
    return b


# Long f32 dot products (matmul, matvec, batched_dot; conv1d's 31 taps too): a correct kernel that accumulates in
# f32 (the baselines) is off by ~K*eps*sum|a_i b_i|, which on outliers(-1,1,0.01,100) inputs
# reaches 0.015 at K=1024 and 0.03 at K=2048 on results near zero: no atol that tight holds
# over millions of outputs, and one loose enough would pass TF32 rounding. So these run
# uniform and normal inputs (measured: max error 3.7e-4 at K=2048 over 60000 outputs).
DOT_INIT = ["uniform(-1,1)", "normal(0,1)"]


def i32s(*names):
    return [{"name": n, "type": "i32", "value": n} for n in names]


TASKS = []


def task(name, desc, sizes, checks, buffers, scalars, args, baseline, reference, speedup=2.0,
         bytes="auto", flops=None, cpu_sizes=None):
    """bytes / flops: one run's traffic and arithmetic for the roofline (docs/task-format.md);
    "auto" counts each buffer once. cpu_sizes: the main shape on CPU devices (PoCL)."""
    assert flops is not None, f"{name}: give flops (a size expression)"
    TASKS.append(dict(name=name, description=desc, sizes=sizes, check_sizes=checks,
                      buffers=buffers, scalars=scalars, args=args, baseline_src=baseline,
                      reference_src=reference, target_speedup=speedup, bytes=bytes,
                      flops=flops, cpu_sizes=cpu_sizes))


task("gelu", "Fused GELU (tanh form): y = 0.5*x*(1+tanh(0.7978845608*(x+0.044715*x^3))).",
     {"N": 1 << 26}, [{"N": 1}, {"N": 1001}],
     [f32("x", "N", "in", "uniform(-6,6)"), f32("y", "N", "out", atol=1e-5, rtol=1e-4)],
     i32s("N"), ["x", "y", "N"],
     """//@launch gelu grid=ceil_div(N,64) block=64
KERNEL gelu(GCP float *x, GP float *y, int n) {
    int i = GID0;
    if (i < n) {
        float v = x[i];
        float inner = 0.7978845608f * (v + 0.044715f * v * v * v);
        y[i] = 0.5f * v * (1.0f + tanh(inner));
    }
}
""", """//@launch gelu_ref grid=ceil_div(N,256) block=256
KERNEL gelu_ref(GCP float *x, GP float *y, int n) {
    int i = GID0;
    if (i >= n) return;
    double v = x[i];
    y[i] = (float)(0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))));
}
""", flops="10*N", cpu_sizes={"N": 1 << 18})

task("reduce_sum", "Sum of N floats into out[0].",
     {"N": 1 << 26}, [{"N": 1}, {"N": 1003}],
     [f32("x", "N", "in", "uniform(0,1)"), f32("out", "1", "out", atol=1e-3, rtol=1e-4)],
     i32s("N"), ["x", "out", "N"],
     """// One work-group of 256 strides over the input, then a tree in local memory.
//@launch reduce_sum grid=1 block=256
KERNEL reduce_sum(GCP float *x, GP float *out, int n) {
    LOCAL float part[256];
    int t = LID0;
    float s = 0.0f;
    for (int i = t; i < n; i += 256) s += x[i];
    part[t] = s;
    BARRIER;
    for (int w = 128; w > 0; w >>= 1) {
        if (t < w) part[t] += part[t + w];
        BARRIER;
    }
    if (t == 0) out[0] = part[0];
}
""", """// Serial double sums of 4096-element chunks, then a serial double sum of those: one
// thread summing 64M floats would take about a second on a GPU.
//@scratch part f64 ceil_div(N,4096)
//@launch reduce_sum_chunks grid=ceil_div(N,4096) block=1 args=x,part,N
//@launch reduce_sum_ref grid=1 block=1 args=part,out,N
KERNEL reduce_sum_chunks(GCP float *x, GP double *part, int n) {
    int c = GRP0;
    double s = 0.0;
    for (long i = (long)c * 4096; i < n && i < (long)c * 4096 + 4096; i++) s += x[i];
    part[c] = s;
}
KERNEL reduce_sum_ref(GCP double *part, GP float *out, int n) {
    double s = 0.0;
    for (int c = 0; c < (n + 4095) / 4096; c++) s += part[c];
    out[0] = (float)s;
}
""", flops="N", cpu_sizes={"N": 1 << 18})

ROW = """    int r = GID0;
    if (r >= rows) return;
    GCP float *xr = x + (long)r * n;
    GP float *yr = y + (long)r * n;
"""

task("softmax", "Row-wise softmax of a B x N matrix.",
     {"B": 8192, "N": 4096}, [{"B": 1, "N": 1}, {"B": 3, "N": 1001}],
     [f32("x", "B*N", "in", "uniform(-8,8)"), f32("y", "B*N", "out", atol=1e-6, rtol=1e-4)],
     i32s("B", "N"), ["x", "y", "B", "N"],
     """// One work-item per row, three passes.
//@launch softmax grid=ceil_div(B,32) block=32
KERNEL softmax(GCP float *x, GP float *y, int rows, int n) {
""" + ROW + """    float m = xr[0];
    for (int j = 1; j < n; j++) m = fmax(m, xr[j]);
    float s = 0.0f;
    for (int j = 0; j < n; j++) s += exp(xr[j] - m);
    for (int j = 0; j < n; j++) yr[j] = exp(xr[j] - m) / s;
}
""", """//@launch softmax_ref grid=B block=1
KERNEL softmax_ref(GCP float *x, GP float *y, int rows, int n) {
    int r = GRP0;
    double m = x[(long)r * n];
    for (int j = 1; j < n; j++) m = fmax(m, (double)x[(long)r * n + j]);
    double s = 0.0;
    for (int j = 0; j < n; j++) s += exp((double)x[(long)r * n + j] - m);
    for (int j = 0; j < n; j++) y[(long)r * n + j] = (float)(exp((double)x[(long)r * n + j] - m) / s);
}
""", flops="5*B*N", cpu_sizes={"B": 256, "N": 1024})

task("layernorm", "Row-wise layer normalization with gain and bias (eps = 1e-5).",
     {"B": 8192, "N": 4096}, [{"B": 1, "N": 1}, {"B": 3, "N": 1001}],
     [f32("x", "B*N", "in", "normal(1,3)"), f32("gamma", "N", "in", "uniform(0.5,1.5)"),
      f32("beta", "N", "in", "uniform(-1,1)"), f32("y", "B*N", "out", atol=1e-4, rtol=1e-4)],
     i32s("B", "N"), ["x", "gamma", "beta", "y", "B", "N"],
     """//@launch layernorm grid=ceil_div(B,32) block=32
KERNEL layernorm(GCP float *x, GCP float *gamma, GCP float *beta, GP float *y, int rows, int n) {
""" + ROW + """    float mean = 0.0f;
    for (int j = 0; j < n; j++) mean += xr[j];
    mean /= n;
    float var = 0.0f;
    for (int j = 0; j < n; j++) var += (xr[j] - mean) * (xr[j] - mean);
    var /= n;
    float inv = 1.0f / sqrt(var + 1e-5f);
    for (int j = 0; j < n; j++) yr[j] = (xr[j] - mean) * inv * gamma[j] + beta[j];
}
""", """//@launch layernorm_ref grid=B block=1
KERNEL layernorm_ref(GCP float *x, GCP float *gamma, GCP float *beta, GP float *y, int rows, int n) {
    long o = (long)GRP0 * n;
    double mean = 0.0, var = 0.0;
    for (int j = 0; j < n; j++) mean += x[o + j];
    mean /= n;
    for (int j = 0; j < n; j++) var += (x[o + j] - mean) * (x[o + j] - mean);
    var /= n;
    double inv = 1.0 / sqrt(var + 1e-5);
    for (int j = 0; j < n; j++) y[o + j] = (float)((x[o + j] - mean) * inv * gamma[j] + beta[j]);
}
""", flops="8*B*N", cpu_sizes={"B": 256, "N": 1024})

task("rmsnorm", "Row-wise RMS normalization with weights (eps = 1e-6).",
     {"B": 8192, "N": 4096}, [{"B": 1, "N": 1}, {"B": 3, "N": 1001}],
     [f32("x", "B*N", "in", "normal(0,2)"), f32("w", "N", "in", "uniform(0.5,1.5)"),
      f32("y", "B*N", "out", atol=1e-5, rtol=1e-4)],
     i32s("B", "N"), ["x", "w", "y", "B", "N"],
     """//@launch rmsnorm grid=ceil_div(B,32) block=32
KERNEL rmsnorm(GCP float *x, GCP float *w, GP float *y, int rows, int n) {
""" + ROW + """    float ss = 0.0f;
    for (int j = 0; j < n; j++) ss += xr[j] * xr[j];
    float inv = 1.0f / sqrt(ss / n + 1e-6f);
    for (int j = 0; j < n; j++) yr[j] = xr[j] * inv * w[j];
}
""", """//@launch rmsnorm_ref grid=B block=1
KERNEL rmsnorm_ref(GCP float *x, GCP float *w, GP float *y, int rows, int n) {
    long o = (long)GRP0 * n;
    double ss = 0.0;
    for (int j = 0; j < n; j++) ss += (double)x[o + j] * x[o + j];
    double inv = 1.0 / sqrt(ss / n + 1e-6);
    for (int j = 0; j < n; j++) y[o + j] = (float)(x[o + j] * inv * w[j]);
}
""", flops="4*B*N", cpu_sizes={"B": 256, "N": 1024})

task("transpose", "Transpose an R x C matrix into C x R.",
     {"R": 8192, "C": 4096}, [{"R": 1, "C": 1}, {"R": 33, "C": 17}],
     [f32("x", "R*C", "in"), f32("y", "R*C", "out", atol=0, rtol=0)],
     i32s("R", "C"), ["x", "y", "R", "C"],
     """// One work-item per element, reads along rows, writes strided.
//@launch transpose grid=(ceil_div(C,16),ceil_div(R,16)) block=(16,16)
KERNEL transpose(GCP float *x, GP float *y, int rows, int cols) {
    int c = GID0, r = GID1;
    if (r < rows && c < cols) y[(long)c * rows + r] = x[(long)r * cols + c];
}
""", """//@launch transpose_ref grid=R block=1
KERNEL transpose_ref(GCP float *x, GP float *y, int rows, int cols) {
    int r = GRP0;
    for (int c = 0; c < cols; c++) y[(long)c * rows + r] = x[(long)r * cols + c];
}
""", flops="0", cpu_sizes={"R": 1024, "C": 768})

task("matmul", "C = A (M x K) times B (K x N), row-major floats.",
     {"M": 2048, "N": 2048, "K": 2048}, [{"M": 1, "N": 1, "K": 1}, {"M": 33, "N": 17, "K": 9}],
     [f32("A", "M*K", "in", DOT_INIT), f32("B", "K*N", "in", DOT_INIT),
      f32("C", "M*N", "out", atol=1e-3, rtol=1e-4)],
     i32s("M", "N", "K"), ["A", "B", "C", "M", "N", "K"],
     """// Naive: one work-item per output element, no tiling.
//@launch matmul grid=(ceil_div(N,8),ceil_div(M,8)) block=(8,8)
KERNEL matmul(GCP float *A, GCP float *B, GP float *C, int m, int n, int k) {
    int col = GID0, row = GID1;
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (int p = 0; p < k; p++) acc += A[(long)row * k + p] * B[(long)p * n + col];
    C[(long)row * n + col] = acc;
}
""", """// One work-item per output (a row per work-item is 4M serial steps at 2048^3).
//@launch matmul_ref grid=(N,M) block=1
KERNEL matmul_ref(GCP float *A, GCP float *B, GP float *C, int m, int n, int k) {
    int col = GRP0, row = GRP1;
    double acc = 0.0;
    for (int p = 0; p < k; p++) acc += (double)A[(long)row * k + p] * B[(long)p * n + col];
    C[(long)row * n + col] = (float)acc;
}
""", flops="2*M*N*K", cpu_sizes={"M": 256, "N": 256, "K": 256})

task("matvec", "y = A (M x N) times x (N).",
     {"M": 32768, "N": 1024}, [{"M": 1, "N": 1}, {"M": 37, "N": 1001}],
     [f32("A", "M*N", "in", DOT_INIT), f32("x", "N", "in", DOT_INIT),
      f32("y", "M", "out", atol=1e-3, rtol=1e-4)],
     i32s("M", "N"), ["A", "x", "y", "M", "N"],
     """//@launch matvec grid=ceil_div(M,32) block=32
KERNEL matvec(GCP float *A, GCP float *x, GP float *y, int m, int n) {
    int r = GID0;
    if (r >= m) return;
    float acc = 0.0f;
    for (int j = 0; j < n; j++) acc += A[(long)r * n + j] * x[j];
    y[r] = acc;
}
""", """//@launch matvec_ref grid=M block=1
KERNEL matvec_ref(GCP float *A, GCP float *x, GP float *y, int m, int n) {
    int r = GRP0;
    double acc = 0.0;
    for (int j = 0; j < n; j++) acc += (double)A[(long)r * n + j] * x[j];
    y[r] = (float)acc;
}
""", flops="2*M*N", cpu_sizes={"M": 512, "N": 1024})

task("histogram", "Counts of N integer values in [0, NB) into NB bins.",
     {"N": 1 << 26, "NB": 256}, [{"N": 1, "NB": 256}, {"N": 1001, "NB": 256}],
     [f32("x", "N", "in", "randint(0,255)", type_="i32"), f32("bins", "NB", "out", type_="u32")],
     i32s("N", "NB"), ["x", "bins", "N", "NB"],
     """// Zero the bins, then one global atomic per element.
//@launch hist_zero grid=ceil_div(NB,64) block=64 args=bins,NB
//@launch histogram grid=ceil_div(N,64) block=64
KERNEL hist_zero(GP unsigned int *bins, int nb) {
    int i = GID0;
    if (i < nb) bins[i] = 0;
}
KERNEL histogram(GCP int *x, GP unsigned int *bins, int n, int nb) {
    int i = GID0;
    if (i < n && x[i] >= 0 && x[i] < nb) ATOMIC_INC(&bins[x[i]]);
}
""", """// Serial counts per 65536-element chunk, then per bin the sum over chunks (a scan of all
// N elements per bin would read 256 x 64M values).
//@scratch part u32 ceil_div(N,65536)*NB
//@launch histogram_chunks grid=ceil_div(N,65536) block=1 args=x,part,N,NB
//@launch histogram_ref grid=NB block=1 args=part,bins,N,NB
KERNEL histogram_chunks(GCP int *x, GP unsigned int *part, int n, int nb) {
    int c = GRP0;
    GP unsigned int *h = part + (long)c * nb;
    for (int b = 0; b < nb; b++) h[b] = 0;
    for (long i = (long)c * 65536; i < n && i < (long)c * 65536 + 65536; i++)
        if (x[i] >= 0 && x[i] < nb) h[x[i]]++;
}
KERNEL histogram_ref(GCP unsigned int *part, GP unsigned int *bins, int n, int nb) {
    int b = GRP0;
    unsigned int s = 0;
    for (int c = 0; c < (n + 65535) / 65536; c++) s += part[(long)c * nb + b];
    bins[b] = s;
}
""", flops="N", cpu_sizes={"N": 1 << 18})

task("prefix_scan", "Inclusive prefix sum of N integers.",
     {"N": 131072}, [{"N": 1}, {"N": 1001}],
     [f32("x", "N", "in", "randint(0,9)", type_="i32"), f32("y", "N", "out", type_="i32")],
     i32s("N"), ["x", "y", "N"],
     """// Deliberately quadratic: each work-item sums its whole prefix.
//@launch prefix_scan grid=ceil_div(N,64) block=64
KERNEL prefix_scan(GCP int *x, GP int *y, int n) {
    int i = GID0;
    if (i >= n) return;
    int s = 0;
    for (int j = 0; j <= i; j++) s += x[j];
    y[i] = s;
}
""", """//@launch prefix_scan_ref grid=1 block=1
KERNEL prefix_scan_ref(GCP int *x, GP int *y, int n) {
    int s = 0;
    for (int i = 0; i < n; i++) {
        s += x[i];
        y[i] = s;
    }
}
""", flops="N", cpu_sizes={"N": 16384})

task("conv1d", "Valid 1-D convolution (correlation): y[i] = sum_k x[i+k] w[k], N-K+1 outputs.",
     {"N": 1 << 25, "K": 31}, [{"N": 1, "K": 1}, {"N": 1001, "K": 7}],
     [f32("x", "N", "in", DOT_INIT), f32("w", "K", "in", DOT_INIT),
      f32("y", "N-K+1", "out", atol=1e-5, rtol=1e-4)],
     i32s("N", "K"), ["x", "w", "y", "N", "K"],
     """//@launch conv1d grid=ceil_div(N-K+1,64) block=64
KERNEL conv1d(GCP float *x, GCP float *w, GP float *y, int n, int k) {
    int i = GID0;
    if (i >= n - k + 1) return;
    float acc = 0.0f;
    for (int j = 0; j < k; j++) acc += x[i + j] * w[j];
    y[i] = acc;
}
""", """//@launch conv1d_ref grid=ceil_div(N-K+1,256) block=256
KERNEL conv1d_ref(GCP float *x, GCP float *w, GP float *y, int n, int k) {
    int i = GID0;
    if (i >= n - k + 1) return;
    double acc = 0.0;
    for (int j = 0; j < k; j++) acc += (double)x[i + j] * w[j];
    y[i] = (float)acc;
}
""", flops="2*(N-K+1)*K", cpu_sizes={"N": 1 << 18})

task("conv2d", "Valid 2-D convolution (correlation) of an H x W image with a K x K filter.",
     {"H": 4096, "W": 4096, "K": 5}, [{"H": 1, "W": 1, "K": 1}, {"H": 37, "W": 19, "K": 3}],
     # not the default outliers: a product of two (1e4) summed in f32, as the baseline does,
     # is off by more than the tolerance from the f64 reference (seen once in a test run)
     [f32("x", "H*W", "in", DOT_INIT), f32("w", "K*K", "in", DOT_INIT),
      f32("y", "(H-K+1)*(W-K+1)", "out", atol=1e-5, rtol=1e-4)],
     i32s("H", "W", "K"), ["x", "w", "y", "H", "W", "K"],
     """//@launch conv2d grid=(ceil_div(W-K+1,8),ceil_div(H-K+1,8)) block=(8,8)
KERNEL conv2d(GCP float *x, GCP float *w, GP float *y, int h, int wd, int k) {
    int c = GID0, r = GID1;
    int oh = h - k + 1, ow = wd - k + 1;
    if (r >= oh || c >= ow) return;
    float acc = 0.0f;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) acc += x[(long)(r + i) * wd + c + j] * w[i * k + j];
    y[(long)r * ow + c] = acc;
}
""", """//@launch conv2d_ref grid=H-K+1 block=1
KERNEL conv2d_ref(GCP float *x, GCP float *w, GP float *y, int h, int wd, int k) {
    int r = GRP0, ow = wd - k + 1;
    for (int c = 0; c < ow; c++) {
        double acc = 0.0;
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++) acc += (double)x[(long)(r + i) * wd + c + j] * w[i * k + j];
        y[(long)r * ow + c] = (float)acc;
    }
}
""", flops="2*(H-K+1)*(W-K+1)*K*K", cpu_sizes={"H": 512, "W": 512})

task("stencil2d", "One Jacobi step of the 5-point stencil on an H x W grid; the border is copied.",
     {"H": 8192, "W": 4096}, [{"H": 1, "W": 1}, {"H": 33, "W": 19}],
     # atol 2e-5: the default inputs include outliers(-1,1,0.01,100), where a float sum of five
     # terms up to 100 is off by an ulp of 100 (3.8e-6) against the double reference, on
     # results that can be near zero (a 1e-6 atol failed the baseline on one draw in CI)
     [f32("x", "H*W", "in"), f32("y", "H*W", "out", atol=2e-5, rtol=1e-5)],
     i32s("H", "W"), ["x", "y", "H", "W"],
     """//@launch stencil2d grid=(ceil_div(W,8),ceil_div(H,8)) block=(8,8)
KERNEL stencil2d(GCP float *x, GP float *y, int h, int w) {
    int c = GID0, r = GID1;
    if (r >= h || c >= w) return;
    long i = (long)r * w + c;
    if (r == 0 || c == 0 || r == h - 1 || c == w - 1) {
        y[i] = x[i];
        return;
    }
    y[i] = 0.2f * (x[i] + x[i - 1] + x[i + 1] + x[i - w] + x[i + w]);
}
""", """//@launch stencil2d_ref grid=H block=1
KERNEL stencil2d_ref(GCP float *x, GP float *y, int h, int w) {
    int r = GRP0;
    for (int c = 0; c < w; c++) {
        long i = (long)r * w + c;
        if (r == 0 || c == 0 || r == h - 1 || c == w - 1) y[i] = x[i];
        else y[i] = (float)(0.2 * ((double)x[i] + x[i - 1] + x[i + 1] + x[i - w] + x[i + w]));
    }
}
""", flops="5*H*W", cpu_sizes={"H": 512, "W": 512})

task("gather", "Row gather: out[i,:] = table[idx[i] mod T, :] for N indices and D columns.",
     {"T": 65536, "D": 512, "N": 65536}, [{"T": 1, "D": 1, "N": 1}, {"T": 13, "D": 7, "N": 101}],
     [f32("table", "T*D", "in"), f32("idx", "N", "in", "randint(0,1000000)", type_="i32"),
      f32("out", "N*D", "out", atol=0, rtol=0)],
     i32s("T", "D", "N"), ["table", "idx", "out", "T", "D", "N"],
     """// One work-item per output element.
//@launch gather grid=ceil_div(N*D,64) block=64
KERNEL gather(GCP float *table, GCP int *idx, GP float *out, int t, int d, int n) {
    int e = GID0;
    if (e >= n * d) return;
    int i = e / d, j = e % d;
    out[e] = table[(long)(idx[i] % t) * d + j];
}
""", """//@launch gather_ref grid=N block=1
KERNEL gather_ref(GCP float *table, GCP int *idx, GP float *out, int t, int d, int n) {
    int i = GRP0;
    for (int j = 0; j < d; j++) out[(long)i * d + j] = table[(long)(idx[i] % t) * d + j];
}
""", bytes="4*N + 8*N*D", flops="0", cpu_sizes={"T": 4096, "D": 64, "N": 8192})

task("batched_dot", "out[b] = dot(x[b,:], y[b,:]) for B pairs of length-N vectors.",
     {"B": 16384, "N": 1024}, [{"B": 1, "N": 1}, {"B": 7, "N": 1001}],
     [f32("x", "B*N", "in", DOT_INIT), f32("y", "B*N", "in", DOT_INIT),
      f32("out", "B", "out", atol=1e-3, rtol=1e-4)],
     i32s("B", "N"), ["x", "y", "out", "B", "N"],
     """//@launch batched_dot grid=ceil_div(B,32) block=32
KERNEL batched_dot(GCP float *x, GCP float *y, GP float *out, int b, int n) {
    int r = GID0;
    if (r >= b) return;
    float acc = 0.0f;
    for (int j = 0; j < n; j++) acc += x[(long)r * n + j] * y[(long)r * n + j];
    out[r] = acc;
}
""", """//@launch batched_dot_ref grid=B block=1
KERNEL batched_dot_ref(GCP float *x, GCP float *y, GP float *out, int b, int n) {
    int r = GRP0;
    double acc = 0.0;
    for (int j = 0; j < n; j++) acc += (double)x[(long)r * n + j] * y[(long)r * n + j];
    out[r] = (float)acc;
}
""", flops="2*B*N", cpu_sizes={"B": 256, "N": 1024})

task("argmax", "Row-wise argmax (first index of the maximum) of a B x N matrix.",
     {"B": 16384, "N": 4096}, [{"B": 1, "N": 1}, {"B": 5, "N": 1001}],
     [f32("x", "B*N", "in", "uniform(-100,100)"), f32("idx", "B", "out", type_="i32")],
     i32s("B", "N"), ["x", "idx", "B", "N"],
     """//@launch argmax grid=ceil_div(B,32) block=32
KERNEL argmax(GCP float *x, GP int *idx, int b, int n) {
    int r = GID0;
    if (r >= b) return;
    float best = NEG_INF;
    int at = 0;
    for (int j = 0; j < n; j++)
        if (x[(long)r * n + j] > best) {
            best = x[(long)r * n + j];
            at = j;
        }
    idx[r] = at;
}
""", """//@launch argmax_ref grid=B block=1
KERNEL argmax_ref(GCP float *x, GP int *idx, int b, int n) {
    int r = GRP0, at = 0;
    for (int j = 1; j < n; j++)
        if (x[(long)r * n + j] > x[(long)r * n + at]) at = j;
    idx[r] = at;
}
""", flops="B*N", cpu_sizes={"B": 128})


def main():
    for t in TASKS:
        d = os.path.join(HERE, t["name"])
        os.makedirs(d, exist_ok=True)
        spec = {k: t[k] for k in ("name", "description")}
        spec["baseline"] = {"cuda": "baseline.cu", "opencl": "baseline.cl"}
        spec["reference"] = {"cuda": "reference.cu", "opencl": "reference.cl"}
        for k in ("sizes", "cpu_sizes", "check_sizes", "buffers", "scalars", "args", "bytes",
                  "flops", "target_speedup"):
            if t[k] is not None:
                spec[k] = t[k]
        with open(os.path.join(d, "task.json"), "w") as f:
            json.dump(spec, f, indent=2)
            f.write("\n")
        for kind in ("baseline", "reference"):
            for lang, ext in (("cl", "cl"), ("cu", "cu")):
                with open(os.path.join(d, f"{kind}.{ext}"), "w") as f:
                    f.write(render(t[kind + "_src"], lang))
    print(f"wrote {len(TASKS)} tasks")
    import gen_real  # the real-shape tasks (f16/bf16/fp8) and every task's wrong candidates
    gen_real.main()


if __name__ == "__main__":
    main()
