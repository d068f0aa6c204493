#!/usr/bin/env python3
"""The real-shape tasks of suites/builtin/ (issue #15) and the wrong candidates of every
builtin task (tests/fixtures/builtin_wrong/<task>/<name>.{cl,cu}). gen.py calls main().

Kernels are written once in gen.py's dialect, extended for 16-bit floats: F16 and BF16 are
the storage types (OpenCL: half and ushort; CUDA: __half and __nv_bfloat16), read and
written through f16_load / f16_store / bf16_load / bf16_store (round to nearest even);
round_f16 / round_bf16 round a float as storing and loading would (wrong candidates use
them to accumulate in the narrow type). DEV marks a helper function. fp8 tasks are CUDA only.

"sizes" are for a large GPU (H100/H200: LLM batch x sequence x hidden, GEMM 4096^3),
"cpu_sizes" keep a PoCL validation within seconds, "check_sizes" are tiny and odd.
Baselines are plain (one thread per row or element, no tiling); references are the obvious
serial form accumulating in double. Each task declares bytes (one pass over what it must
read and write) and flops.
"""
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
WRONG_DIR = os.path.join(HERE, "..", "..", "tests", "fixtures", "builtin_wrong")

CL = {
    "KERNEL": "__kernel void", "GCP": "__global const", "GP": "__global", "DEV": "static inline",
    "GID0": "(int)get_global_id(0)", "GID1": "(int)get_global_id(1)",
    "LID0": "(int)get_local_id(0)", "GRP0": "(int)get_group_id(0)", "GRP1": "(int)get_group_id(1)",
    "LSZ0": "(int)get_local_size(0)", "LOCAL": "__local", "BARRIER": "barrier(CLK_LOCAL_MEM_FENCE)",
    "NEG_INF": "(-INFINITY)", "POS_INF": "INFINITY", "BF16": "ushort", "F16": "half",
}
CU = {
    "KERNEL": 'extern "C" __global__ void', "GCP": "const", "GP": "@@",
    "DEV": "static __device__ inline",
    "GID0": "(int)(blockIdx.x * blockDim.x + threadIdx.x)",
    "GID1": "(int)(blockIdx.y * blockDim.y + threadIdx.y)",
    "LID0": "(int)threadIdx.x", "GRP0": "(int)blockIdx.x", "GRP1": "(int)blockIdx.y",
    "LSZ0": "(int)blockDim.x", "LOCAL": "__shared__", "BARRIER": "__syncthreads()",
    "NEG_INF": "(-__int_as_float(0x7f800000))", "POS_INF": "__int_as_float(0x7f800000)",
    "BF16": "__nv_bfloat16", "F16": "__half",
}

CL_BF16 = """// bf16 in OpenCL: 16-bit storage, the top half of a float; rounding adds 0x7fff plus the
// lowest kept bit (ties to even) and keeps NaN a quiet NaN.
static inline float bf16_load(__global const ushort *p, long i) { return as_float((uint)p[i] << 16); }
static inline ushort bf16_bits(float f) {
    uint u = as_uint(f);
    if (isnan(f)) return (ushort)0x7fc0;
    return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static inline void bf16_store(__global ushort *p, long i, float f) { p[i] = bf16_bits(f); }
static inline float round_bf16(float f) { return as_float((uint)bf16_bits(f) << 16); }
"""
CL_F16 = """// half as storage only (no cl_khr_fp16 needed): vload_half / vstore_half_rte.
static inline float f16_load(__global const half *p, long i) { return vload_half(i, p); }
static inline void f16_store(__global half *p, long i, float f) { vstore_half_rte(f, i, p); }
static inline float round_f16(float f) {
    ushort h; /* a private half variable needs cl_khr_fp16; its bits do not */
    vstore_half_rte(f, 0, (half *)&h);
    return vload_half(0, (const half *)&h);
}
"""
CU_BF16 = """#include <cuda_bf16.h>
static __device__ inline float bf16_load(const __nv_bfloat16 *p, long i) { return __bfloat162float(p[i]); }
static __device__ inline void bf16_store(__nv_bfloat16 *p, long i, float f) { p[i] = __float2bfloat16_rn(f); }
static __device__ inline float round_bf16(float f) { return __bfloat162float(__float2bfloat16_rn(f)); }
"""
CU_F16 = """#include <cuda_fp16.h>
static __device__ inline float f16_load(const __half *p, long i) { return __half2float(p[i]); }
static __device__ inline void f16_store(__half *p, long i, float f) { p[i] = __float2half_rn(f); }
static __device__ inline float round_f16(float f) { return __half2float(__float2half_rn(f)); }
"""


def render(src, lang):
    table = CL if lang == "cl" else CU
    out = re.sub(r"\b(" + "|".join(table) + r")\b", lambda m: table[m.group(1)], src)
    pre = ""
    if re.search(r"\b(BF16|bf16_\w+|round_bf16)\b", src):
        pre += CL_BF16 if lang == "cl" else CU_BF16
    if re.search(r"\b(F16|f16_\w+|round_f16)\b", src):
        pre += CL_F16 if lang == "cl" else CU_F16
    if lang == "cl":
        out = re.sub(r"ATOMIC_INC\(([^)]*)\)", r"atomic_inc(\1)", out)
        if "double" in out:
            pre = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + pre
    else:
        out = re.sub(r"ATOMIC_INC\(([^)]*)\)", r"atomicAdd(\1, 1u)", out)
    out = re.sub(r"@@ ?", "", out)
    # Leading comment lines stay first, so a file opens with what it is.
    lines = out.split("\n")
    k = 0
    while k < len(lines) and lines[k].startswith("//"):
        k += 1
    return "\n".join(lines[:k] + ([pre.rstrip("\n")] if pre else []) + lines[k:])


def buf(name, type_, count, role, init=None, atol=None, rtol=None, nonfinite=None):
    b = {"name": name, "type": type_, "count": count, "role": role}
    for k, v in (("init", init), ("atol", atol), ("rtol", rtol), ("allow_nonfinite", nonfinite)):
        if v is not None:
            b[k] = v
    return b


def i32s(*names):
    return [{"name": n, "type": "i32", "value": n} for n in names]


def f32s(**values):
    return [{"name": n, "type": "f32", "value": v} for n, v in values.items()]


TASKS = []
WRONG = {}  # task name -> [(file stem, dialect source or {"cu": ...})]


def task(name, desc, sizes, cpu_sizes, checks, buffers, scalars, args, baseline, reference,
         flops, bytes="auto", speedup=2.0, cuda_only=False):
    TASKS.append(dict(name=name, description=desc, sizes=sizes, cpu_sizes=cpu_sizes,
                      check_sizes=checks, buffers=buffers, scalars=scalars, args=args,
                      baseline_src=baseline, reference_src=reference, bytes=bytes, flops=flops,
                      target_speedup=speedup, cuda_only=cuda_only))


def wrong(task_name, stem, src):
    """A candidate that must fail its task's checks (first line: why it is wrong)."""
    text = src["cu"] if isinstance(src, dict) else src
    assert text.startswith("// WRONG"), f"{task_name}/{stem}: say why it is wrong"
    WRONG.setdefault(task_name, []).append((stem, src))


