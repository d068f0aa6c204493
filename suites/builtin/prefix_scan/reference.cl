//@launch prefix_scan_ref grid=1 block=1
__kernel void prefix_scan_ref(__global const int *x, __global int *y, int n) {
    int s = 0;
    for (int i = 0; i < n; i++) {
        s += x[i];
        y[i] = s;
    }
}
