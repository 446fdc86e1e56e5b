// Which GEMM this doctor drives. Every source of a doctor executable is compiled once per executable
// (cmake/Doctor.cmake) with CO_DOCTOR_KIND_<kind> defined, so `api` names that variant's functions
// (repro/gemm_api.h) in whichever doctor file includes this header.
#pragma once

#include "gemm_api.h"

namespace co::doctor {

#if defined(CO_DOCTOR_KIND_nvfp4)
namespace api = co::nvfp4;
inline constexpr bool kNvfp4 = true;
#else
namespace api = co::sm90;
inline constexpr bool kNvfp4 = false;
#endif

// Printed, and written to the JSON, wherever the measurement-only NVFP4 build on sm_90 reports.
inline constexpr char kHostPathLabel[] = "host path on Hopper, no tensor-core math (never a Blackwell number)";

}  // namespace co::doctor
