// Plain baseline: one element per work-item, tiny work-groups.
//@launch vector_scale grid=ceil_div(N,4) block=4
__kernel void vector_scale(__global const float *x, __global float *y, float alpha, int n) {
    int i = get_global_id(0);
    if (i < n) y[i] = alpha * x[i];
}
