//@launch embedding_ref grid=T block=1
#include <cuda_bf16.h>
static __device__ inline float bf16_load(const __nv_bfloat16 *p, long i) { return __bfloat162float(p[i]); }
static __device__ inline void bf16_store(__nv_bfloat16 *p, long i, float f) { p[i] = __float2bfloat16_rn(f); }
static __device__ inline float round_bf16(float f) { return __bfloat162float(__float2bfloat16_rn(f)); }
extern "C" __global__ void embedding_ref(const __nv_bfloat16 *table, const int *ids, __nv_bfloat16 *out, int v, int d, int t) {
    int i = (int)blockIdx.x, id = ids[i];
    for (int j = 0; j < d; j++)
        bf16_store(out, (long)i * d + j, id >= 0 && id < v ? bf16_load(table, (long)id * d + j) : 0.0f);
}
