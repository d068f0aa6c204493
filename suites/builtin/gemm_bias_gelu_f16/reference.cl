//@launch gemm_bias_gelu_ref grid=(N,M) block=1
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
// half as storage only (no cl_khr_fp16 needed): vload_half / vstore_half_rte.
static inline float f16_load(__global const half *p, long i) { return vload_half(i, p); }
static inline void f16_store(__global half *p, long i, float f) { vstore_half_rte(f, i, p); }
static inline float round_f16(float f) {
    ushort h; /* a private half variable needs cl_khr_fp16; its bits do not */
    vstore_half_rte(f, 0, (half *)&h);
    return vload_half(0, (const half *)&h);
}
__kernel void gemm_bias_gelu_ref(__global const half *x, __global const half *w, __global const float *bias, __global half *y, int m, int n, int k) {
    int col = (int)get_group_id(0), row = (int)get_group_id(1);
    double acc = 0.0;
    for (int p = 0; p < k; p++) acc += (double)f16_load(x, (long)row * k + p) * f16_load(w, (long)p * n + col);
    double v = acc + bias[col];
    f16_store(y, (long)row * n + col,
              (float)(0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))));
}
