//@launch conv2d grid=(ceil_div(W-K+1,8),ceil_div(H-K+1,8)) block=(8,8)
extern "C" __global__ void conv2d(const float *x, const float *w, float *y, int h, int wd, int k) {
    int c = (int)(blockIdx.x * blockDim.x + threadIdx.x), r = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    int oh = h - k + 1, ow = wd - k + 1;
    if (r >= oh || c >= ow) return;
    float acc = 0.0f;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) acc += x[(long)(r + i) * wd + c + j] * w[i * k + j];
    y[(long)r * ow + c] = acc;
}
