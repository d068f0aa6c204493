//@launch gather_ref grid=N block=1
extern "C" __global__ void gather_ref(const float *table, const int *idx, float *out, int t, int d, int n) {
    int i = (int)blockIdx.x;
    for (int j = 0; j < d; j++) out[(long)i * d + j] = table[(long)(idx[i] % t) * d + j];
}