# Weights as in real layers (std 0.02), activations around 1, and 1% outliers.
ACT = ["uniform(-1,1)", "normal(0,1)", "outliers(-1,1,0.01,20)"]
WGT = ["uniform(-0.05,0.05)", "normal(0,0.02)", "outliers(-0.05,0.05,0.01,20)"]
# Odd GEMM shapes: a tail in every dimension of every tile size.
GEMM_CHECKS = [{"M": 1, "N": 1, "K": 1}, {"M": 33, "N": 17, "K": 65}]
ROW_CHECKS = [{"B": 1, "N": 1}, {"B": 3, "N": 1001}]

# ---------------------------------------------------------------- GEMM
task("gemm_bf16_nt",
     "Linear layer Y = X W^T: X is M x K, W is N x K (both row-major bf16), Y is M x N bf16; "
     "accumulate in f32.",
     {"M": 4096, "N": 4096, "K": 4096}, {"M": 128, "N": 128, "K": 256}, GEMM_CHECKS,
     [buf("x", "bf16", "M*K", "in", ACT), buf("w", "bf16", "N*K", "in", WGT),
      buf("y", "bf16", "M*N", "out", atol=2e-3)],
     i32s("M", "N", "K"), ["x", "w", "y", "M", "N", "K"],
     """// One thread per output, no tiling, no tensor cores.
//@launch gemm_nt grid=(ceil_div(N,16),ceil_div(M,16)) block=(16,16)
KERNEL gemm_nt(GCP BF16 *x, GCP BF16 *w, GP BF16 *y, int m, int n, int k) {
    int col = GID0, row = GID1;
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (int p = 0; p < k; p++) acc += bf16_load(x, (long)row * k + p) * bf16_load(w, (long)col * k + p);
    bf16_store(y, (long)row * n + col, acc);
}
""", """//@launch gemm_nt_ref grid=(N,M) block=1
KERNEL gemm_nt_ref(GCP BF16 *x, GCP BF16 *w, GP BF16 *y, int m, int n, int k) {
    int col = GRP0, row = GRP1;
    double acc = 0.0;
    for (int p = 0; p < k; p++) acc += (double)bf16_load(x, (long)row * k + p) * bf16_load(w, (long)col * k + p);
    bf16_store(y, (long)row * n + col, (float)acc);
}
""", flops="2*M*N*K")
wrong("gemm_bf16_nt", "k_tail", """// WRONG on purpose: unrolls K by 4 and drops the K % 4 tail.
//@launch gemm_nt grid=(ceil_div(N,16),ceil_div(M,16)) block=(16,16)
KERNEL gemm_nt(GCP BF16 *x, GCP BF16 *w, GP BF16 *y, int m, int n, int k) {
    int col = GID0, row = GID1;
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (int p = 0; p + 4 <= k; p += 4)
        for (int q = p; q < p + 4; q++) acc += bf16_load(x, (long)row * k + q) * bf16_load(w, (long)col * k + q);
    bf16_store(y, (long)row * n + col, acc);
}
""")

GELU_TANH = "0.5f * v * (1.0f + tanh(0.7978845608f * (v + 0.044715f * v * v * v)))"
task("gemm_bias_gelu_f16",
     "Y = GELU(X W + b), tanh-form GELU fused into the GEMM epilogue: X is M x K, W is K x N "
     "(row-major f16), b is N f32, Y is M x N f16; accumulate in f32.",
     {"M": 4096, "N": 4096, "K": 4096}, {"M": 128, "N": 128, "K": 256}, GEMM_CHECKS,
     [buf("x", "f16", "M*K", "in", ACT), buf("w", "f16", "K*N", "in", WGT),
      buf("bias", "f32", "N", "in", "uniform(-0.5,0.5)"),
      buf("y", "f16", "M*N", "out", atol=1e-3, rtol=2e-3)],
     i32s("M", "N", "K"), ["x", "w", "bias", "y", "M", "N", "K"],
     """// One thread per output, no tiling; the epilogue is applied to the f32 accumulator.
//@launch gemm_bias_gelu grid=(ceil_div(N,16),ceil_div(M,16)) block=(16,16)
KERNEL gemm_bias_gelu(GCP F16 *x, GCP F16 *w, GCP float *bias, GP F16 *y, int m, int n, int k) {
    int col = GID0, row = GID1;
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (int p = 0; p < k; p++) acc += f16_load(x, (long)row * k + p) * f16_load(w, (long)p * n + col);
    float v = acc + bias[col];
    f16_store(y, (long)row * n + col, """ + GELU_TANH + """);
}
""", """//@launch gemm_bias_gelu_ref grid=(N,M) block=1
KERNEL gemm_bias_gelu_ref(GCP F16 *x, GCP F16 *w, GCP float *bias, GP F16 *y, int m, int n, int k) {
    int col = GRP0, row = GRP1;
    double acc = 0.0;
    for (int p = 0; p < k; p++) acc += (double)f16_load(x, (long)row * k + p) * f16_load(w, (long)p * n + col);
    double v = acc + bias[col];
    f16_store(y, (long)row * n + col,
              (float)(0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))));
}
""", flops="2*M*N*K + 10*M*N")
wrong("gemm_bias_gelu_f16", "bias_after_gelu", """// WRONG on purpose: adds the bias after the activation, GELU(XW) + b.
//@launch gemm_bias_gelu grid=(ceil_div(N,16),ceil_div(M,16)) block=(16,16)
KERNEL gemm_bias_gelu(GCP F16 *x, GCP F16 *w, GCP float *bias, GP F16 *y, int m, int n, int k) {
    int col = GID0, row = GID1;
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (int p = 0; p < k; p++) acc += f16_load(x, (long)row * k + p) * f16_load(w, (long)p * n + col);
    float v = acc;
    f16_store(y, (long)row * n + col, """ + GELU_TANH + """ + bias[col]);
}
""")

# ---------------------------------------------------------------- row-wise (norms, softmax)
BROW = """    int r = GID0;
    if (r >= rows) return;
    long o = (long)r * n;
"""
task("softmax_bf16", "Row-wise softmax of a B x N bf16 matrix (vocabulary-sized rows), bf16 out.",
     {"B": 4096, "N": 32768}, {"B": 32, "N": 4096}, ROW_CHECKS,
     [buf("x", "bf16", "B*N", "in"), buf("y", "bf16", "B*N", "out")],
     i32s("B", "N"), ["x", "y", "B", "N"],
     """// One thread per row, three passes, f32 arithmetic.
//@launch softmax grid=ceil_div(B,32) block=32
KERNEL softmax(GCP BF16 *x, GP BF16 *y, int rows, int n) {
""" + BROW + """    float m = NEG_INF;
    for (int j = 0; j < n; j++) m = fmax(m, bf16_load(x, o + j));
    float s = 0.0f;
    for (int j = 0; j < n; j++) s += exp(bf16_load(x, o + j) - m);
    for (int j = 0; j < n; j++) bf16_store(y, o + j, exp(bf16_load(x, o + j) - m) / s);
}
""", """//@launch softmax_ref grid=B block=1
KERNEL softmax_ref(GCP BF16 *x, GP BF16 *y, int rows, int n) {
    long o = (long)GRP0 * n;
    double m = bf16_load(x, o);
    for (int j = 1; j < n; j++) m = fmax(m, (double)bf16_load(x, o + j));
    double s = 0.0;
    for (int j = 0; j < n; j++) s += exp(bf16_load(x, o + j) - m);
    for (int j = 0; j < n; j++) bf16_store(y, o + j, (float)(exp(bf16_load(x, o + j) - m) / s));
}
""", flops="5*B*N")
wrong("softmax_bf16", "bf16_accumulate", """// WRONG on purpose: keeps the running sum in bf16 (the storage type).
//@launch softmax grid=ceil_div(B,32) block=32
KERNEL softmax(GCP BF16 *x, GP BF16 *y, int rows, int n) {
""" + BROW + """    float m = NEG_INF;
    for (int j = 0; j < n; j++) m = fmax(m, bf16_load(x, o + j));
    float s = 0.0f;
    for (int j = 0; j < n; j++) s = round_bf16(s + exp(bf16_load(x, o + j) - m));
    for (int j = 0; j < n; j++) bf16_store(y, o + j, exp(bf16_load(x, o + j) - m) / s);
}
""")

