// Serial double sums of 4096-element chunks, then a serial double sum of those: one
// thread summing 64M floats would take about a second on a GPU.
//@scratch part f64 ceil_div(N,4096)
//@launch reduce_sum_chunks grid=ceil_div(N,4096) block=1 args=x,part,N
//@launch reduce_sum_ref grid=1 block=1 args=part,out,N
extern "C" __global__ void reduce_sum_chunks(const float *x, double *part, int n) {
    int c = (int)blockIdx.x;
    double s = 0.0;
    for (long i = (long)c * 4096; i < n && i < (long)c * 4096 + 4096; i++) s += x[i];
    part[c] = s;
}
extern "C" __global__ void reduce_sum_ref(const double *part, float *out, int n) {
    double s = 0.0;
    for (int c = 0; c < (n + 4095) / 4096; c++) s += part[c];
    out[0] = (float)s;
}
