//@launch batched_dot grid=ceil_div(B,32) block=32
__kernel void batched_dot(__global const float *x, __global const float *y, __global float *out, int b, int n) {
    int r = (int)get_global_id(0);
    if (r >= b) return;
    float acc = 0.0f;
    for (int j = 0; j < n; j++) acc += x[(long)r * n + j] * y[(long)r * n + j];
    out[r] = acc;
}
