//@launch conv2d grid=(ceil_div(W-K+1,8),ceil_div(H-K+1,8)) block=(8,8)
__kernel void conv2d(__global const float *x, __global const float *w, __global float *y, int h, int wd, int k) {
    int c = (int)get_global_id(0), r = (int)get_global_id(1);
    int oh = h - k + 1, ow = wd - k + 1;
    if (r >= oh || c >= ow) return;
    float acc = 0.0f;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) acc += x[(long)(r + i) * wd + c + j] * w[i * k + j];
    y[(long)r * ow + c] = acc;
}
