//@launch embedding_ref grid=T block=1
// bf16 in OpenCL: 16-bit storage, the top half of a float; rounding adds 0x7fff plus the
// lowest kept bit (ties to even) and keeps NaN a quiet NaN.
static inline float bf16_load(__global const ushort *p, long i) { return as_float((uint)p[i] << 16); }
static inline ushort bf16_bits(float f) {
    uint u = as_uint(f);
    if (isnan(f)) return (ushort)0x7fc0;
    return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static inline void bf16_store(__global ushort *p, long i, float f) { p[i] = bf16_bits(f); }
static inline float round_bf16(float f) { return as_float((uint)bf16_bits(f) << 16); }
__kernel void embedding_ref(__global const ushort *table, __global const int *ids, __global ushort *out, int v, int d, int t) {
    int i = (int)get_group_id(0), id = ids[i];
    for (int j = 0; j < d; j++)
        bf16_store(out, (long)i * d + j, id >= 0 && id < v ? bf16_load(table, (long)id * d + j) : 0.0f);
}