task("layernorm_bf16",
     "Row-wise LayerNorm of B tokens x N features in bf16 with bf16 gain and bias (eps 1e-5); "
     "statistics in f32 or wider.",
     {"B": 8192, "N": 4096}, {"B": 64, "N": 2048}, ROW_CHECKS,
     [buf("x", "bf16", "B*N", "in", ["normal(0,1)", "outliers(-1,1,0.01,100)", "normal(300,1)"]),
      buf("gamma", "bf16", "N", "in", "uniform(0.5,1.5)"),
      buf("beta", "bf16", "N", "in", "uniform(-0.5,0.5)"), buf("y", "bf16", "B*N", "out", atol=1e-3)],
     i32s("B", "N"), ["x", "gamma", "beta", "y", "B", "N"],
     """// One thread per row: mean, then variance around the mean, then the output.
//@launch layernorm grid=ceil_div(B,32) block=32
KERNEL layernorm(GCP BF16 *x, GCP BF16 *gamma, GCP BF16 *beta, GP BF16 *y, int rows, int n) {
""" + BROW + """    float mean = 0.0f;
    for (int j = 0; j < n; j++) mean += bf16_load(x, o + j);
    mean /= n;
    float var = 0.0f;
    for (int j = 0; j < n; j++) {
        float d = bf16_load(x, o + j) - mean;
        var += d * d;
    }
    float inv = 1.0f / sqrt(var / n + 1e-5f);
    for (int j = 0; j < n; j++)
        bf16_store(y, o + j, (bf16_load(x, o + j) - mean) * inv * bf16_load(gamma, j) + bf16_load(beta, j));
}
""", """//@launch layernorm_ref grid=B block=1
KERNEL layernorm_ref(GCP BF16 *x, GCP BF16 *gamma, GCP BF16 *beta, GP BF16 *y, int rows, int n) {
    long o = (long)GRP0 * n;
    double mean = 0.0, var = 0.0;
    for (int j = 0; j < n; j++) mean += bf16_load(x, o + j);
    mean /= n;
    for (int j = 0; j < n; j++) var += (bf16_load(x, o + j) - mean) * (bf16_load(x, o + j) - mean);
    double inv = 1.0 / sqrt(var / n + 1e-5);
    for (int j = 0; j < n; j++)
        bf16_store(y, o + j, (float)((bf16_load(x, o + j) - mean) * inv * bf16_load(gamma, j) + bf16_load(beta, j)));
}
""", flops="8*B*N")
wrong("layernorm_bf16", "one_pass_variance", """// WRONG on purpose: one-pass variance E[x^2] - E[x]^2 in f32, which cancels
// catastrophically when the mean is large next to the spread (right on zero-mean inputs).
//@launch layernorm grid=ceil_div(B,32) block=32
KERNEL layernorm(GCP BF16 *x, GCP BF16 *gamma, GCP BF16 *beta, GP BF16 *y, int rows, int n) {
""" + BROW + """    float s = 0.0f, ss = 0.0f;
    for (int j = 0; j < n; j++) {
        float v = bf16_load(x, o + j);
        s += v;
        ss += v * v;
    }
    float mean = s / n;
    float var = fmax(ss / n - mean * mean, 0.0f);
    float inv = 1.0f / sqrt(var + 1e-5f);
    for (int j = 0; j < n; j++)
        bf16_store(y, o + j, (bf16_load(x, o + j) - mean) * inv * bf16_load(gamma, j) + bf16_load(beta, j));
}
""")

task("rmsnorm_bf16",
     "Row-wise RMSNorm of B tokens x N features in bf16 with bf16 weights (eps 1e-6): "
     "y = x / sqrt(mean(x^2) + eps) * w.",
     {"B": 8192, "N": 4096}, {"B": 64, "N": 4096}, ROW_CHECKS,
     [buf("x", "bf16", "B*N", "in"), buf("w", "bf16", "N", "in", "uniform(0.5,1.5)"),
      buf("y", "bf16", "B*N", "out")],
     i32s("B", "N"), ["x", "w", "y", "B", "N"],
     """// One thread per row; the sum of squares accumulates in f32.
//@launch rmsnorm grid=ceil_div(B,32) block=32
KERNEL rmsnorm(GCP BF16 *x, GCP BF16 *w, GP BF16 *y, int rows, int n) {
""" + BROW + """    float ss = 0.0f;
    for (int j = 0; j < n; j++) ss += bf16_load(x, o + j) * bf16_load(x, o + j);
    float inv = 1.0f / sqrt(ss / n + 1e-6f);
    for (int j = 0; j < n; j++) bf16_store(y, o + j, bf16_load(x, o + j) * inv * bf16_load(w, j));
}
""", """//@launch rmsnorm_ref grid=B block=1
KERNEL rmsnorm_ref(GCP BF16 *x, GCP BF16 *w, GP BF16 *y, int rows, int n) {
    long o = (long)GRP0 * n;
    double ss = 0.0;
    for (int j = 0; j < n; j++) ss += (double)bf16_load(x, o + j) * bf16_load(x, o + j);
    double inv = 1.0 / sqrt(ss / n + 1e-6);
    for (int j = 0; j < n; j++) bf16_store(y, o + j, (float)(bf16_load(x, o + j) * inv * bf16_load(w, j)));
}
""", flops="4*B*N")
wrong("rmsnorm_bf16", "bf16_accumulate", """// WRONG on purpose: the sum of squares is kept in bf16 (rounded after every addition).
//@launch rmsnorm grid=ceil_div(B,32) block=32
KERNEL rmsnorm(GCP BF16 *x, GCP BF16 *w, GP BF16 *y, int rows, int n) {
""" + BROW + """    float ss = 0.0f;
    for (int j = 0; j < n; j++) ss = round_bf16(ss + round_bf16(bf16_load(x, o + j) * bf16_load(x, o + j)));
    float inv = 1.0f / sqrt(ss / n + 1e-6f);
    for (int j = 0; j < n; j++) bf16_store(y, o + j, bf16_load(x, o + j) * inv * bf16_load(w, j));
}
""")

