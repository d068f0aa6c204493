// One work-group of 256 strides over the input, then a tree in local memory.
//@launch reduce_sum grid=1 block=256
extern "C" __global__ void reduce_sum(const float *x, float *out, int n) {
    __shared__ float part[256];
    int t = (int)threadIdx.x;
    float s = 0.0f;
    for (int i = t; i < n; i += 256) s += x[i];
    part[t] = s;
    __syncthreads();
    for (int w = 128; w > 0; w >>= 1) {
        if (t < w) part[t] += part[t + w];
        __syncthreads();
    }
    if (t == 0) out[0] = part[0];
}
