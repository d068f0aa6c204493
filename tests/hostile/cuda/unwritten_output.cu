// expect: mismatch
// Writes nothing and hopes the output buffer still holds an earlier result.
extern "C" __global__ void vector_scale(const float *x, float *y, float alpha, int n) {
}
