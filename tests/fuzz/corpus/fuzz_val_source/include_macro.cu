// expect: rejected
// Hides the path behind a macro.
#define F "/etc/passwd"
#include F
extern "C" __global__ void vector_scale(const float *x, float *y, float alpha, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) y[i] = alpha * x[i];
}
