// expect: mismatch
// Right everywhere except one NaN at index 7.
__kernel void vector_scale(__global const float *x, __global float *y, float alpha, int n) {
    int i = get_global_id(0);
    if (i < n) y[i] = i == 7 ? NAN : alpha * x[i];
}
