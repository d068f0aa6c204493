#include "profiler/peaks.h"

#include <stdio.h>
#include <string.h>

/* Dense peaks in TFLOP/s (TOPS for int8), indexed by sg_val_compute: NVIDIA's H100 and H200
 * datasheets give the tensor-core figures "with sparsity"; the dense ones used here are
 * half of those (989 TFLOP/s BF16 dense on H100 SXM, matching the Hopper whitepaper's
 * 989.4). Sources and figures: docs/profiler.md "Peaks". Order: the most specific name
 * first. */
#define HOPPER_SXM(bw, src) bw, {0, 67, 34, 494.5, 989.5, 989.5, 1979, 1979}, src
#define HOPPER_NVL(bw, src) bw, {0, 60, 30, 417.5, 835.5, 835.5, 1670.5, 1670.5}, src
static const sg_peak_entry table[] = {
    {"H200 NVL", "NVIDIA H200 NVL", 9, 0, HOPPER_NVL(4800, "NVIDIA H200 NVL datasheet")},
    {"H100 NVL", "NVIDIA H100 NVL", 9, 0, HOPPER_NVL(3900, "NVIDIA H100 NVL datasheet")},
    {"H100 PCIe",
     "NVIDIA H100 PCIe",
     9,
     0,
     2000,
     {0, 51, 26, 378, 756.5, 756.5, 1513, 1513},
     "NVIDIA H100 PCIe datasheet"},
    {"H200", "NVIDIA H200", 9, 0, HOPPER_SXM(4800, "NVIDIA H200 SXM datasheet")},
    {"H100", "NVIDIA H100 SXM", 9, 0, HOPPER_SXM(3350, "NVIDIA H100 SXM datasheet")},
};

/* `word` in `s` as a whole word at its start ("NVIDIA H200", not "NVIDIA GH200"). */
static int has_word(const char *s, const char *word) {
    size_t n = strlen(word);
    for (const char *p = strstr(s, word); p; p = strstr(p + 1, word))
        if ((p == s || p[-1] == ' ') && (p[n] == 0 || p[n] == ' ')) return 1;
    return 0;
}

const sg_peak_entry *sg_peaks_lookup(const char *device, int cc_major, int cc_minor) {
    if (!device || strstr(device, "MIG")) return NULL; /* a MIG slice has a part of the SMs */
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (cc_major == table[i].cc_major && cc_minor == table[i].cc_minor &&
            has_word(device, table[i].match))
            return &table[i];
    return NULL;
}

const char *sg_peaks_compute_title(sg_val_compute c) {
    switch (c) {
    case SG_VAL_COMPUTE_AUTO:
    case SG_VAL_COMPUTE_FP32: return "FP32";
    case SG_VAL_COMPUTE_FP64: return "FP64";
    case SG_VAL_COMPUTE_TENSOR_TF32: return "TF32 tensor-core";
    case SG_VAL_COMPUTE_TENSOR_F16: return "FP16 tensor-core";
    case SG_VAL_COMPUTE_TENSOR_BF16: return "BF16 tensor-core";
    case SG_VAL_COMPUTE_TENSOR_FP8: return "FP8 tensor-core";
    case SG_VAL_COMPUTE_TENSOR_INT8: return "INT8 tensor-core";
    }
    return "FP32";
}

sg_val_compute sg_peaks_wanted(const sg_val_task *t, double bytes, double flops, double fp32_ridge,
                               const char **why) {
    if (t->compute != SG_VAL_COMPUTE_AUTO) {
        *why = "as the task's \"compute\" field says";
        return t->compute;
    }
    /* The narrowest floating input: what a tensor core could take. */
    int fp8 = 0, bf16 = 0, f16 = 0, f64 = 0, other = 0;
    for (int i = 0; i < t->nbuf; i++) {
        sg_val_type ty = t->buf[i].type;
        if (t->buf[i].role == SG_VAL_OUT || !sg_val_type_is_float(ty)) continue;
        fp8 |= ty == SG_VAL_FP8_E4M3 || ty == SG_VAL_FP8_E5M2;
        bf16 |= ty == SG_VAL_BF16;
        f16 |= ty == SG_VAL_F16;
        f64 |= ty == SG_VAL_F64;
        other |= ty == SG_VAL_F32;
    }
    int dense = bytes > 0 && fp32_ridge > 0 && flops / bytes > fp32_ridge;
    if (dense && (fp8 || bf16 || f16)) {
        *why = fp8    ? "for the task's fp8 inputs (a matrix product)"
               : bf16 ? "for the task's bf16 inputs (a matrix product)"
                      : "for the task's f16 inputs (a matrix product)";
        return fp8    ? SG_VAL_COMPUTE_TENSOR_FP8
               : bf16 ? SG_VAL_COMPUTE_TENSOR_BF16
                      : SG_VAL_COMPUTE_TENSOR_F16;
    }
    if (f64 && !other && !fp8 && !bf16 && !f16) {
        *why = "for the task's f64 inputs";
        return SG_VAL_COMPUTE_FP64;
    }
    *why = "";
    return SG_VAL_COMPUTE_FP32;
}

