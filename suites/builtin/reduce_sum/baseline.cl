// One work-group of 256 strides over the input, then a tree in local memory.
//@launch reduce_sum grid=1 block=256
__kernel void reduce_sum(__global const float *x, __global float *out, int n) {
    __local float part[256];
    int t = (int)get_local_id(0);
    float s = 0.0f;
    for (int i = t; i < n; i += 256) s += x[i];
    part[t] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = 128; w > 0; w >>= 1) {
        if (t < w) part[t] += part[t + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0) out[0] = part[0];
}