task("add_rmsnorm_bf16",
     "Fused residual add + RMSNorm, in place (as between transformer blocks): "
     "res = bf16(x + res); x = bf16(res / sqrt(mean(res^2) + 1e-6) * w). x and res are B x N bf16.",
     {"B": 8192, "N": 4096}, {"B": 64, "N": 4096}, ROW_CHECKS,
     [buf("x", "bf16", "B*N", "inout"), buf("res", "bf16", "B*N", "inout"),
      buf("w", "bf16", "N", "in", "uniform(0.5,1.5)")],
     i32s("B", "N"), ["x", "res", "w", "B", "N"],
     """// One thread per row: add and store the residual, then normalise it into x.
//@launch add_rmsnorm grid=ceil_div(B,32) block=32
KERNEL add_rmsnorm(GP BF16 *x, GP BF16 *res, GCP BF16 *w, int rows, int n) {
""" + BROW + """    float ss = 0.0f;
    for (int j = 0; j < n; j++) {
        float h = round_bf16(bf16_load(x, o + j) + bf16_load(res, o + j));
        bf16_store(res, o + j, h);
        ss += h * h;
    }
    float inv = 1.0f / sqrt(ss / n + 1e-6f);
    for (int j = 0; j < n; j++) bf16_store(x, o + j, bf16_load(res, o + j) * inv * bf16_load(w, j));
}
""", """//@launch add_rmsnorm_ref grid=B block=1
KERNEL add_rmsnorm_ref(GP BF16 *x, GP BF16 *res, GCP BF16 *w, int rows, int n) {
    long o = (long)GRP0 * n;
    for (int j = 0; j < n; j++) bf16_store(res, o + j, bf16_load(x, o + j) + bf16_load(res, o + j));
    double ss = 0.0;
    for (int j = 0; j < n; j++) ss += (double)bf16_load(res, o + j) * bf16_load(res, o + j);
    double inv = 1.0 / sqrt(ss / n + 1e-6);
    for (int j = 0; j < n; j++) bf16_store(x, o + j, (float)(bf16_load(res, o + j) * inv * bf16_load(w, j)));
}
""", flops="5*B*N")
wrong("add_rmsnorm_bf16", "residual_not_stored", """// WRONG on purpose: normalises x + res but never writes the sum back to res.
//@launch add_rmsnorm grid=ceil_div(B,32) block=32
KERNEL add_rmsnorm(GP BF16 *x, GP BF16 *res, GCP BF16 *w, int rows, int n) {
""" + BROW + """    float ss = 0.0f;
    for (int j = 0; j < n; j++) {
        float h = round_bf16(bf16_load(x, o + j) + bf16_load(res, o + j));
        ss += h * h;
    }
    float inv = 1.0f / sqrt(ss / n + 1e-6f);
    for (int j = 0; j < n; j++)
        bf16_store(x, o + j, round_bf16(bf16_load(x, o + j) + bf16_load(res, o + j)) * inv * bf16_load(w, j));
}
""")

# ---------------------------------------------------------------- attention
ATT_SIG = "(GCP F16 *q, GCP F16 *k, GCP F16 *v, GP F16 *o, int bh, int s, int d)"
task("attention_causal_f16",
     "Causal self-attention forward for head dimension 64: O = softmax(Q K^T / 8, causal) V per "
     "(batch x head); Q, K, V, O are BH x S x 64 f16, accumulate in f32.",
     {"BH": 32, "S": 2048, "D": 64}, {"BH": 4, "S": 256, "D": 64},
     [{"BH": 1, "S": 1}, {"BH": 3, "S": 77}],
     [buf("q", "f16", "BH*S*D", "in"), buf("k", "f16", "BH*S*D", "in"), buf("v", "f16", "BH*S*D", "in"),
      buf("o", "f16", "BH*S*D", "out", atol=1e-3, rtol=2e-3)],
     i32s("BH", "S", "D"), ["q", "k", "v", "o", "BH", "S", "D"],
     """// One thread per query row, online softmax over its keys 0..i; nothing shared, no tiles.
//@launch attention grid=(ceil_div(S,32),BH) block=32
KERNEL attention""" + ATT_SIG + """ {
    int i = GID0, h = GRP1;
    if (i >= s) return;
    long base = (long)h * s * 64;
    float qi[64], acc[64];
    for (int c = 0; c < 64; c++) {
        qi[c] = f16_load(q, base + (long)i * 64 + c) * 0.125f;
        acc[c] = 0.0f;
    }
    float m = NEG_INF, l = 0.0f;
    for (int j = 0; j <= i; j++) {
        float sc = 0.0f;
        for (int c = 0; c < 64; c++) sc += qi[c] * f16_load(k, base + (long)j * 64 + c);
        float mn = fmax(m, sc), corr = exp(m - mn), p = exp(sc - mn);
        l = l * corr + p;
        for (int c = 0; c < 64; c++) acc[c] = acc[c] * corr + p * f16_load(v, base + (long)j * 64 + c);
        m = mn;
    }
    for (int c = 0; c < 64; c++) f16_store(o, base + (long)i * 64 + c, acc[c] / l);
}
""", """// Three passes per query row in double: the maximum score, the sum, then the output.
//@launch attention_ref grid=(S,BH) block=1
DEV double score(GCP F16 *q, GCP F16 *k, long qi, long kj) {
    double sc = 0.0;
    for (int c = 0; c < 64; c++) sc += (double)f16_load(q, qi + c) * f16_load(k, kj + c);
    return sc * 0.125;
}
KERNEL attention_ref""" + ATT_SIG + """ {
    int i = GRP0, h = GRP1;
    long base = (long)h * s * 64, qi = base + (long)i * 64;
    double m = score(q, k, qi, base), l = 0.0, acc[64];
    for (int j = 1; j <= i; j++) m = fmax(m, score(q, k, qi, base + (long)j * 64));
    for (int j = 0; j <= i; j++) l += exp(score(q, k, qi, base + (long)j * 64) - m);
    for (int c = 0; c < 64; c++) acc[c] = 0.0;
    for (int j = 0; j <= i; j++) {
        double p = exp(score(q, k, qi, base + (long)j * 64) - m) / l;
        for (int c = 0; c < 64; c++) acc[c] += p * f16_load(v, base + (long)j * 64 + c);
    }
    for (int c = 0; c < 64; c++) f16_store(o, qi + c, (float)acc[c]);
}
""", flops="2*BH*S*(S+1)*D", bytes="4*2*BH*S*D")
wrong("attention_causal_f16", "no_max_subtraction", """// WRONG on purpose: exponentiates the raw scores (no running maximum), which overflows
// to inf once a score passes ~88: right on uniform and normal inputs, not with outliers.
//@launch attention grid=(ceil_div(S,32),BH) block=32
KERNEL attention""" + ATT_SIG + """ {
    int i = GID0, h = GRP1;
    if (i >= s) return;
    long base = (long)h * s * 64;
    float qi[64], acc[64];
    for (int c = 0; c < 64; c++) {
        qi[c] = f16_load(q, base + (long)i * 64 + c) * 0.125f;
        acc[c] = 0.0f;
    }
    float l = 0.0f;
    for (int j = 0; j <= i; j++) {
        float sc = 0.0f;
        for (int c = 0; c < 64; c++) sc += qi[c] * f16_load(k, base + (long)j * 64 + c);
        float p = exp(sc);
        l += p;
        for (int c = 0; c < 64; c++) acc[c] += p * f16_load(v, base + (long)j * 64 + c);
    }
    for (int c = 0; c < 64; c++) f16_store(o, base + (long)i * 64 + c, acc[c] / l);
}
""")
wrong("attention_causal_f16", "not_causal", """// WRONG on purpose: attends to every key (no causal mask).
//@launch attention grid=(ceil_div(S,32),BH) block=32
KERNEL attention""" + ATT_SIG + """ {
    int i = GID0, h = GRP1;
    if (i >= s) return;
    long base = (long)h * s * 64;
    float qi[64], acc[64];
    for (int c = 0; c < 64; c++) {
        qi[c] = f16_load(q, base + (long)i * 64 + c) * 0.125f;
        acc[c] = 0.0f;
    }
    float m = NEG_INF, l = 0.0f;
    for (int j = 0; j < s; j++) {
        float sc = 0.0f;
        for (int c = 0; c < 64; c++) sc += qi[c] * f16_load(k, base + (long)j * 64 + c);
        float mn = fmax(m, sc), corr = exp(m - mn), p = exp(sc - mn);
        l = l * corr + p;
        for (int c = 0; c < 64; c++) acc[c] = acc[c] * corr + p * f16_load(v, base + (long)j * 64 + c);
        m = mn;
    }
    for (int c = 0; c < 64; c++) f16_store(o, base + (long)i * 64 + c, acc[c] / l);
}
""")

