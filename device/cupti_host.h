/* cupti_host.h — the few types of the CUPTI Profiler Host API that cupti_range.c uses
 * (internal).
 *
 * Contract: cupti_profiler_host.h includes the C++ <string> header, so C cannot include
 * it; these declarations copy the layout of the CUDA 13 header (struct, field order,
 * enum value, the _STRUCT_SIZE each call checks). tests/integration/cupti_host_abi.sh
 * compiles tests/integration/cupti_host_abi.cpp, which asserts that every size and
 * offset here equals the toolkit header's. */
#ifndef SG_CUPTI_HOST_H
#define SG_CUPTI_HOST_H

#include <stddef.h>
#include <stdint.h>

typedef enum { CUPTI_PROFILER_TYPE_RANGE_PROFILER = 0 } CUpti_ProfilerType;
typedef struct CUpti_Profiler_Host_Object CUpti_Profiler_Host_Object;
typedef struct CUpti_Profiler_Host_Initialize_Params {
    size_t structSize;
    void *pPriv;
    CUpti_ProfilerType profilerType;
    const char *pChipName;
    const uint8_t *pCounterAvailabilityImage;
    CUpti_Profiler_Host_Object *pHostObject;
} CUpti_Profiler_Host_Initialize_Params;
typedef struct CUpti_Profiler_Host_Deinitialize_Params {
    size_t structSize;
    void *pPriv;
    CUpti_Profiler_Host_Object *pHostObject;
} CUpti_Profiler_Host_Deinitialize_Params;
typedef struct CUpti_Profiler_Host_ConfigAddMetrics_Params {
    size_t structSize;
    void *pPriv;
    CUpti_Profiler_Host_Object *pHostObject;
    const char **ppMetricNames;
    size_t numMetrics;
} CUpti_Profiler_Host_ConfigAddMetrics_Params;
typedef struct CUpti_Profiler_Host_GetConfigImageSize_Params {
    size_t structSize;
    void *pPriv;
    CUpti_Profiler_Host_Object *pHostObject;
    size_t configImageSize;
} CUpti_Profiler_Host_GetConfigImageSize_Params;
typedef struct CUpti_Profiler_Host_GetConfigImage_Params {
    size_t structSize;
    void *pPriv;
    CUpti_Profiler_Host_Object *pHostObject;
    size_t configImageSize;
    uint8_t *pConfigImage;
} CUpti_Profiler_Host_GetConfigImage_Params;
typedef struct CUpti_Profiler_Host_EvaluateToGpuValues_Params {
    size_t structSize;
    void *pPriv;
    CUpti_Profiler_Host_Object *pHostObject;
    const uint8_t *pCounterDataImage;
    size_t counterDataImageSize;
    size_t rangeIndex;
    const char **ppMetricNames;
    size_t numMetrics;
    double *pMetricValues;
} CUpti_Profiler_Host_EvaluateToGpuValues_Params;
/* structSize of each params struct: up to and including the last field CUDA 13 knows. */
#define SG_CUPTI_HOST_SIZE(t, last) (offsetof(t, last) + sizeof(((t *)0)->last))
#define CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE                                          \
    SG_CUPTI_HOST_SIZE(CUpti_Profiler_Host_Initialize_Params, pHostObject)
#define CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE                                        \
    SG_CUPTI_HOST_SIZE(CUpti_Profiler_Host_Deinitialize_Params, pHostObject)
#define CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE                                    \
    SG_CUPTI_HOST_SIZE(CUpti_Profiler_Host_ConfigAddMetrics_Params, numMetrics)
#define CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE                                  \
    SG_CUPTI_HOST_SIZE(CUpti_Profiler_Host_GetConfigImageSize_Params, configImageSize)
#define CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE                                      \
    SG_CUPTI_HOST_SIZE(CUpti_Profiler_Host_GetConfigImage_Params, pConfigImage)
#define CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE                                 \
    SG_CUPTI_HOST_SIZE(CUpti_Profiler_Host_EvaluateToGpuValues_Params, pMetricValues)

#endif
