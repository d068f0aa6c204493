// Zero the bins, then one global atomic per element.
//@launch hist_zero grid=ceil_div(NB,64) block=64 args=bins,NB
//@launch histogram grid=ceil_div(N,64) block=64
extern "C" __global__ void hist_zero(unsigned int *bins, int nb) {
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < nb) bins[i] = 0;
}
extern "C" __global__ void histogram(const int *x, unsigned int *bins, int n, int nb) {
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n && x[i] >= 0 && x[i] < nb) atomicAdd(&bins[x[i]], 1u);
}
