/* peaks.h — which peaks a task's roofline is measured against on a device.
 *
 * Contract: pure (no I/O, no clock), so it is unit-tested with pretend devices.
 *  - sg_peaks_lookup finds the datasheet entry of a GPU by its driver name and compute
 *    capability (NVIDIA H100 SXM / PCIe / NVL, H200 SXM / NVL: bandwidth, FP32, FP64 and the
 *    dense tensor-core peaks per type), or NULL; the most specific name wins ("H200 NVL"
 *    before "H200").
 *  - sg_peaks_wanted says which arithmetic a task is meant for: its "compute" field, else
 *    inferred: the narrowest floating input type (fp8 -> FP8 tensor, bf16 -> BF16 tensor,
 *    f16 -> FP16 tensor) when the task does more flops per byte than the FP32 units can
 *    feed (its intensity is above the FP32 ridge: only matrix products are), else FP32 (or
 *    FP64 for f64 inputs).
 *  - sg_peaks_choose fills the bandwidth and arithmetic peak to use and a label saying which
 *    peak it is and where the figure comes from. A datasheet entry gives both; without one,
 *    the backend's figures (CUDA: attributes; OpenCL: measured fills, units x clock x
 *    width) and only FP32: a CPU or an unknown GPU has no tensor figure, and the label says
 *    so when the task wanted one. */
#ifndef SG_PEAKS_H
#define SG_PEAKS_H

#include "device/device.h"
#include "validator/validator.h"

#define SG_PEAKS_NCOMPUTE (SG_VAL_COMPUTE_TENSOR_INT8 + 1)

typedef struct sg_peak_entry {
    const char *match; /* a substring of the driver's name: "H200 NVL" */
    const char *name;  /* "NVIDIA H200 NVL" */
    int cc_major, cc_minor;
    double gbs;                       /* memory bandwidth, GB/s */
    double tflops[SG_PEAKS_NCOMPUTE]; /* dense peak per sg_val_compute; 0: none */
    const char *source;               /* where the figures come from */
} sg_peak_entry;

typedef struct sg_peak_choice {
    double gbs, gflops;
    sg_val_compute compute; /* the arithmetic whose peak gflops is */
    char label[384];        /* "the BF16 tensor-core peak of the NVIDIA H200, ..." */
    char bw_source[96];     /* "NVIDIA H200 datasheet", "measured", "device attributes" */
} sg_peak_choice;

const sg_peak_entry *sg_peaks_lookup(const char *device, int cc_major, int cc_minor);
/* *why: "the task's \"compute\" field", "the task's bf16 inputs", ... (a literal). */
sg_val_compute sg_peaks_wanted(const sg_val_task *t, double bytes, double flops, double fp32_ridge,
                               const char **why);
void sg_peaks_choose(const sg_be_peaks *dev, const sg_val_task *t, double bytes, double flops,
                     sg_peak_choice *out);
/* "BF16 tensor-core", "FP32", ... */
const char *sg_peaks_compute_title(sg_val_compute c);

#endif
