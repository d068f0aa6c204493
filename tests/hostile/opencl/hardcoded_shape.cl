// expect: out_of_bounds|mismatch
// Hard-codes the main shape (N = 4194304) instead of using n.
//@launch vector_scale grid=ceil_div(N,256) block=256
__kernel void vector_scale(__global const float *x, __global float *y, float alpha, int n) {
    int i = get_global_id(0);
    if (i < 4194304) y[i] = alpha * x[i];
}
