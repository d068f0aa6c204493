//@launch stencil2d grid=(ceil_div(W,8),ceil_div(H,8)) block=(8,8)
__kernel void stencil2d(__global const float *x, __global float *y, int h, int w) {
    int c = (int)get_global_id(0), r = (int)get_global_id(1);
    if (r >= h || c >= w) return;
    long i = (long)r * w + c;
    if (r == 0 || c == 0 || r == h - 1 || c == w - 1) {
        y[i] = x[i];
        return;
    }
    y[i] = 0.2f * (x[i] + x[i - 1] + x[i + 1] + x[i - w] + x[i + w]);
}
