// expect: crash|out_of_bounds
// Writes far outside any buffer.
__kernel void vector_scale(__global const float *x, __global float *y, float alpha, int n) {
    int i = get_global_id(0);
    if (i < n) y[i + 200000000] = alpha * x[i];
}
