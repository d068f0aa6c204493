//@launch dequant grid=ceil_div(N,64) block=64
#include <cuda_bf16.h>
#include <cuda_fp8.h>
extern "C" __global__ void dequant(const __nv_fp8_e5m2 *q, const float *s, __nv_bfloat16 *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __float2bfloat16_rn(float(q[i]) * s[i / 128]);
}
