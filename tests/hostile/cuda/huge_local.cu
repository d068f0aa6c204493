// expect: launch_error|compile_error
// Asks for 1 GiB of local memory.
extern "C" __global__ void vector_scale(const float *x, float *y, float alpha, int n) {
    __shared__ float big[1 << 28];
    int i = (blockIdx.x * blockDim.x + threadIdx.x);
    big[threadIdx.x] = x[i < n ? i : 0];
    __syncthreads();
    if (i < n) y[i] = alpha * big[threadIdx.x];
}
