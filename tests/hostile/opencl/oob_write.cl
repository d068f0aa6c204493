// expect: out_of_bounds
// Writes one element past the end of y.
__kernel void vector_scale(__global const float *x, __global float *y, float alpha, int n) {
    int i = get_global_id(0);
    if (i < n) y[i] = alpha * x[i];
    if (i == n - 1) y[n + 2] = 0.0f;
}
