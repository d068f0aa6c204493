// One thread per output, no tiling, no tensor cores.
//@launch gemm_nt grid=(ceil_div(N,16),ceil_div(M,16)) block=(16,16)
// bf16 in OpenCL: 16-bit storage, the top half of a float; rounding adds 0x7fff plus the
// lowest kept bit (ties to even) and keeps NaN a quiet NaN.
static inline float bf16_load(__global const ushort *p, long i) { return as_float((uint)p[i] << 16); }
static inline ushort bf16_bits(float f) {
    uint u = as_uint(f);
    if (isnan(f)) return (ushort)0x7fc0;
    return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static inline void bf16_store(__global ushort *p, long i, float f) { p[i] = bf16_bits(f); }
static inline float round_bf16(float f) { return as_float((uint)bf16_bits(f) << 16); }
__kernel void gemm_nt(__global const ushort *x, __global const ushort *w, __global ushort *y, int m, int n, int k) {
    int col = (int)get_global_id(0), row = (int)get_global_id(1);
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (int p = 0; p < k; p++) acc += bf16_load(x, (long)row * k + p) * bf16_load(w, (long)col * k + p);
    bf16_store(y, (long)row * n + col, acc);
}
