//@launch argmax grid=ceil_div(B,32) block=32
extern "C" __global__ void argmax(const float *x, int *idx, int b, int n) {
    int r = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (r >= b) return;
    float best = (-__int_as_float(0x7f800000));
    int at = 0;
    for (int j = 0; j < n; j++)
        if (x[(long)r * n + j] > best) {
            best = x[(long)r * n + j];
            at = j;
        }
    idx[r] = at;
}
