//@launch argmax grid=ceil_div(B,32) block=32
__kernel void argmax(__global const float *x, __global int *idx, int b, int n) {
    int r = (int)get_global_id(0);
    if (r >= b) return;
    float best = (-INFINITY);
    int at = 0;
    for (int j = 0; j < n; j++)
        if (x[(long)r * n + j] > best) {
            best = x[(long)r * n + j];
            at = j;
        }
    idx[r] = at;
}
