// expect: launch_error
// The launch passes two arguments to a kernel that takes four.
//@launch vector_scale grid=ceil_div(N,256) block=256 args=x,y
__kernel void vector_scale(__global const float *x, __global float *y, float alpha, int n) {
    int i = get_global_id(0);
    if (i < n) y[i] = alpha * x[i];
}
