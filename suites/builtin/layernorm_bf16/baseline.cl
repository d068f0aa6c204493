// One thread per row: mean, then variance around the mean, then the output.
//@launch layernorm grid=ceil_div(B,32) block=32
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
__kernel void layernorm(__global const ushort *x, __global const ushort *gamma, __global const ushort *beta, __global ushort *y, int rows, int n) {
    int r = (int)get_global_id(0);
    if (r >= rows) return;
    long o = (long)r * n;
    float mean = 0.0f;
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
