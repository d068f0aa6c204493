//@launch gelu grid=ceil_div(N,64) block=64
// half as storage only (no cl_khr_fp16 needed): vload_half / vstore_half_rte.
static inline float f16_load(__global const half *p, long i) { return vload_half(i, p); }
static inline void f16_store(__global half *p, long i, float f) { vstore_half_rte(f, i, p); }
static inline float round_f16(float f) {
    ushort h; /* a private half variable needs cl_khr_fp16; its bits do not */
    vstore_half_rte(f, 0, (half *)&h);
    return vload_half(0, (const half *)&h);
}
__kernel void gelu(__global const half *x, __global half *y, int n) {
    int i = (int)get_global_id(0);
    if (i < n) {
        float v = f16_load(x, i);
        f16_store(y, i, 0.5f * v * (1.0f + erf(v * 0.70710678f)));
    }
}