/* Datasheet figures as printed there: 989.5, 67, 1979 TFLOP/s. */
static void fmt_flops(double gflops, char *out, size_t n) {
    if (gflops >= 1000)
        snprintf(out, n, "%.6g TFLOP/s", gflops / 1000);
    else
        snprintf(out, n, "%.0f GFLOP/s", gflops);
}

void sg_peaks_choose(const sg_be_peaks *dev, const sg_val_task *t, double bytes, double flops,
                     sg_peak_choice *out) {
    memset(out, 0, sizeof *out);
    const sg_peak_entry *e =
        dev->cpu ? NULL : sg_peaks_lookup(dev->device, dev->cc_major, dev->cc_minor);
    double fp32 = e ? e->tflops[SG_VAL_COMPUTE_FP32] * 1000 : dev->fp32_gflops;
    out->gbs = e ? e->gbs : dev->gbs;
    const char *why;
    sg_val_compute want =
        sg_peaks_wanted(t, bytes, flops, out->gbs > 0 ? fp32 / out->gbs : 0, &why);
    char num[32];
    if (e && e->tflops[want] > 0) {
        out->compute = want;
        out->gflops = e->tflops[want] * 1000;
        fmt_flops(out->gflops, num, sizeof num);
        snprintf(out->label, sizeof out->label, "the %s peak of the %s, %s%s (%s)%s%s",
                 sg_peaks_compute_title(want), e->name, num,
                 want >= SG_VAL_COMPUTE_TENSOR_TF32 ? " dense" : "", e->source, *why ? ", " : "",
                 why);
        snprintf(out->bw_source, sizeof out->bw_source, "%s", e->source);
        return;
    }
    /* No figure for what the task wants: FP32 from the backend, saying why not the other. */
    out->compute = SG_VAL_COMPUTE_FP32;
    out->gflops = fp32;
    fmt_flops(out->gflops, num, sizeof num);
    char not_wanted[256] = "";
    if (want != SG_VAL_COMPUTE_FP32 && want != SG_VAL_COMPUTE_AUTO)
        snprintf(not_wanted, sizeof not_wanted, "; %s, so not the %s peak %s",
                 dev->cpu ? "a CPU has no tensor cores"
                 : e      ? "the datasheet entry has no such figure"
                          : "no datasheet entry for this GPU",
                 sg_peaks_compute_title(want), why);
    const char *name = dev->device[0] ? dev->device : "this device";
    if (dev->cpu)
        snprintf(out->label, sizeof out->label,
                 "the FP32 peak of the CPU device %s, %s (compute units x clock x vector width "
                 "x 2)%s",
                 name, num, not_wanted);
    else if (dev->cc_major)
        snprintf(out->label, sizeof out->label,
                 "the FP32 peak of the %s (sm_%d%d), %s (SMs x clock x FP32 lanes x 2)%s", name,
                 dev->cc_major, dev->cc_minor, num, not_wanted);
    else
        snprintf(out->label, sizeof out->label,
                 "the FP32 peak of the OpenCL device %s, %s (compute units x clock x vector "
                 "width x 2)%s",
                 name, num, not_wanted);
    snprintf(out->bw_source, sizeof out->bw_source, "%s",
             e               ? e->source
             : dev->cc_major ? "device attributes"
                             : "measured by device fills");
}
