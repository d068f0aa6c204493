// Zero the bins, then one global atomic per element.
//@launch hist_zero grid=ceil_div(NB,64) block=64 args=bins,NB
//@launch histogram grid=ceil_div(N,64) block=64
__kernel void hist_zero(__global unsigned int *bins, int nb) {
    int i = (int)get_global_id(0);
    if (i < nb) bins[i] = 0;
}
__kernel void histogram(__global const int *x, __global unsigned int *bins, int n, int nb) {
    int i = (int)get_global_id(0);
    if (i < n && x[i] >= 0 && x[i] < nb) atomic_inc(&bins[x[i]]);
}
