//@launch histogram_ref grid=NB block=1
__kernel void histogram_ref(__global const int *x, __global unsigned int *bins, int n, int nb) {
    int b = (int)get_group_id(0);
    unsigned int c = 0;
    for (int i = 0; i < n; i++) c += x[i] == b;
    bins[b] = c;
}
