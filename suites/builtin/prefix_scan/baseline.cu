// Deliberately quadratic: each work-item sums its whole prefix.
//@launch prefix_scan grid=ceil_div(N,64) block=64
extern "C" __global__ void prefix_scan(const int *x, int *y, int n) {
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= n) return;
    int s = 0;
    for (int j = 0; j <= i; j++) s += x[j];
    y[i] = s;
}
