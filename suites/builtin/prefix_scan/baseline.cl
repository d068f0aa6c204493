// Deliberately quadratic: each work-item sums its whole prefix.
//@launch prefix_scan grid=ceil_div(N,64) block=64
__kernel void prefix_scan(__global const int *x, __global int *y, int n) {
    int i = (int)get_global_id(0);
    if (i >= n) return;
    int s = 0;
    for (int j = 0; j <= i; j++) s += x[j];
    y[i] = s;
}
