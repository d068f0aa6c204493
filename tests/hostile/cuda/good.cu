// expect: pass
// Four elements per thread through float4, 256-thread blocks, tail handled.
//@launch vector_scale4 grid=ceil_div(ceil_div(N,4),256) block=256
extern "C" __global__ void vector_scale4(const float *x, float *y, float alpha, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (i + 3 < n && ((size_t)x & 15) == 0 && ((size_t)y & 15) == 0) {
        float4 v = *(const float4 *)(x + i);
        *(float4 *)(y + i) = make_float4(alpha * v.x, alpha * v.y, alpha * v.z, alpha * v.w);
    } else {
        for (; i < n; i++) y[i] = alpha * x[i];
    }
}
