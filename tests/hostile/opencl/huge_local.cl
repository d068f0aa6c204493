// expect: launch_error|compile_error
// Asks for 1 GiB of local memory.
__kernel void vector_scale(__global const float *x, __global float *y, float alpha, int n) {
    __local float big[1 << 28];
    int i = get_global_id(0);
    big[get_local_id(0)] = x[i < n ? i : 0];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i < n) y[i] = alpha * big[get_local_id(0)];
}
