//@launch histogram_ref grid=NB block=1
extern "C" __global__ void histogram_ref(const int *x, unsigned int *bins, int n, int nb) {
    int b = (int)blockIdx.x;
    unsigned int c = 0;
    for (int i = 0; i < n; i++) c += x[i] == b;
    bins[b] = c;
}
