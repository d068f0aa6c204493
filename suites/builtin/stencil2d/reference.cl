#pragma OPENCL EXTENSION cl_khr_fp64 : enable
//@launch stencil2d_ref grid=H block=1
__kernel void stencil2d_ref(__global const float *x, __global float *y, int h, int w) {
    int r = (int)get_group_id(0);
    for (int c = 0; c < w; c++) {
        long i = (long)r * w + c;
        if (r == 0 || c == 0 || r == h - 1 || c == w - 1) y[i] = x[i];
        else y[i] = (float)(0.2 * ((double)x[i] + x[i - 1] + x[i + 1] + x[i - w] + x[i + w]));
    }
}
