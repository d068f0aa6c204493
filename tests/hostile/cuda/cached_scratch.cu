// expect: mismatch
// Keeps a "cache" in scratch memory and assumes that memory starts zeroed: the first
// launch would compute and fill it, later ones would serve it. Scratch is poisoned.
//@scratch state i32 1
//@scratch cache f32 N
//@launch vector_scale grid=ceil_div(N,256) block=256 args=x,y,alpha,N,state,cache
extern "C" __global__ void vector_scale(const float *x, float *y, float alpha, int n,
                           int *state, float *cache) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= n) return;
    if (state[0] != 0) {
        y[i] = cache[i];
        return;
    }
    y[i] = alpha * x[i];
    cache[i] = y[i];
}
