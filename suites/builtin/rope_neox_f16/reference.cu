//@launch rope_ref grid=T block=1
#include <cuda_fp16.h>
static __device__ inline float f16_load(const __half *p, long i) { return __half2float(p[i]); }
static __device__ inline void f16_store(__half *p, long i, float f) { p[i] = __float2half_rn(f); }
static __device__ inline float round_f16(float f) { return __half2float(__float2half_rn(f)); }
extern "C" __global__ void rope_ref(__half *q, __half *k, const float *cosc, const float *sinc, const int *pos, int t, int hq, int hk, int d, int p) {
    int tok = (int)blockIdx.x, half_d = d / 2;
    long a = (long)pos[tok] * half_d;
    for (int hd = 0; hd < hq + hk; hd++) {
        __half *x = hd < hq ? q + ((long)tok * hq + hd) * d : k + ((long)tok * hk + hd - hq) * d;
        for (int c = 0; c < half_d; c++) {
            double x0 = f16_load(x, c), x1 = f16_load(x, c + half_d), cs = cosc[a + c], sn = sinc[a + c];
            f16_store(x, c, (float)(x0 * cs - x1 * sn));
            f16_store(x, c + half_d, (float)(x1 * cs + x0 * sn));
        }
    }
}
