//@launch argmax_ref grid=B block=1
__kernel void argmax_ref(__global const float *x, __global int *idx, int b, int n) {
    int r = (int)get_group_id(0), at = 0;
    for (int j = 1; j < n; j++)
        if (x[(long)r * n + j] > x[(long)r * n + at]) at = j;
    idx[r] = at;
}
