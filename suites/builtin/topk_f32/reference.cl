//@launch topk_ref grid=B block=1
__kernel void topk_ref(__global const float *x, __global float *vals, __global int *idx, int b, int n, int k) {
    int r = (int)get_group_id(0);
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
