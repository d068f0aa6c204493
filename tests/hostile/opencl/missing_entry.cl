// expect: compile_error
//@launch vector_scale grid=ceil_div(N,256) block=256
__kernel void vscale(__global const float *x, __global float *y, float alpha, int n) {
    int i = get_global_id(0);
    if (i < n) y[i] = alpha * x[i];
}
