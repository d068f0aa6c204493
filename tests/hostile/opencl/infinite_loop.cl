// expect: timeout
// Never terminates (the loop has side effects, so it cannot be optimized away).
__kernel void vector_scale(__global const float *x, __global float *y, float alpha, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    float v = x[i];
    for (;;) {
        v = v * 0.5f + alpha;
        y[i] = v;
        if (v != v) break;
    }
}
