//@launch transpose_ref grid=R block=1
__kernel void transpose_ref(__global const float *x, __global float *y, int rows, int cols) {
    int r = (int)get_group_id(0);
    for (int c = 0; c < cols; c++) y[(long)c * rows + r] = x[(long)r * cols + c];
}
