//@launch gelu grid=ceil_div(N,64) block=64
__kernel void gelu(__global const float *x, __global float *y, int n) {
    int i = (int)get_global_id(0);
    if (i < n) {
        float v = x[i];
        float inner = 0.7978845608f * (v + 0.044715f * v * v * v);
        y[i] = 0.5f * v * (1.0f + tanh(inner));
    }
}
