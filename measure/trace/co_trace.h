// The phase marker and the CUPTI recorder's C++ interface (libco_trace.so).
//
// The GEMM variants live in separate shared objects; all of them report the phase they are in (the steps,
// repro/phases.h) to this one library, so a single CUPTI subscriber can attribute every CUDA call to a phase.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "phases.h"

#if defined(CO_TRACE_BUILDING)
#define CO_TRACE_API __attribute__((visibility("default")))
#else
#define CO_TRACE_API
#endif

namespace co {

namespace trace {

// Sets the calling thread's current phase (read by the CUPTI callback on the same thread).
CO_TRACE_API void set_phase(Phase p) noexcept;

struct CountRow {
  std::string phase;
  std::string domain;  // "runtime" or "driver"
  std::string api;
  uint64_t count;
};

struct ActivityRecord {
  std::string kind;    // "runtime", "driver" or "kernel"
  std::string name;
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t correlation_id;
  uint32_t thread_id;
};

// Callback API: counts every runtime and driver API entry by name and phase. Every function throws on a
// CUPTI error (std::runtime_error) and on misuse (std::logic_error): starting a session while one is
// active, or stopping one that is not, is refused rather than silently cutting the outer session short.
CO_TRACE_API void start_counting();
CO_TRACE_API void stop_counting();
CO_TRACE_API std::vector<CountRow> counts();

// Activity API: API calls and kernels with timestamps on one clock. Same errors as above; stop_activity()
// also throws if CUPTI dropped records, since a timeline with holes would misplace what it shows.
CO_TRACE_API void start_activity();
CO_TRACE_API std::vector<ActivityRecord> stop_activity();

// The inputs of each cuTensorMapEncodeTiled seen while counting (up to 256), so unit costs can be
// measured on the exact descriptors CUTLASS builds.
struct EncodeInputs {
  std::string phase;
  int data_type = 0;
  uint32_t rank = 0;
  uint64_t address = 0;
  uint64_t dims[5] = {};
  uint64_t strides[4] = {};
  uint32_t box[5] = {};
  uint32_t element_strides[5] = {};
  int interleave = 0, swizzle = 0, l2_promotion = 0, oob_fill = 0;
};
CO_TRACE_API std::vector<EncodeInputs> captured_encodes();

// Mean host ns of one call of a CUDA API in isolation (see unit_costs.cu for the list).
CO_TRACE_API std::vector<std::string> unit_cost_names();
CO_TRACE_API double unit_cost_ns(std::string const& name, int iterations);
CO_TRACE_API double encode_cost_ns(EncodeInputs const& inputs, int iterations);
// Mean host ns of cudaFuncSetAttribute(function, attribute, value) where it is paid: on a GEMM's own kernel
// (a variant passes its kernel handle) or, with function == nullptr, on an empty kernel, same arguments.
CO_TRACE_API double func_attribute_ns(void const* function, int attribute, int value, int iterations);

// Work in flight on a stream of its own for about `ms` (load.cu): back-to-back pinned host-to-device copies of
// `bytes`, or one spinning kernel. The destructor waits for it, then frees what it holds.
class CO_TRACE_API Load {
 public:
  Load(bool copies, std::size_t bytes, double ms);
  ~Load();
  Load(Load const&) = delete;
  Load& operator=(Load const&) = delete;
  bool in_flight() const;
  double copy_ms() const { return copy_ms_; }  // one copy, timed before the load starts (0 for the kernel)

 private:
  void release() noexcept;
  cudaStream_t stream_ = nullptr;
  void* host_ = nullptr;
  void* device_ = nullptr;
  double copy_ms_ = 0;
};

}  // namespace trace
}  // namespace co
