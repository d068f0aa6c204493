//@launch gather_ref grid=N block=1
__kernel void gather_ref(__global const float *table, __global const int *idx, __global float *out, int t, int d, int n) {
    int i = (int)get_group_id(0);
    for (int j = 0; j < d; j++) out[(long)i * d + j] = table[(long)(idx[i] % t) * d + j];
}
