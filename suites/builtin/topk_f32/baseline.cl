// One thread per row; k passes, each finding the next value in the order.
//@launch topk grid=ceil_div(B,32) block=32
__kernel void topk(__global const float *x, __global float *vals, __global int *idx, int b, int n, int k) {
    int r = (int)get_global_id(0);
    if (r >= b) return;
    __global const float *xr = x + (long)r * n;
    float pv = INFINITY;
    int pi = -1;
    for (int t = 0; t < k; t++) {
        float bv = (-INFINITY);
        int bi = -1;
        for (int j = 0; j < n; j++) {
            float v = xr[j];
            int after = v < pv || (v == pv && j > pi);
            if (after && (bi < 0 || v > bv)) {
                bv = v;
                bi = j;
            }
        }
        vals[(long)r * k + t] = bv;
        idx[(long)r * k + t] = bi;
        pv = bv;
        pi = bi;
    }
}
