//@launch adamw_ref grid=N block=1
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
__kernel void adamw_ref(__global float *p, __global const ushort *g, __global float *m, __global float *v, float lr, float b1, float b2, float eps, float wd, float c1, float c2, int n) {
    int i = (int)get_group_id(0);
    double gi = bf16_load(g, i);
    double mi = (double)b1 * m[i] + (1.0 - b1) * gi;
    double vi = (double)b2 * v[i] + (1.0 - b2) * gi * gi;
    m[i] = (float)mi;
    v[i] = (float)vi;
    p[i] = (float)(p[i] * (1.0 - (double)lr * wd) - lr * (mi * c1) / (sqrt(vi * c2) + eps));
}
