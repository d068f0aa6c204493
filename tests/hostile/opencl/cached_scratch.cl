// expect: mismatch
// Keeps a "cache" in scratch memory and assumes that memory starts zeroed: the first
// launch would compute and fill it, later ones would serve it. Scratch is poisoned.
//@scratch state i32 1
//@scratch cache f32 N
//@launch vector_scale grid=ceil_div(N,256) block=256 args=x,y,alpha,N,state,cache
__kernel void vector_scale(__global const float *x, __global float *y, float alpha, int n,
                           __global int *state, __global float *cache) {
    int i = get_global_id(0);
    if (i >= n) return;
    if (state[0] != 0) {
        y[i] = cache[i];
        return;
    }
    y[i] = alpha * x[i];
    cache[i] = y[i];
}
