// One work-item per output element.
//@launch gather grid=ceil_div(N*D,64) block=64
extern "C" __global__ void gather(const float *table, const int *idx, float *out, int t, int d, int n) {
    int e = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (e >= n * d) return;
    int i = e / d, j = e % d;
    out[e] = table[(long)(idx[i] % t) * d + j];
}
