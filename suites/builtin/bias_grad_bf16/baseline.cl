// One thread per column, f32 accumulation down the rows.
//@launch bias_grad grid=ceil_div(H,64) block=64
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
__kernel void bias_grad(__global const ushort *dy, __global float *db, int t, int h) {
    int c = (int)get_global_id(0);
    if (c >= h) return;
    float s = 0.0f;
    for (int r = 0; r < t; r++) s += bf16_load(dy, (long)r * h + c);
    db[c] = s;
}
