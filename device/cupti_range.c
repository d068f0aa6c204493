/* Hardware metrics through the CUPTI Range Profiler and Profiler Host API (CUDA 12.6+):
 * one auto range per kernel launch, kernel replay (CUPTI saves and restores memory
 * between passes), metrics named as in Nsight Compute. See cupti.h. Written against the
 * CUDA 13 headers; it has not run on a GPU yet (the machine it was written on has none),
 * which docs/profiler.md says too. */
#include "device/cupti.h"

#include "common/buf.h"
#include "common/cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(SG_HAVE_CUDA_H) && __has_include(<cupti_range_profiler.h>)
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include "device/cupti_host.h"

#define MAX_RANGES 16
#define SHOW_RANGES 4

/* Memory-bound vs compute-bound, occupancy, cache: what the diagnosis needs. */
static const char *const metric_names[] = {
    "gpu__time_duration.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "lts__t_sector_hit_rate.pct",
};
#define NMETRICS (sizeof metric_names / sizeof *metric_names)

typedef struct rp_api {
    CUptiResult (*init)(CUpti_Profiler_Initialize_Params *);
    CUptiResult (*deinit)(CUpti_Profiler_DeInitialize_Params *);
    CUptiResult (*chip)(CUpti_Device_GetChipName_Params *);
    CUptiResult (*avail)(CUpti_Profiler_GetCounterAvailability_Params *);
    CUptiResult (*host_init)(CUpti_Profiler_Host_Initialize_Params *);
    CUptiResult (*host_deinit)(CUpti_Profiler_Host_Deinitialize_Params *);
    CUptiResult (*add)(CUpti_Profiler_Host_ConfigAddMetrics_Params *);
    CUptiResult (*config_size)(CUpti_Profiler_Host_GetConfigImageSize_Params *);
    CUptiResult (*config)(CUpti_Profiler_Host_GetConfigImage_Params *);
    CUptiResult (*eval)(CUpti_Profiler_Host_EvaluateToGpuValues_Params *);
    CUptiResult (*enable)(CUpti_RangeProfiler_Enable_Params *);
    CUptiResult (*disable)(CUpti_RangeProfiler_Disable_Params *);
    CUptiResult (*data_size)(CUpti_RangeProfiler_GetCounterDataSize_Params *);
    CUptiResult (*data_init)(CUpti_RangeProfiler_CounterDataImage_Initialize_Params *);
    CUptiResult (*set_config)(CUpti_RangeProfiler_SetConfig_Params *);
    CUptiResult (*start)(CUpti_RangeProfiler_Start_Params *);
    CUptiResult (*stop)(CUpti_RangeProfiler_Stop_Params *);
    CUptiResult (*decode)(CUpti_RangeProfiler_DecodeData_Params *);
    CUptiResult (*data_info)(CUpti_RangeProfiler_GetCounterDataInfo_Params *);
    CUptiResult (*errstr)(CUptiResult, const char **);
} rp_api;

struct sg_cupti_metrics {
    rp_api a;
    int initialized;
    CUpti_Profiler_Host_Object *host;
    CUpti_RangeProfiler_Object *obj;
    uint8_t *avail, *config, *data;
    size_t data_size;
};

static int fail(sg_cupti_metrics *m, sg_err *err, const char *what, CUptiResult r) {
    const char *s = NULL;
    if (m->a.errstr) m->a.errstr(r, &s);
    return sg_errf(err, "metrics unavailable: CUPTI %s failed: %s (error %d)", what,
                   s ? s : "unknown", (int)r);
}