# ---------------------------------------------------------------- selection, gather
TOPK_SIG = "(GCP float *x, GP float *vals, GP int *idx, int b, int n, int k)"
TOPK_BODY = """    float pv = POS_INF;
    int pi = -1;
    for (int t = 0; t < k; t++) {
        float bv = NEG_INF;
        int bi = -1;
        for (int j = 0; j < LIMIT; j++) {
            float v = xr[j];
            int after = v < pv || (v == pv && j > pi);
            if (after && (bi < 0 || v > bv)) {
                bv = v;
                bi = j;
            }
        }
        vals[(long)r * k + t] = bv;
        idx[(long)r * k + t] = bi;
        pv = bv;
        pi = bi;
    }
}
"""
task("topk_f32",
     "Top-k per row of a B x N f32 matrix (sampling over a vocabulary): the k largest values in "
     "descending order and their indices; equal values in ascending index order.",
     {"B": 1024, "N": 32768, "K": 50}, {"B": 16, "N": 4096, "K": 50},
     [{"B": 1, "N": 1, "K": 1}, {"B": 3, "N": 1001, "K": 7}],
     [buf("x", "f32", "B*N", "in"), buf("vals", "f32", "B*K", "out", atol=0, rtol=0),
      buf("idx", "i32", "B*K", "out")],
     i32s("B", "N", "K"), ["x", "vals", "idx", "B", "N", "K"],
     """// One thread per row; k passes, each finding the next value in the order.
//@launch topk grid=ceil_div(B,32) block=32
KERNEL topk""" + TOPK_SIG + """ {
    int r = GID0;
    if (r >= b) return;
    GCP float *xr = x + (long)r * n;
""" + TOPK_BODY.replace("LIMIT", "n"), """//@launch topk_ref grid=B block=1
KERNEL topk_ref""" + TOPK_SIG + """ {
    int r = GRP0;
    GCP float *xr = x + (long)r * n;
""" + TOPK_BODY.replace("LIMIT", "n"), flops="B*N*K")
wrong("topk_f32", "chunk_tail", """// WRONG on purpose: scans whole chunks of 256 only, dropping the tail of the row.
//@launch topk grid=ceil_div(B,32) block=32
KERNEL topk""" + TOPK_SIG + """ {
    int r = GID0;
    if (r >= b) return;
    GCP float *xr = x + (long)r * n;
""" + TOPK_BODY.replace("LIMIT", "n / 256 * 256"))

EMB_SIG = "(GCP BF16 *table, GCP int *ids, GP BF16 *out, int v, int d, int t)"
task("embedding_bf16",
     "Embedding lookup for one vocabulary shard: out[i,:] = table[ids[i],:] for T tokens of D "
     "bf16 features; an id outside [0, V) (another shard's) gives a zero row.",
     {"V": 32000, "D": 4096, "T": 8192}, {"V": 32000, "D": 128, "T": 512},
     [{"V": 13, "D": 1, "T": 1}, {"V": 1000, "D": 7, "T": 33}],
     [buf("table", "bf16", "V*D", "in"), buf("ids", "i32", "T", "in", ["randint(0,32767)", "randint(-9,40000)"]),
      buf("out", "bf16", "T*D", "out", atol=0, rtol=0)],
     i32s("V", "D", "T"), ["table", "ids", "out", "V", "D", "T"],
     """// One thread per token copies its row.
//@launch embedding grid=ceil_div(T,64) block=64
KERNEL embedding""" + EMB_SIG + """ {
    int i = GID0;
    if (i >= t) return;
    int id = ids[i];
    int ok = id >= 0 && id < v;
    for (int j = 0; j < d; j++) bf16_store(out, (long)i * d + j, ok ? bf16_load(table, (long)id * d + j) : 0.0f);
}
""", """//@launch embedding_ref grid=T block=1
KERNEL embedding_ref""" + EMB_SIG + """ {
    int i = GRP0, id = ids[i];
    for (int j = 0; j < d; j++)
        bf16_store(out, (long)i * d + j, id >= 0 && id < v ? bf16_load(table, (long)id * d + j) : 0.0f);
}
""", flops="0", bytes="4*T + 4*T*D")
wrong("embedding_bf16", "pairs_tail", """// WRONG on purpose: copies two features at a time and drops an odd last one.
//@launch embedding grid=ceil_div(T,64) block=64
KERNEL embedding""" + EMB_SIG + """ {
    int i = GID0;
    if (i >= t) return;
    int id = ids[i];
    int ok = id >= 0 && id < v;
    for (int j = 0; j + 1 < d; j += 2) {
        bf16_store(out, (long)i * d + j, ok ? bf16_load(table, (long)id * d + j) : 0.0f);
        bf16_store(out, (long)i * d + j + 1, ok ? bf16_load(table, (long)id * d + j + 1) : 0.0f);
    }
}
""")

# ---------------------------------------------------------------- activations
task("silu_mul_bf16",
     "SwiGLU activation of an MLP: x is T x 2H bf16 (gate | up); y[t,c] = silu(gate) * up, "
     "T x H bf16, silu(g) = g / (1 + exp(-g)).",
     {"T": 2048, "H": 14336}, {"T": 64, "H": 2048}, [{"T": 1, "H": 1}, {"T": 3, "H": 1001}],
     [buf("x", "bf16", "T*2*H", "in"), buf("y", "bf16", "T*H", "out")],
     i32s("T", "H"), ["x", "y", "T", "H"],
     """// One thread per output element.
//@launch silu_mul grid=ceil_div(T*H,64) block=64
KERNEL silu_mul(GCP BF16 *x, GP BF16 *y, int t, int h) {
    long i = GID0;
    if (i >= (long)t * h) return;
    long r = i / h, c = i % h;
    float g = bf16_load(x, r * 2 * h + c), u = bf16_load(x, r * 2 * h + h + c);
    bf16_store(y, i, g / (1.0f + exp(-g)) * u);
}
""", """//@launch silu_mul_ref grid=T block=1
KERNEL silu_mul_ref(GCP BF16 *x, GP BF16 *y, int t, int h) {
    long r = GRP0;
    for (int c = 0; c < h; c++) {
        double g = bf16_load(x, r * 2 * h + c), u = bf16_load(x, r * 2 * h + h + c);
        bf16_store(y, r * h + c, (float)(g / (1.0 + exp(-g)) * u));
    }
}
""", flops="6*T*H")
wrong("silu_mul_bf16", "clamped_gate", """// WRONG on purpose: clamps the gate to [-10, 10] "against overflow", which is right
// for the usual inputs and wrong for large negative gates (outliers).
//@launch silu_mul grid=ceil_div(T*H,64) block=64
KERNEL silu_mul(GCP BF16 *x, GP BF16 *y, int t, int h) {
    long i = GID0;
    if (i >= (long)t * h) return;
    long r = i / h, c = i % h;
    float g = bf16_load(x, r * 2 * h + c), u = bf16_load(x, r * 2 * h + h + c);
    float gc = fmin(fmax(g, -10.0f), 10.0f);
    bf16_store(y, i, g / (1.0f + exp(-gc)) * u);
}
""")

