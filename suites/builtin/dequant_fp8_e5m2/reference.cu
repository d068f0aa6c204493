//@launch dequant_ref grid=N block=1
#include <cuda_bf16.h>
#include <cuda_fp8.h>
extern "C" __global__ void dequant_ref(const __nv_fp8_e5m2 *q, const float *s, __nv_bfloat16 *y, int n) {
    int i = blockIdx.x;
    __half_raw h = __nv_cvt_fp8_to_halfraw(q[i].__x, __NV_E5M2);
    y[i] = __float2bfloat16_rn((float)((double)__half2float(__half(h)) * s[i / 128]));
}
