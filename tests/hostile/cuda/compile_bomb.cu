// expect: compile_timeout|crash|compile_error
// Template recursion with 2^32 distinct instantiations.
template <int N, unsigned M> struct Bomb {
    static constexpr unsigned v = Bomb<N - 1, 2 * M>::v + Bomb<N - 1, 2 * M + 1>::v;
};
template <unsigned M> struct Bomb<0, M> { static constexpr unsigned v = M & 1; };
extern "C" __global__ void vector_scale(const float *x, float *y, float alpha, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = alpha * x[i] + (float)(Bomb<32, 1>::v == 12345u);
}