task("gelu_erf_f16", "Exact (erf) GELU on N halves: y = 0.5 x (1 + erf(x / sqrt(2))).",
     {"N": 4096 * 8192}, {"N": 1 << 18}, [{"N": 1}, {"N": 1001}],
     [buf("x", "f16", "N", "in", ["normal(0,1)", "uniform(-6,6)", "outliers(-1,1,0.01,100)"]),
      buf("y", "f16", "N", "out")],
     i32s("N"), ["x", "y", "N"],
     """//@launch gelu grid=ceil_div(N,64) block=64
KERNEL gelu(GCP F16 *x, GP F16 *y, int n) {
    int i = GID0;
    if (i < n) {
        float v = f16_load(x, i);
        f16_store(y, i, 0.5f * v * (1.0f + erf(v * 0.70710678f)));
    }
}
""", """//@launch gelu_ref grid=N block=1
KERNEL gelu_ref(GCP F16 *x, GP F16 *y, int n) {
    int i = GRP0;
    double v = f16_load(x, i);
    f16_store(y, i, (float)(0.5 * v * (1.0 + erf(v * 0.7071067811865476))));
}
""", flops="8*N")
wrong("gelu_erf_f16", "tanh_approximation", """// WRONG on purpose: the tanh approximation where the task asks for the exact (erf) GELU.
//@launch gelu grid=ceil_div(N,64) block=64
KERNEL gelu(GCP F16 *x, GP F16 *y, int n) {
    int i = GID0;
    if (i < n) {
        float v = f16_load(x, i);
        f16_store(y, i, """ + GELU_TANH + """);
    }
}
""")

ROPE_SIG = ("(GP F16 *q, GP F16 *k, GCP float *cosc, GCP float *sinc, GCP int *pos, "
            "int t, int hq, int hk, int d, int p)")
task("rope_neox_f16",
     "Rotary position embedding (NeoX layout: element c pairs with c + D/2), in place on q "
     "(T x HQ x D) and k (T x HK x D) f16, angles from cos/sin tables P x D/2 at pos[t].",
     {"T": 8192, "HQ": 32, "HK": 8, "D": 128, "P": 4096}, {"T": 256, "HQ": 32, "HK": 8, "D": 128, "P": 4096},
     [{"T": 1, "HQ": 1, "HK": 1, "D": 2}, {"T": 33, "HQ": 3, "HK": 1, "D": 64}],
     [buf("q", "f16", "T*HQ*D", "inout"), buf("k", "f16", "T*HK*D", "inout"),
      buf("cosc", "f32", "P*(D/2)", "in"), buf("sinc", "f32", "P*(D/2)", "in"),
      buf("pos", "i32", "T", "in", "randint(0,4095)")],
     i32s("T", "HQ", "HK", "D", "P"), ["q", "k", "cosc", "sinc", "pos", "T", "HQ", "HK", "D", "P"],
     """// One thread per (token, head): rotates that head's D/2 pairs.
//@launch rope grid=ceil_div(T*(HQ+HK),64) block=64
KERNEL rope""" + ROPE_SIG + """ {
    int g = GID0;
    if (g >= t * (hq + hk)) return;
    int tok = g / (hq + hk), hd = g % (hq + hk), half_d = d / 2;
    GP F16 *x = hd < hq ? q + ((long)tok * hq + hd) * d : k + ((long)tok * hk + hd - hq) * d;
    long a = (long)pos[tok] * half_d;
    for (int c = 0; c < half_d; c++) {
        float x0 = f16_load(x, c), x1 = f16_load(x, c + half_d), cs = cosc[a + c], sn = sinc[a + c];
        f16_store(x, c, x0 * cs - x1 * sn);
        f16_store(x, c + half_d, x1 * cs + x0 * sn);
    }
}
""", """//@launch rope_ref grid=T block=1
KERNEL rope_ref""" + ROPE_SIG + """ {
    int tok = GRP0, half_d = d / 2;
    long a = (long)pos[tok] * half_d;
    for (int hd = 0; hd < hq + hk; hd++) {
        GP F16 *x = hd < hq ? q + ((long)tok * hq + hd) * d : k + ((long)tok * hk + hd - hq) * d;
        for (int c = 0; c < half_d; c++) {
            double x0 = f16_load(x, c), x1 = f16_load(x, c + half_d), cs = cosc[a + c], sn = sinc[a + c];
            f16_store(x, c, (float)(x0 * cs - x1 * sn));
            f16_store(x, c + half_d, (float)(x1 * cs + x0 * sn));
        }
    }
}
""", flops="3*T*(HQ+HK)*D", bytes="4*T*(HQ+HK)*D + 4*T + 4*T*D")
wrong("rope_neox_f16", "interleaved_pairs", """// WRONG on purpose: GPT-J layout (pairs 2c, 2c+1) where the task uses NeoX halves.
//@launch rope grid=ceil_div(T*(HQ+HK),64) block=64
KERNEL rope""" + ROPE_SIG + """ {
    int g = GID0;
    if (g >= t * (hq + hk)) return;
    int tok = g / (hq + hk), hd = g % (hq + hk), half_d = d / 2;
    GP F16 *x = hd < hq ? q + ((long)tok * hq + hd) * d : k + ((long)tok * hk + hd - hq) * d;
    long a = (long)pos[tok] * half_d;
    for (int c = 0; c < half_d; c++) {
        float x0 = f16_load(x, 2 * c), x1 = f16_load(x, 2 * c + 1), cs = cosc[a + c], sn = sinc[a + c];
        f16_store(x, 2 * c, x0 * cs - x1 * sn);
        f16_store(x, 2 * c + 1, x1 * cs + x0 * sn);
    }
}
""")

# ---------------------------------------------------------------- losses, optimisers, reductions
CE_SIG = "(GCP BF16 *logits, GCP int *labels, GP float *loss, int b, int v)"
task("cross_entropy_bf16",
     "Per-token cross-entropy of B x V bf16 logits against labels: "
     "loss[b] = logsumexp(logits[b,:]) - logits[b, labels[b]], f32.",
     {"B": 4096, "V": 32000}, {"B": 32, "V": 8192}, [{"B": 1, "V": 1000}, {"B": 3, "V": 1001}],
     [buf("logits", "bf16", "B*V", "in", ["normal(0,2)", "uniform(-1,1)", "outliers(-1,1,0.01,100)"]),
      buf("labels", "i32", "B", "in", "randint(0,999)"),
      buf("loss", "f32", "B", "out", atol=1e-3, rtol=1e-4)],
     i32s("B", "V"), ["logits", "labels", "loss", "B", "V"],
     """// One thread per row: the maximum, then the sum of exponentials, in f32.
//@launch cross_entropy grid=ceil_div(B,32) block=32
KERNEL cross_entropy""" + CE_SIG + """ {
    int r = GID0;
    if (r >= b) return;
    long o = (long)r * v;
    float m = NEG_INF, s = 0.0f;
    for (int j = 0; j < v; j++) m = fmax(m, bf16_load(logits, o + j));
    for (int j = 0; j < v; j++) s += exp(bf16_load(logits, o + j) - m);
    loss[r] = log(s) + m - bf16_load(logits, o + labels[r]);
}
""", """//@launch cross_entropy_ref grid=B block=1
KERNEL cross_entropy_ref""" + CE_SIG + """ {
    int r = GRP0;
    long o = (long)r * v;
    double m = bf16_load(logits, o), s = 0.0;
    for (int j = 1; j < v; j++) m = fmax(m, (double)bf16_load(logits, o + j));
    for (int j = 0; j < v; j++) s += exp(bf16_load(logits, o + j) - m);
    loss[r] = (float)(log(s) + m - bf16_load(logits, o + labels[r]));
}
""", flops="4*B*V")
wrong("cross_entropy_bf16", "no_max_subtraction", """// WRONG on purpose: log(sum(exp(x))) without subtracting the maximum overflows for
// logits above ~88 (outliers); right on the usual inputs.
//@launch cross_entropy grid=ceil_div(B,32) block=32
KERNEL cross_entropy""" + CE_SIG + """ {
    int r = GID0;
    if (r >= b) return;
    long o = (long)r * v;
    float s = 0.0f;
    for (int j = 0; j < v; j++) s += exp(bf16_load(logits, o + j));
    loss[r] = log(s) - bf16_load(logits, o + labels[r]);
}
""")

