#pragma OPENCL EXTENSION cl_khr_fp64 : enable
//@launch conv2d_ref grid=H-K+1 block=1
__kernel void conv2d_ref(__global const float *x, __global const float *w, __global float *y, int h, int wd, int k) {
    int r = (int)get_group_id(0), ow = wd - k + 1;
    for (int c = 0; c < ow; c++) {
        double acc = 0.0;
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++) acc += (double)x[(long)(r + i) * wd + c + j] * w[i * k + j];
        y[(long)r * ow + c] = (float)acc;
    }
}
