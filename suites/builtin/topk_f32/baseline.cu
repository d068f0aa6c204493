// One thread per row; k passes, each finding the next value in the order.
//@launch topk grid=ceil_div(B,32) block=32
extern "C" __global__ void topk(const float *x, float *vals, int *idx, int b, int n, int k) {
    int r = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (r >= b) return;
    const float *xr = x + (long)r * n;
    float pv = __int_as_float(0x7f800000);
    int pi = -1;
    for (int t = 0; t < k; t++) {
        float bv = (-__int_as_float(0x7f800000));
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
