// One thread per row: the absolute maximum, then the quantised row.
//@launch quant grid=ceil_div(T,32) block=32
#include <cuda_bf16.h>
#include <cuda_fp8.h>
extern "C" __global__ void quant(const __nv_bfloat16 *x, __nv_fp8_e4m3 *q, float *scale, int t, int h) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= t) return;
    long o = (long)r * h;
    float amax = 0.0f;
    for (int j = 0; j < h; j++) amax = fmaxf(amax, fabsf(__bfloat162float(x[o + j])));
    float s = fmaxf(amax, 1e-12f) / 448.0f;
    scale[r] = s;
    for (int j = 0; j < h; j++) q[o + j] = __nv_fp8_e4m3(__bfloat162float(x[o + j]) / s);
}
