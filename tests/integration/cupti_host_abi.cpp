// device/cupti_host.h (C declarations of the CUPTI Profiler Host API types, which C
// cannot include from the toolkit: cupti_profiler_host.h includes <string>) against the
// toolkit's header: every struct's size, every field's offset, the enum value and the
// structSize each call checks must be equal, or this file does not compile. C++ only
// because of that header; compiled (never run) by tests/integration/cupti_host_abi.sh.
#include <cstddef>
#include <cstdint>

namespace ours {
#include "device/cupti_host.h"
// Our structSize values, taken before the toolkit header defines the same macro names.
constexpr size_t init_size = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
constexpr size_t deinit_size = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE;
constexpr size_t add_size = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
constexpr size_t image_size_size = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
constexpr size_t image_size = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
constexpr size_t eval_size = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
} // namespace ours
#undef CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE
#undef CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE
#undef CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE
#undef CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE
#undef CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE
#undef CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE

#include <cupti_profiler_host.h>

#define SAME_FIELD(T, f)                                                                           \
    static_assert(offsetof(ours::T, f) == offsetof(::T, f) &&                                      \
                      sizeof(ours::T::f) == sizeof(::T::f),                                        \
                  #T "." #f " has another offset or size in the toolkit")
#define SAME_STRUCT(T, ours_size)                                                                  \
    static_assert(sizeof(ours::T) == sizeof(::T), #T " has another size in the toolkit");          \
    static_assert(ours::ours_size == (T##_STRUCT_SIZE), #T "_STRUCT_SIZE differs");                \
    SAME_FIELD(T, structSize);                                                                     \
    SAME_FIELD(T, pPriv)

static_assert((int)ours::CUPTI_PROFILER_TYPE_RANGE_PROFILER ==
                  (int)::CUPTI_PROFILER_TYPE_RANGE_PROFILER,
              "CUPTI_PROFILER_TYPE_RANGE_PROFILER");
static_assert(sizeof(ours::CUpti_ProfilerType) == sizeof(::CUpti_ProfilerType), "enum size");

SAME_STRUCT(CUpti_Profiler_Host_Initialize_Params, init_size);
SAME_FIELD(CUpti_Profiler_Host_Initialize_Params, profilerType);
SAME_FIELD(CUpti_Profiler_Host_Initialize_Params, pChipName);
SAME_FIELD(CUpti_Profiler_Host_Initialize_Params, pCounterAvailabilityImage);
SAME_FIELD(CUpti_Profiler_Host_Initialize_Params, pHostObject);

SAME_STRUCT(CUpti_Profiler_Host_Deinitialize_Params, deinit_size);
SAME_FIELD(CUpti_Profiler_Host_Deinitialize_Params, pHostObject);

SAME_STRUCT(CUpti_Profiler_Host_ConfigAddMetrics_Params, add_size);
SAME_FIELD(CUpti_Profiler_Host_ConfigAddMetrics_Params, pHostObject);
SAME_FIELD(CUpti_Profiler_Host_ConfigAddMetrics_Params, ppMetricNames);
SAME_FIELD(CUpti_Profiler_Host_ConfigAddMetrics_Params, numMetrics);

SAME_STRUCT(CUpti_Profiler_Host_GetConfigImageSize_Params, image_size_size);
SAME_FIELD(CUpti_Profiler_Host_GetConfigImageSize_Params, pHostObject);
SAME_FIELD(CUpti_Profiler_Host_GetConfigImageSize_Params, configImageSize);

SAME_STRUCT(CUpti_Profiler_Host_GetConfigImage_Params, image_size);
SAME_FIELD(CUpti_Profiler_Host_GetConfigImage_Params, pHostObject);
SAME_FIELD(CUpti_Profiler_Host_GetConfigImage_Params, configImageSize);
SAME_FIELD(CUpti_Profiler_Host_GetConfigImage_Params, pConfigImage);

SAME_STRUCT(CUpti_Profiler_Host_EvaluateToGpuValues_Params, eval_size);
SAME_FIELD(CUpti_Profiler_Host_EvaluateToGpuValues_Params, pHostObject);
SAME_FIELD(CUpti_Profiler_Host_EvaluateToGpuValues_Params, pCounterDataImage);
SAME_FIELD(CUpti_Profiler_Host_EvaluateToGpuValues_Params, counterDataImageSize);
SAME_FIELD(CUpti_Profiler_Host_EvaluateToGpuValues_Params, rangeIndex);
SAME_FIELD(CUpti_Profiler_Host_EvaluateToGpuValues_Params, ppMetricNames);
SAME_FIELD(CUpti_Profiler_Host_EvaluateToGpuValues_Params, numMetrics);
SAME_FIELD(CUpti_Profiler_Host_EvaluateToGpuValues_Params, pMetricValues);

// The entry points cupti_range.c dlsyms take a pointer to exactly these structs.
static_assert(sizeof(&cuptiProfilerHostInitialize) > 0 && sizeof(&cuptiProfilerHostDeinitialize) &&
                  sizeof(&cuptiProfilerHostConfigAddMetrics) &&
                  sizeof(&cuptiProfilerHostGetConfigImageSize) &&
                  sizeof(&cuptiProfilerHostGetConfigImage) &&
                  sizeof(&cuptiProfilerHostEvaluateToGpuValues),
              "the Host API functions are declared");
