// Three passes per query row in double: the maximum score, the sum, then the output.
//@launch attention_ref grid=(S,BH) block=1
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
// half as storage only (no cl_khr_fp16 needed): vload_half / vstore_half_rte.
static inline float f16_load(__global const half *p, long i) { return vload_half(i, p); }
static inline void f16_store(__global half *p, long i, float f) { vstore_half_rte(f, i, p); }
static inline float round_f16(float f) {
    ushort h; /* a private half variable needs cl_khr_fp16; its bits do not */
    vstore_half_rte(f, 0, (half *)&h);
    return vload_half(0, (const half *)&h);
}
static inline double score(__global const half *q, __global const half *k, long qi, long kj) {
    double sc = 0.0;
    for (int c = 0; c < 64; c++) sc += (double)f16_load(q, qi + c) * f16_load(k, kj + c);
    return sc * 0.125;
}
__kernel void attention_ref(__global const half *q, __global const half *k, __global const half *v, __global half *o, int bh, int s, int d) {
    int i = (int)get_group_id(0), h = (int)get_group_id(1);
    long base = (long)h * s * 64, qi = base + (long)i * 64;
    double m = score(q, k, qi, base), l = 0.0, acc[64];
    for (int j = 1; j <= i; j++) m = fmax(m, score(q, k, qi, base + (long)j * 64));
    for (int j = 0; j <= i; j++) l += exp(score(q, k, qi, base + (long)j * 64) - m);
    for (int c = 0; c < 64; c++) acc[c] = 0.0;
    for (int j = 0; j <= i; j++) {
        double p = exp(score(q, k, qi, base + (long)j * 64) - m) / l;
        for (int c = 0; c < 64; c++) acc[c] += p * f16_load(v, base + (long)j * 64 + c);
    }
    for (int c = 0; c < 64; c++) f16_store(o, qi + c, (float)acc[c]);
}
