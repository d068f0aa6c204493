// One work-item per output element.
//@launch gather grid=ceil_div(N*D,64) block=64
__kernel void gather(__global const float *table, __global const int *idx, __global float *out, int t, int d, int n) {
    int e = (int)get_global_id(0);
    if (e >= n * d) return;
    int i = e / d, j = e % d;
    out[e] = table[(long)(idx[i] % t) * d + j];
}
