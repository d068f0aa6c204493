"""Wrong candidates for the builtin tasks that gen.py writes (the f32/integer ones), in the
same dialect. Each is a plausible mistake the task's checks must catch: a dropped tail, a
hard-coded shape, an off-by-one, a wrong formula. gen_real.main() writes them to
tests/fixtures/builtin_wrong/<task>/<name>.{cl,cu}."""


def register(wrong):
    wrong("gelu", "sigmoid_approximation", """// WRONG on purpose: the sigmoid approximation x * sigmoid(1.702 x) of GELU.
//@launch gelu grid=ceil_div(N,64) block=64
KERNEL gelu(GCP float *x, GP float *y, int n) {
    int i = GID0;
    if (i < n) y[i] = x[i] / (1.0f + exp(-1.702f * x[i]));
}
""")
    wrong("reduce_sum", "chunk_tail", """// WRONG on purpose: sums whole chunks of 256 only, dropping the tail.
//@launch reduce_sum grid=1 block=256
KERNEL reduce_sum(GCP float *x, GP float *out, int n) {
    LOCAL float part[256];
    int t = LID0;
    float s = 0.0f;
    for (int i = t; i < n / 256 * 256; i += 256) s += x[i];
    part[t] = s;
    BARRIER;
    for (int w = 128; w > 0; w >>= 1) {
        if (t < w) part[t] += part[t + w];
        BARRIER;
    }
    if (t == 0) out[0] = part[0];
}
""")
    wrong("softmax", "sum_off_by_one", """// WRONG on purpose: the normalising sum misses the last element of the row.
//@launch softmax grid=ceil_div(B,32) block=32
KERNEL softmax(GCP float *x, GP float *y, int rows, int n) {
    int r = GID0;
    if (r >= rows) return;
    GCP float *xr = x + (long)r * n;
    GP float *yr = y + (long)r * n;
    float m = xr[0];
    for (int j = 1; j < n; j++) m = fmax(m, xr[j]);
    float s = 0.0f;
    for (int j = 0; j < n - 1; j++) s += exp(xr[j] - m);
    for (int j = 0; j < n; j++) yr[j] = exp(xr[j] - m) / s;
}
""")
    wrong("layernorm", "unbiased_variance", """// WRONG on purpose: divides the variance by n - 1 (the unbiased estimate).
//@launch layernorm grid=ceil_div(B,32) block=32
KERNEL layernorm(GCP float *x, GCP float *gamma, GCP float *beta, GP float *y, int rows, int n) {
    int r = GID0;
    if (r >= rows) return;
    GCP float *xr = x + (long)r * n;
    GP float *yr = y + (long)r * n;
    float mean = 0.0f;
    for (int j = 0; j < n; j++) mean += xr[j];
    mean /= n;
    float var = 0.0f;
    for (int j = 0; j < n; j++) var += (xr[j] - mean) * (xr[j] - mean);
    var /= n > 1 ? n - 1 : 1;
    float inv = 1.0f / sqrt(var + 1e-5f);
    for (int j = 0; j < n; j++) yr[j] = (xr[j] - mean) * inv * gamma[j] + beta[j];
}
""")
    wrong("rmsnorm", "f16_accumulate", """// WRONG on purpose: the sum of squares is kept in half precision.
//@launch rmsnorm grid=ceil_div(B,32) block=32
KERNEL rmsnorm(GCP float *x, GCP float *w, GP float *y, int rows, int n) {
    int r = GID0;
    if (r >= rows) return;
    GCP float *xr = x + (long)r * n;
    GP float *yr = y + (long)r * n;
    float ss = 0.0f;
    for (int j = 0; j < n; j++) ss = round_f16(ss + xr[j] * xr[j]);
    float inv = 1.0f / sqrt(ss / n + 1e-6f);
    for (int j = 0; j < n; j++) yr[j] = xr[j] * inv * w[j];
}
""")
    wrong("transpose", "square_only", """// WRONG on purpose: indexes the output with the input's row length (right for squares).
//@launch transpose grid=(ceil_div(C,16),ceil_div(R,16)) block=(16,16)
KERNEL transpose(GCP float *x, GP float *y, int rows, int cols) {
    int c = GID0, r = GID1;
    if (r < rows && c < cols) y[(long)c * cols + r] = x[(long)r * cols + c];
}
""")
    wrong("matmul", "k_tail", """// WRONG on purpose: unrolls K by 4 and drops the K % 4 tail.
//@launch matmul grid=(ceil_div(N,8),ceil_div(M,8)) block=(8,8)
KERNEL matmul(GCP float *A, GCP float *B, GP float *C, int m, int n, int k) {
    int col = GID0, row = GID1;
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (int p = 0; p + 4 <= k; p += 4)
        for (int q = p; q < p + 4; q++) acc += A[(long)row * k + q] * B[(long)q * n + col];
    C[(long)row * n + col] = acc;
}
""")
    wrong("matvec", "n_tail", """// WRONG on purpose: reads x four at a time and drops the N % 4 tail.
//@launch matvec grid=ceil_div(M,32) block=32
KERNEL matvec(GCP float *A, GCP float *x, GP float *y, int m, int n) {
    int r = GID0;
    if (r >= m) return;
    float acc = 0.0f;
    for (int j = 0; j + 4 <= n; j += 4)
        acc += A[(long)r * n + j] * x[j] + A[(long)r * n + j + 1] * x[j + 1] +
               A[(long)r * n + j + 2] * x[j + 2] + A[(long)r * n + j + 3] * x[j + 3];
    y[r] = acc;
}
""")
    wrong("histogram", "hardcoded_bins", """// WRONG on purpose: assumes 128 bins (masks the value with 127).
//@launch hist_zero grid=ceil_div(NB,64) block=64 args=bins,NB
//@launch histogram grid=ceil_div(N,64) block=64
KERNEL hist_zero(GP unsigned int *bins, int nb) {
    int i = GID0;
    if (i < nb) bins[i] = 0;
}
KERNEL histogram(GCP int *x, GP unsigned int *bins, int n, int nb) {
    int i = GID0;
    if (i < n && x[i] >= 0 && x[i] < nb) ATOMIC_INC(&bins[x[i] & 127]);
}
""")
    wrong("prefix_scan", "exclusive", """// WRONG on purpose: an exclusive scan where the task asks for an inclusive one.
//@launch prefix_scan grid=ceil_div(N,64) block=64
KERNEL prefix_scan(GCP int *x, GP int *y, int n) {
    int i = GID0;
    if (i >= n) return;
    int s = 0;
    for (int j = 0; j < i; j++) s += x[j];
    y[i] = s;
}
""")
    wrong("conv1d", "last_output_missing", """// WRONG on purpose: computes N - K outputs, one short.
//@launch conv1d grid=ceil_div(N-K+1,64) block=64
KERNEL conv1d(GCP float *x, GCP float *w, GP float *y, int n, int k) {
    int i = GID0;
    if (i >= n - k) return;
    float acc = 0.0f;
    for (int j = 0; j < k; j++) acc += x[i + j] * w[j];
    y[i] = acc;
}
""")
    wrong("conv2d", "flipped_filter", """// WRONG on purpose: a true convolution (flipped filter) where the task asks for a
// correlation; the same for symmetric filters only.
//@launch conv2d grid=(ceil_div(W-K+1,8),ceil_div(H-K+1,8)) block=(8,8)
KERNEL conv2d(GCP float *x, GCP float *w, GP float *y, int h, int wd, int k) {
    int c = GID0, r = GID1;
    int oh = h - k + 1, ow = wd - k + 1;
    if (r >= oh || c >= ow) return;
    float acc = 0.0f;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) acc += x[(long)(r + i) * wd + c + j] * w[(k - 1 - i) * k + (k - 1 - j)];
    y[(long)r * ow + c] = acc;
}
""")
    wrong("stencil2d", "last_row_not_copied", """// WRONG on purpose: copies the border except the last row, which it leaves unwritten.
//@launch stencil2d grid=(ceil_div(W,8),ceil_div(H,8)) block=(8,8)
KERNEL stencil2d(GCP float *x, GP float *y, int h, int w) {
    int c = GID0, r = GID1;
    if (r >= h - 1 || c >= w) return;
    long i = (long)r * w + c;
    if (r == 0 || c == 0 || c == w - 1) {
        y[i] = x[i];
        return;
    }
    y[i] = 0.2f * (x[i] + x[i - 1] + x[i + 1] + x[i - w] + x[i + w]);
}
""")
    wrong("gather", "pairs_tail", """// WRONG on purpose: copies two columns per work-item and drops an odd last column.
//@launch gather grid=ceil_div(N*D,128) block=64
KERNEL gather(GCP float *table, GCP int *idx, GP float *out, int t, int d, int n) {
    int e = GID0 * 2;
    int i = e / d, j = e % d;
    if (i >= n || j + 1 >= d) return;
    out[(long)i * d + j] = table[(long)(idx[i] % t) * d + j];
    out[(long)i * d + j + 1] = table[(long)(idx[i] % t) * d + j + 1];
}
""")
    wrong("batched_dot", "f16_accumulate", """// WRONG on purpose: accumulates the dot product in half precision.
//@launch batched_dot grid=ceil_div(B,32) block=32
KERNEL batched_dot(GCP float *x, GCP float *y, GP float *out, int b, int n) {
    int r = GID0;
    if (r >= b) return;
    float acc = 0.0f;
    for (int j = 0; j < n; j++) acc = round_f16(acc + x[(long)r * n + j] * y[(long)r * n + j]);
    out[r] = acc;
}
""")
    wrong("argmax", "abs_max", """// WRONG on purpose: the index of the largest magnitude (amax) instead of the maximum.
//@launch argmax grid=ceil_div(B,32) block=32
KERNEL argmax(GCP float *x, GP int *idx, int b, int n) {
    int r = GID0;
    if (r >= b) return;
    float best = -1.0f;
    int at = 0;
    for (int j = 0; j < n; j++)
        if (fabs(x[(long)r * n + j]) > best) {
            best = fabs(x[(long)r * n + j]);
            at = j;
        }
    idx[r] = at;
}
""")
