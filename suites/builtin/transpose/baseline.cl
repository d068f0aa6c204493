// One work-item per element, reads along rows, writes strided.
//@launch transpose grid=(ceil_div(C,16),ceil_div(R,16)) block=(16,16)
__kernel void transpose(__global const float *x, __global float *y, int rows, int cols) {
    int c = (int)get_global_id(0), r = (int)get_global_id(1);
    if (r < rows && c < cols) y[(long)c * rows + r] = x[(long)r * cols + c];
}
