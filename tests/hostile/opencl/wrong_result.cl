// expect: mismatch
// Off by a little: adds 0.01.
__kernel void vector_scale(__global const float *x, __global float *y, float alpha, int n) {
    int i = get_global_id(0);
    if (i < n) y[i] = alpha * x[i] + 0.01f;
}
