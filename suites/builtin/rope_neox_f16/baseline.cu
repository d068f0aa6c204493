// One thread per (token, head): rotates that head's D/2 pairs.
//@launch rope grid=ceil_div(T*(HQ+HK),64) block=64
#include <cuda_fp16.h>
static __device__ inline float f16_load(const __half *p, long i) { return __half2float(p[i]); }
static __device__ inline void f16_store(__half *p, long i, float f) { p[i] = __float2half_rn(f); }
static __device__ inline float round_f16(float f) { return __half2float(__float2half_rn(f)); }
extern "C" __global__ void rope(__half *q, __half *k, const float *cosc, const float *sinc, const int *pos, int t, int hq, int hk, int d, int p) {
    int g = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (g >= t * (hq + hk)) return;
    int tok = g / (hq + hk), hd = g % (hq + hk), half_d = d / 2;
    __half *x = hd < hq ? q + ((long)tok * hq + hd) * d : k + ((long)tok * hk + hd - hq) * d;
    long a = (long)pos[tok] * half_d;
    for (int c = 0; c < half_d; c++) {
        float x0 = f16_load(x, c), x1 = f16_load(x, c + half_d), cs = cosc[a + c], sn = sinc[a + c];
        f16_store(x, c, x0 * cs - x1 * sn);
        f16_store(x, c + half_d, x1 * cs + x0 * sn);
    }
}
