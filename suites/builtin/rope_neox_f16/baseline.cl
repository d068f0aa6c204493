// One thread per (token, head): rotates that head's D/2 pairs.
//@launch rope grid=ceil_div(T*(HQ+HK),64) block=64
// half as storage only (no cl_khr_fp16 needed): vload_half / vstore_half_rte.
static inline float f16_load(__global const half *p, long i) { return vload_half(i, p); }
static inline void f16_store(__global half *p, long i, float f) { vstore_half_rte(f, i, p); }
static inline float round_f16(float f) {
    ushort h; /* a private half variable needs cl_khr_fp16; its bits do not */
    vstore_half_rte(f, 0, (half *)&h);
    return vload_half(0, (const half *)&h);
}
__kernel void rope(__global half *q, __global half *k, __global const float *cosc, __global const float *sinc, __global const int *pos, int t, int hq, int hk, int d, int p) {
    int g = (int)get_global_id(0);
    if (g >= t * (hq + hk)) return;
    int tok = g / (hq + hk), hd = g % (hq + hk), half_d = d / 2;
    __global half *x = hd < hq ? q + ((long)tok * hq + hd) * d : k + ((long)tok * hk + hd - hq) * d;
    long a = (long)pos[tok] * half_d;
    for (int c = 0; c < half_d; c++) {
        float x0 = f16_load(x, c), x1 = f16_load(x, c + half_d), cs = cosc[a + c], sn = sinc[a + c];
        f16_store(x, c, x0 * cs - x1 * sn);
        f16_store(x, c + half_d, x1 * cs + x0 * sn);
    }
}
