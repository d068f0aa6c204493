//@launch cross_entropy_ref grid=B block=1
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
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
__kernel void cross_entropy_ref(__global const ushort *logits, __global const int *labels, __global float *loss, int b, int v) {
    int r = (int)get_group_id(0);
    long o = (long)r * v;
    double m = bf16_load(logits, o), s = 0.0;
    for (int j = 1; j < v; j++) m = fmax(m, (double)bf16_load(logits, o + j));
    for (int j = 0; j < v; j++) s += exp(bf16_load(logits, o + j) - m);
    loss[r] = (float)(log(s) + m - bf16_load(logits, o + labels[r]));
}
