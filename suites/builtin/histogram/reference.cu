// Serial counts per 65536-element chunk, then per bin the sum over chunks (a scan of all
// N elements per bin would read 256 x 64M values).
//@scratch part u32 ceil_div(N,65536)*NB
//@launch histogram_chunks grid=ceil_div(N,65536) block=1 args=x,part,N,NB
//@launch histogram_ref grid=NB block=1 args=part,bins,N,NB
extern "C" __global__ void histogram_chunks(const int *x, unsigned int *part, int n, int nb) {
    int c = (int)blockIdx.x;
    unsigned int *h = part + (long)c * nb;
    for (int b = 0; b < nb; b++) h[b] = 0;
    for (long i = (long)c * 65536; i < n && i < (long)c * 65536 + 65536; i++)
        if (x[i] >= 0 && x[i] < nb) h[x[i]]++;
}
extern "C" __global__ void histogram_ref(const unsigned int *part, unsigned int *bins, int n, int nb) {
    int b = (int)blockIdx.x;
    unsigned int s = 0;
    for (int c = 0; c < (n + 65535) / 65536; c++) s += part[(long)c * nb + b];
    bins[b] = s;
}
