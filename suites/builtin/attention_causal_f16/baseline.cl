// One thread per query row, online softmax over its keys 0..i; nothing shared, no tiles.
//@launch attention grid=(ceil_div(S,32),BH) block=32
// half as storage only (no cl_khr_fp16 needed): vload_half / vstore_half_rte.
static inline float f16_load(__global const half *p, long i) { return vload_half(i, p); }
static inline void f16_store(__global half *p, long i, float f) { vstore_half_rte(f, i, p); }
static inline float round_f16(float f) {
    ushort h; /* a private half variable needs cl_khr_fp16; its bits do not */
    vstore_half_rte(f, 0, (half *)&h);
    return vload_half(0, (const half *)&h);
}
__kernel void attention(__global const half *q, __global const half *k, __global const half *v, __global half *o, int bh, int s, int d) {
    int i = (int)get_global_id(0), h = (int)get_group_id(1);
    if (i >= s) return;
    long base = (long)h * s * 64;
    float qi[64], acc[64];
    for (int c = 0; c < 64; c++) {
        qi[c] = f16_load(q, base + (long)i * 64 + c) * 0.125f;
        acc[c] = 0.0f;
    }
    float m = (-INFINITY), l = 0.0f;
    for (int j = 0; j <= i; j++) {
        float sc = 0.0f;
        for (int c = 0; c < 64; c++) sc += qi[c] * f16_load(k, base + (long)j * 64 + c);
        float mn = fmax(m, sc), corr = exp(m - mn), p = exp(sc - mn);
        l = l * corr + p;
        for (int c = 0; c < 64; c++) acc[c] = acc[c] * corr + p * f16_load(v, base + (long)j * 64 + c);
        m = mn;
    }
    for (int c = 0; c < 64; c++) f16_store(o, base + (long)i * 64 + c, acc[c] / l);
}