ADAM_SIG = ("(GP float *p, GCP BF16 *g, GP float *m, GP float *v, float lr, float b1, float b2, "
            "float eps, float wd, float c1, float c2, int n)")
ADAM_ARGS = ["p", "g", "m", "v", "lr", "b1", "b2", "eps", "wd", "c1", "c2", "N"]
task("adamw_f32",
     "One AdamW step in place on N f32 parameters with bf16 gradients: m, v updated; "
     "p = p (1 - lr wd) - lr (m c1) / (sqrt(v c2) + eps), c1 and c2 the bias corrections at step 10.",
     {"N": 1 << 25}, {"N": 1 << 18}, [{"N": 1}, {"N": 1001}],
     [buf("p", "f32", "N", "inout"), buf("g", "bf16", "N", "in"), buf("m", "f32", "N", "inout"),
      buf("v", "f32", "N", "inout", ["uniform(0,0.001)", "uniform(0,1)"])],
     f32s(lr=1e-3, b1=0.9, b2=0.999, eps=1e-8, wd=0.01, c1=1.5349453, c2=100.45083) + i32s("N"),
     ADAM_ARGS,
     """//@launch adamw grid=ceil_div(N,64) block=64
KERNEL adamw""" + ADAM_SIG + """ {
    int i = GID0;
    if (i >= n) return;
    float gi = bf16_load(g, i);
    float mi = b1 * m[i] + (1.0f - b1) * gi;
    float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    p[i] = p[i] * (1.0f - lr * wd) - lr * (mi * c1) / (sqrt(vi * c2) + eps);
}
""", """//@launch adamw_ref grid=N block=1
KERNEL adamw_ref""" + ADAM_SIG + """ {
    int i = GRP0;
    double gi = bf16_load(g, i);
    double mi = (double)b1 * m[i] + (1.0 - b1) * gi;
    double vi = (double)b2 * v[i] + (1.0 - b2) * gi * gi;
    m[i] = (float)mi;
    v[i] = (float)vi;
    p[i] = (float)(p[i] * (1.0 - (double)lr * wd) - lr * (mi * c1) / (sqrt(vi * c2) + eps));
}
""", flops="14*N")
wrong("adamw_f32", "m_not_stored", """// WRONG on purpose: updates p and v but never writes the new first moment m back.
//@launch adamw grid=ceil_div(N,64) block=64
KERNEL adamw""" + ADAM_SIG + """ {
    int i = GID0;
    if (i >= n) return;
    float gi = bf16_load(g, i);
    float mi = b1 * m[i] + (1.0f - b1) * gi;
    float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
    v[i] = vi;
    p[i] = p[i] * (1.0f - lr * wd) - lr * (mi * c1) / (sqrt(vi * c2) + eps);
}
""")

task("bias_grad_bf16",
     "Column sums of a T x H bf16 matrix into H f32 (the bias gradient: db = sum over tokens of dy).",
     {"T": 16384, "H": 4096}, {"T": 2048, "H": 512}, [{"T": 1, "H": 1}, {"T": 1001, "H": 33}],
     [buf("dy", "bf16", "T*H", "in"), buf("db", "f32", "H", "out", atol=2e-2, rtol=1e-3)],
     i32s("T", "H"), ["dy", "db", "T", "H"],
     """// One thread per column, f32 accumulation down the rows.
//@launch bias_grad grid=ceil_div(H,64) block=64
KERNEL bias_grad(GCP BF16 *dy, GP float *db, int t, int h) {
    int c = GID0;
    if (c >= h) return;
    float s = 0.0f;
    for (int r = 0; r < t; r++) s += bf16_load(dy, (long)r * h + c);
    db[c] = s;
}
""", """//@launch bias_grad_ref grid=H block=1
KERNEL bias_grad_ref(GCP BF16 *dy, GP float *db, int t, int h) {
    int c = GRP0;
    double s = 0.0;
    for (int r = 0; r < t; r++) s += bf16_load(dy, (long)r * h + c);
    db[c] = (float)s;
}
""", flops="T*H")
wrong("bias_grad_bf16", "bf16_accumulate", """// WRONG on purpose: accumulates the column sum in bf16.
//@launch bias_grad grid=ceil_div(H,64) block=64
KERNEL bias_grad(GCP BF16 *dy, GP float *db, int t, int h) {
    int c = GID0;
    if (c >= h) return;
    float s = 0.0f;
    for (int r = 0; r < t; r++) s = round_bf16(s + bf16_load(dy, (long)r * h + c));
    db[c] = s;
}
""")

# ---------------------------------------------------------------- casts (exact)
CAST_INIT = ["normal(0,1)", "special", "outliers(-1,1,0.01,1e30)"]
task("cast_f32_bf16", "Cast N floats to bf16, round to nearest even (exact; overflow gives inf).",
     {"N": 1 << 25}, {"N": 1 << 18}, [{"N": 1}, {"N": 1001}],
     [buf("x", "f32", "N", "in", CAST_INIT), buf("y", "bf16", "N", "out", atol=0, rtol=0, nonfinite=True)],
     i32s("N"), ["x", "y", "N"],
     """//@launch cast grid=ceil_div(N,64) block=64
KERNEL cast(GCP float *x, GP BF16 *y, int n) {
    int i = GID0;
    if (i < n) bf16_store(y, i, x[i]);
}
""", """//@launch cast_ref grid=N block=1
KERNEL cast_ref(GCP float *x, GP BF16 *y, int n) {
    int i = GRP0;
    bf16_store(y, i, x[i]);
}
""", flops="0")
wrong("cast_f32_bf16", "truncate", """// WRONG on purpose: truncates (keeps the top 16 bits) instead of rounding to nearest even.
//@launch cast grid=ceil_div(N,64) block=64
KERNEL cast(GCP float *x, GP BF16 *y, int n) {
    int i = GID0;
    if (i < n) {
        GCP unsigned int *u = (GCP unsigned int *)x;
        ((GP unsigned short *)y)[i] = (unsigned short)(u[i] >> 16);
    }
}
""")

