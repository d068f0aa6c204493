// One thread per row: add and store the residual, then normalise it into x.
//@launch add_rmsnorm grid=ceil_div(B,32) block=32
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
__kernel void add_rmsnorm(__global ushort *x, __global ushort *res, __global const ushort *w, int rows, int n) {
    int r = (int)get_global_id(0);
    if (r >= rows) return;
    long o = (long)r * n;
    float ss = 0.0f;
    for (int j = 0; j < n; j++) {
        float h = round_bf16(bf16_load(x, o + j) + bf16_load(res, o + j));
        bf16_store(res, o + j, h);
        ss += h * h;
    }
    float inv = 1.0f / sqrt(ss / n + 1e-6f);
    for (int j = 0; j < n; j++) bf16_store(x, o + j, bf16_load(res, o + j) * inv * bf16_load(w, j));
}
