// One thread per output, no tiling; the epilogue is applied to the f32 accumulator.
//@launch gemm_bias_gelu grid=(ceil_div(N,16),ceil_div(M,16)) block=(16,16)
// half as storage only (no cl_khr_fp16 needed): vload_half / vstore_half_rte.
static inline float f16_load(__global const half *p, long i) { return vload_half(i, p); }
static inline void f16_store(__global half *p, long i, float f) { vstore_half_rte(f, i, p); }
static inline float round_f16(float f) {
    ushort h; /* a private half variable needs cl_khr_fp16; its bits do not */
    vstore_half_rte(f, 0, (half *)&h);
    return vload_half(0, (const half *)&h);
}
__kernel void gemm_bias_gelu(__global const half *x, __global const half *w, __global const float *bias, __global half *y, int m, int n, int k) {
    int col = (int)get_global_id(0), row = (int)get_global_id(1);
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (int p = 0; p < k; p++) acc += f16_load(x, (long)row * k + p) * f16_load(w, (long)p * n + col);
    float v = acc + bias[col];
    f16_store(y, (long)row * n + col, 0.5f * v * (1.0f + tanh(0.7978845608f * (v + 0.044715f * v * v * v))));
}
