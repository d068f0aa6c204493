// One thread per output, no tiling, no tensor cores.
//@launch gemm_nt grid=(ceil_div(N,16),ceil_div(M,16)) block=(16,16)
#include <cuda_bf16.h>
static __device__ inline float bf16_load(const __nv_bfloat16 *p, long i) { return __bfloat162float(p[i]); }
static __device__ inline void bf16_store(__nv_bfloat16 *p, long i, float f) { p[i] = __float2bfloat16_rn(f); }
static __device__ inline float round_bf16(float f) { return __bfloat162float(__float2bfloat16_rn(f)); }
extern "C" __global__ void gemm_nt(const __nv_bfloat16 *x, const __nv_bfloat16 *w, __nv_bfloat16 *y, int m, int n, int k) {
    int col = (int)(blockIdx.x * blockDim.x + threadIdx.x), row = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (int p = 0; p < k; p++) acc += bf16_load(x, (long)row * k + p) * bf16_load(w, (long)col * k + p);
    bf16_store(y, (long)row * n + col, acc);
}