static void release(sg_cupti_metrics *m) {
    if (m->obj) {
        CUpti_RangeProfiler_Disable_Params p = {.structSize =
                                                    CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
        p.pRangeProfilerObject = m->obj;
        m->a.disable(&p);
    }
    if (m->host) {
        CUpti_Profiler_Host_Deinitialize_Params p = {
            .structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
        p.pHostObject = m->host;
        m->a.host_deinit(&p);
    }
    if (m->initialized) {
        CUpti_Profiler_DeInitialize_Params p = {.structSize =
                                                    CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
        m->a.deinit(&p);
    }
    free(m->avail);
    free(m->config);
    free(m->data);
    free(m);
}

static int load(sg_cupti_metrics *m, sg_err *err) {
    rp_api *a = &m->a;
    const sg_dl_sym syms[] = {
        {"cuptiProfilerInitialize", (void **)&a->init, 0},
        {"cuptiProfilerDeInitialize", (void **)&a->deinit, 0},
        {"cuptiDeviceGetChipName", (void **)&a->chip, 0},
        {"cuptiProfilerGetCounterAvailability", (void **)&a->avail, 0},
        {"cuptiProfilerHostInitialize", (void **)&a->host_init, 0},
        {"cuptiProfilerHostDeinitialize", (void **)&a->host_deinit, 0},
        {"cuptiProfilerHostConfigAddMetrics", (void **)&a->add, 0},
        {"cuptiProfilerHostGetConfigImageSize", (void **)&a->config_size, 0},
        {"cuptiProfilerHostGetConfigImage", (void **)&a->config, 0},
        {"cuptiProfilerHostEvaluateToGpuValues", (void **)&a->eval, 0},
        {"cuptiRangeProfilerEnable", (void **)&a->enable, 0},
        {"cuptiRangeProfilerDisable", (void **)&a->disable, 0},
        {"cuptiRangeProfilerGetCounterDataSize", (void **)&a->data_size, 0},
        {"cuptiRangeProfilerCounterDataImageInitialize", (void **)&a->data_init, 0},
        {"cuptiRangeProfilerSetConfig", (void **)&a->set_config, 0},
        {"cuptiRangeProfilerStart", (void **)&a->start, 0},
        {"cuptiRangeProfilerStop", (void **)&a->stop, 0},
        {"cuptiRangeProfilerDecodeData", (void **)&a->decode, 0},
        {"cuptiRangeProfilerGetCounterDataInfo", (void **)&a->data_info, 0},
        {"cuptiGetResultString", (void **)&a->errstr, 1},
        {NULL, NULL, 0}};
    if (sg_cuda_cupti_resolve(syms, err) == 0) return 0;
    return sg_err_prefix(err, "metrics unavailable: no CUPTI Range Profiler (CUDA 12.6+)");
}

/* Host side: chip, counter availability, metrics -> config image. */
static int configure(sg_cupti_metrics *m, void *ctx, int device, sg_err *err) {
    rp_api *a = &m->a;
    CUptiResult r;
    CUpti_Profiler_Initialize_Params ip = {.structSize =
                                               CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    if ((r = a->init(&ip)) != CUPTI_SUCCESS) return fail(m, err, "cuptiProfilerInitialize", r);
    m->initialized = 1;
    CUpti_Device_GetChipName_Params cp = {.structSize =
                                              CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    cp.deviceIndex = (size_t)device;
    if ((r = a->chip(&cp)) != CUPTI_SUCCESS) return fail(m, err, "cuptiDeviceGetChipName", r);
    CUpti_Profiler_GetCounterAvailability_Params av = {
        .structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
    av.ctx = (CUcontext)ctx;
    if ((r = a->avail(&av)) != CUPTI_SUCCESS)
        return fail(m, err, "cuptiProfilerGetCounterAvailability", r);
    m->avail = sg_xcalloc(av.counterAvailabilityImageSize + 1, 1);
    av.pCounterAvailabilityImage = m->avail;
    if ((r = a->avail(&av)) != CUPTI_SUCCESS)
        return fail(m, err, "cuptiProfilerGetCounterAvailability", r);
    CUpti_Profiler_Host_Initialize_Params hp = {
        .structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    hp.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    hp.pChipName = cp.pChipName;
    hp.pCounterAvailabilityImage = m->avail;
    if ((r = a->host_init(&hp)) != CUPTI_SUCCESS)
        return fail(m, err, "cuptiProfilerHostInitialize", r);
    m->host = hp.pHostObject;
    CUpti_Profiler_Host_ConfigAddMetrics_Params am = {
        .structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    am.pHostObject = m->host;
    am.ppMetricNames = (const char **)metric_names;
    am.numMetrics = NMETRICS;
    if ((r = a->add(&am)) != CUPTI_SUCCESS)
        return fail(m, err, "cuptiProfilerHostConfigAddMetrics", r);
    CUpti_Profiler_Host_GetConfigImageSize_Params cs = {
        .structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    cs.pHostObject = m->host;
    if ((r = a->config_size(&cs)) != CUPTI_SUCCESS)
        return fail(m, err, "cuptiProfilerHostGetConfigImageSize", r);
    m->config = sg_xcalloc(cs.configImageSize + 1, 1);
    CUpti_Profiler_Host_GetConfigImage_Params ci = {
        .structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    ci.pHostObject = m->host;
    ci.configImageSize = cs.configImageSize;
    ci.pConfigImage = m->config;
    if ((r = a->config(&ci)) != CUPTI_SUCCESS)
        return fail(m, err, "cuptiProfilerHostGetConfigImage", r);
    /* Target side: range profiler on the context, counter data image, config. */
    CUpti_RangeProfiler_Enable_Params ep = {.structSize =
                                                CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    ep.ctx = (CUcontext)ctx;
    if ((r = a->enable(&ep)) != CUPTI_SUCCESS) return fail(m, err, "cuptiRangeProfilerEnable", r);
    m->obj = ep.pRangeProfilerObject;
    CUpti_RangeProfiler_GetCounterDataSize_Params ds = {
        .structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    ds.pRangeProfilerObject = m->obj;
    ds.pMetricNames = (const char **)metric_names;
    ds.numMetrics = NMETRICS;
    ds.maxNumOfRanges = MAX_RANGES;
    ds.maxNumRangeTreeNodes = MAX_RANGES;
    if ((r = a->data_size(&ds)) != CUPTI_SUCCESS)
        return fail(m, err, "cuptiRangeProfilerGetCounterDataSize", r);
    m->data_size = ds.counterDataSize;
    m->data = sg_xcalloc(m->data_size + 1, 1);
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params di = {
        .structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    di.pRangeProfilerObject = m->obj;
    di.counterDataSize = m->data_size;
    di.pCounterData = m->data;
    if ((r = a->data_init(&di)) != CUPTI_SUCCESS)
        return fail(m, err, "cuptiRangeProfilerCounterDataImageInitialize", r);
    CUpti_RangeProfiler_SetConfig_Params sc = {
        .structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
    sc.pRangeProfilerObject = m->obj;
    sc.configSize = cs.configImageSize;
    sc.pConfig = m->config;
    sc.counterDataImageSize = m->data_size;
    sc.pCounterDataImage = m->data;
    sc.range = CUPTI_AutoRange;
    sc.replayMode = CUPTI_KernelReplay;
    sc.maxRangesPerPass = MAX_RANGES;
    sc.numNestingLevels = 1;
    sc.minNestingLevel = 1;
    sc.passIndex = 0;
    sc.targetNestingLevel = 1;
    if ((r = a->set_config(&sc)) != CUPTI_SUCCESS)
        return fail(m, err, "cuptiRangeProfilerSetConfig", r);
    CUpti_RangeProfiler_Start_Params st = {.structSize =
                                               CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
    st.pRangeProfilerObject = m->obj;
    if ((r = a->start(&st)) != CUPTI_SUCCESS) return fail(m, err, "cuptiRangeProfilerStart", r);
    return 0;
}

int sg_cupti_metrics_begin(sg_cupti_metrics **out, void *ctx, int device, sg_err *err) {
    sg_cupti_metrics *m = sg_xcalloc(1, sizeof *m);
    if (load(m, err) < 0 || configure(m, ctx, device, err) < 0) {
        release(m);
        return -1;
    }
    *out = m;
    return 0;
}

static int collect(sg_cupti_metrics *m, char *out, size_t n, sg_err *err) {
    rp_api *a = &m->a;
    CUptiResult r;
    CUpti_RangeProfiler_Stop_Params sp = {.structSize =
                                              CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
    sp.pRangeProfilerObject = m->obj;
    if ((r = a->stop(&sp)) != CUPTI_SUCCESS) return fail(m, err, "cuptiRangeProfilerStop", r);
    CUpti_RangeProfiler_DecodeData_Params dp = {
        .structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    dp.pRangeProfilerObject = m->obj;
    if ((r = a->decode(&dp)) != CUPTI_SUCCESS)
        return fail(m, err, "cuptiRangeProfilerDecodeData", r);
    CUpti_RangeProfiler_GetCounterDataInfo_Params ip = {
        .structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
    ip.pCounterDataImage = m->data;
    ip.counterDataImageSize = m->data_size;
    if ((r = a->data_info(&ip)) != CUPTI_SUCCESS)
        return fail(m, err, "cuptiRangeProfilerGetCounterDataInfo", r);
    if (!ip.numTotalRanges) return sg_errf(err, "metrics unavailable: no kernel was profiled");
    sg_buf b = {0};
    for (size_t i = 0; i < ip.numTotalRanges && i < SHOW_RANGES; i++) {
        double v[NMETRICS] = {0};
        CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {
            .structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
        ev.pHostObject = m->host;
        ev.pCounterDataImage = m->data;
        ev.counterDataImageSize = m->data_size;
        ev.rangeIndex = i;
        ev.ppMetricNames = (const char **)metric_names;
        ev.numMetrics = NMETRICS;
        ev.pMetricValues = v;
        if ((r = a->eval(&ev)) != CUPTI_SUCCESS) {
            sg_buf_free(&b);
            return fail(m, err, "cuptiProfilerHostEvaluateToGpuValues", r);
        }
        sg_buf_printf(&b,
                      "%slaunch %zu: %.1f us, dram__throughput %.0f%% of peak, sm__throughput "
                      "%.0f%%, achieved occupancy %.0f%%, L2 hit rate %.0f%%",
                      i ? "; " : "", i + 1, v[0] / 1e3, v[1], v[2], v[3], v[4]);
    }
    if (ip.numTotalRanges > SHOW_RANGES)
        sg_buf_printf(&b, "; %zu more launches", ip.numTotalRanges - SHOW_RANGES);
    snprintf(out, n, "%s", b.data);
    sg_buf_free(&b);
    return 0;
}

int sg_cupti_metrics_end(sg_cupti_metrics *m, char *out, size_t n, sg_err *err) {
    int rc = collect(m, out, n, err);
    release(m);
    return rc;
}

#else

int sg_cupti_metrics_begin(sg_cupti_metrics **out, void *ctx, int device, sg_err *err) {
    return sg_errf(err, "metrics unavailable: built without the CUPTI Range Profiler headers "
                        "(CUDA 12.6+)");
}
int sg_cupti_metrics_end(sg_cupti_metrics *m, char *out, size_t n, sg_err *err) {
    return sg_errf(err, "metrics unavailable");
}
#endif
