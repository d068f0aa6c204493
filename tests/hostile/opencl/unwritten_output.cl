// expect: mismatch
// Writes nothing and hopes the output buffer still holds an earlier result.
__kernel void vector_scale(__global const float *x, __global float *y, float alpha, int n) {
}
