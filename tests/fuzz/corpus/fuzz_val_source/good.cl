// expect: pass
// Four elements per work-item, 256-wide work-groups, tail handled.
//@launch vector_scale4 grid=ceil_div(ceil_div(N,4),256) block=256
__kernel void vector_scale4(__global const float *x, __global float *y, float alpha, int n) {
    int i = get_global_id(0) * 4;
    if (i + 3 < n) {
        vstore4(alpha * vload4(0, x + i), 0, y + i);
    } else {
        for (; i < n; i++) y[i] = alpha * x[i];
    }
}
