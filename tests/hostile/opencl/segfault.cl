// expect: crash|out_of_bounds|mismatch
// Writes far outside any buffer (and never writes y): a fault, or wrong output if that memory is mapped.
__kernel void vector_scale(__global const float *x, __global float *y, float alpha, int n) {
    int i = get_global_id(0);
    if (i < n) y[i + 200000000] = alpha * x[i];
}
