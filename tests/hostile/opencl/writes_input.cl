// expect: input_modified
// Correct output, but it clobbers its input afterwards.
__kernel void vector_scale(__global float *x, __global float *y, float alpha, int n) {
    int i = get_global_id(0);
    if (i < n) {
        y[i] = alpha * x[i];
        x[i] = 0.0f;
    }
}