task("cast_f32_f16", "Cast N floats to f16, round to nearest even (exact; overflow gives inf, "
     "tiny values flush to subnormals or zero).",
     {"N": 1 << 25}, {"N": 1 << 18}, [{"N": 1}, {"N": 1001}],
     [buf("x", "f32", "N", "in", ["normal(0,1)", "special", "outliers(-1,1,0.01,1e5)"]),
      buf("y", "f16", "N", "out", atol=0, rtol=0, nonfinite=True)],
     i32s("N"), ["x", "y", "N"],
     """//@launch cast grid=ceil_div(N,64) block=64
KERNEL cast(GCP float *x, GP F16 *y, int n) {
    int i = GID0;
    if (i < n) f16_store(y, i, x[i]);
}
""", """//@launch cast_ref grid=N block=1
KERNEL cast_ref(GCP float *x, GP F16 *y, int n) {
    int i = GRP0;
    f16_store(y, i, x[i]);
}
""", flops="0")
wrong("cast_f32_f16", "via_bf16", """// WRONG on purpose: goes through bf16 first (double rounding, 8 bits of mantissa lost).
//@launch cast grid=ceil_div(N,64) block=64
KERNEL cast(GCP float *x, GP F16 *y, int n) {
    int i = GID0;
    if (i < n) f16_store(y, i, round_bf16(x[i]));
}
""")

# ---------------------------------------------------------------- fp8 (CUDA only)
FP8Q_SIG = "(const __nv_bfloat16 *x, __nv_fp8_e4m3 *q, float *scale, int t, int h)"
task("quant_fp8_rowwise",
     "Dynamic per-token fp8 quantisation: scale[t] = max(amax(x[t,:]), 1e-12) / 448 (f32), "
     "q = e4m3(x / scale) saturating; x is T x H bf16.",
     {"T": 8192, "H": 4096}, None, [{"T": 1, "H": 1}, {"T": 3, "H": 1001}],
     [buf("x", "bf16", "T*H", "in", ["normal(0,1)", "outliers(-1,1,0.01,100)", "special"]),
      buf("q", "fp8_e4m3", "T*H", "out"), buf("scale", "f32", "T", "out")],
     i32s("T", "H"), ["x", "q", "scale", "T", "H"],
     """// One thread per row: the absolute maximum, then the quantised row.
//@launch quant grid=ceil_div(T,32) block=32
#include <cuda_bf16.h>
#include <cuda_fp8.h>
extern "C" __global__ void quant""" + FP8Q_SIG + """ {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= t) return;
    long o = (long)r * h;
    float amax = 0.0f;
    for (int j = 0; j < h; j++) amax = fmaxf(amax, fabsf(__bfloat162float(x[o + j])));
    float s = fmaxf(amax, 1e-12f) / 448.0f;
    scale[r] = s;
    for (int j = 0; j < h; j++) q[o + j] = __nv_fp8_e4m3(__bfloat162float(x[o + j]) / s);
}
""", """//@launch quant_ref grid=T block=1
#include <cuda_bf16.h>
#include <cuda_fp8.h>
extern "C" __global__ void quant_ref""" + FP8Q_SIG + """ {
    long o = (long)blockIdx.x * h;
    double amax = 0.0;
    for (int j = 0; j < h; j++) amax = fmax(amax, fabs((double)__bfloat162float(x[o + j])));
    float s = (float)(fmax(amax, 1e-12) / 448.0);
    scale[blockIdx.x] = s;
    for (int j = 0; j < h; j++)
        q[o + j].__x = __nv_cvt_float_to_fp8((float)((double)__bfloat162float(x[o + j]) / s), __NV_SATFINITE, __NV_E4M3);
}
""", flops="3*T*H", cuda_only=True)
wrong("quant_fp8_rowwise", "int8_range", {"cu": """// WRONG on purpose: scales to 127 (the int8 habit) instead of e4m3's 448.
//@launch quant grid=ceil_div(T,32) block=32
#include <cuda_bf16.h>
#include <cuda_fp8.h>
extern "C" __global__ void quant""" + FP8Q_SIG + """ {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= t) return;
    long o = (long)r * h;
    float amax = 0.0f;
    for (int j = 0; j < h; j++) amax = fmaxf(amax, fabsf(__bfloat162float(x[o + j])));
    float s = fmaxf(amax, 1e-12f) / 127.0f;
    scale[r] = s;
    for (int j = 0; j < h; j++) q[o + j] = __nv_fp8_e4m3(__bfloat162float(x[o + j]) / s);
}
"""})

FP8D_SIG = "(const __nv_fp8_e5m2 *q, const float *s, __nv_bfloat16 *y, int n)"
task("dequant_fp8_e5m2",
     "Block-scaled fp8 dequantisation: y[i] = bf16(e5m2 q[i] * s[i / 128]) for N values, one f32 "
     "scale per block of 128.",
     {"N": 1 << 26}, None, [{"N": 1}, {"N": 1001}],
     [buf("q", "fp8_e5m2", "N", "in", ["normal(0,1)", "outliers(-1,1,0.01,1000)", "special"]),
      buf("s", "f32", "ceil_div(N,128)", "in", "uniform(0.001,0.1)"), buf("y", "bf16", "N", "out")],
     i32s("N"), ["q", "s", "y", "N"],
     """//@launch dequant grid=ceil_div(N,64) block=64
#include <cuda_bf16.h>
#include <cuda_fp8.h>
extern "C" __global__ void dequant""" + FP8D_SIG + """ {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __float2bfloat16_rn(float(q[i]) * s[i / 128]);
}
""", """//@launch dequant_ref grid=N block=1
#include <cuda_bf16.h>
#include <cuda_fp8.h>
extern "C" __global__ void dequant_ref""" + FP8D_SIG + """ {
    int i = blockIdx.x;
    __half_raw h = __nv_cvt_fp8_to_halfraw(q[i].__x, __NV_E5M2);
    y[i] = __float2bfloat16_rn((float)((double)__half2float(__half(h)) * s[i / 128]));
}
""", flops="N", bytes="3*N + 4*ceil_div(N,128)", cuda_only=True)
wrong("dequant_fp8_e5m2", "block_256", {"cu": """// WRONG on purpose: one scale per 256 values where the task's blocks are 128.
//@launch dequant grid=ceil_div(N,64) block=64
#include <cuda_bf16.h>
#include <cuda_fp8.h>
extern "C" __global__ void dequant""" + FP8D_SIG + """ {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __float2bfloat16_rn(float(q[i]) * s[i / 256]);
}
"""})


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def write_tasks():
    for t in TASKS:
        d = os.path.join(HERE, t["name"])
        langs = (("cu", "cuda"),) if t["cuda_only"] else (("cu", "cuda"), ("cl", "opencl"))
        spec = {"name": t["name"], "description": t["description"]}
        for kind in ("baseline", "reference"):
            spec[kind] = {lang: f"{kind}.{ext}" for ext, lang in langs}
        for k in ("sizes", "cpu_sizes", "check_sizes", "buffers", "scalars", "args", "bytes",
                  "flops", "target_speedup"):
            if t[k] is not None:
                spec[k] = t[k]
        write(os.path.join(d, "task.json"), json.dumps(spec, indent=2) + "\n")
        for kind in ("baseline", "reference"):
            for ext, _ in langs:
                src = t[kind + "_src"]
                write(os.path.join(d, f"{kind}.{ext}"), src if t["cuda_only"] else render(src, ext))


def write_wrong():
    for name, cands in WRONG.items():
        for stem, src in cands:
            if isinstance(src, dict):
                write(os.path.join(WRONG_DIR, name, stem + ".cu"), src["cu"])
                continue
            for ext in ("cl", "cu"):
                write(os.path.join(WRONG_DIR, name, f"{stem}.{ext}"), render(src, ext))


def main():
    import gen_wrong  # the existing tasks' wrong candidates, registered through wrong()
    gen_wrong.register(wrong)
    write_tasks()
    write_wrong()
    print(f"wrote {len(TASKS)} real-shape tasks and wrong candidates for {len(WRONG)} tasks")


if __name__ == "__main__":
    main()
