// Everything measured at the user's shape that the verdict weighs: the seed in every mode, each
// candidate cause beside it, and the unit costs that turn call counts into time. All timed in this
// process, where CUPTI never attaches; the profiler and -O0 readings come from children.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <map>
#include <string>

#include "children.h"
#include "gemm_api.h"
#include "load.h"
#include "modes.h"
#include "options.h"
#include "stats.h"
#include "workload.h"

namespace co::doctor {

struct Evidence {
  double first_us = 0, second_us = 0;  // the process's first call (lazy loading) and its second
  std::string reference;               // the reference check's outcome, as printed
  // Keyed by co::mode_name (bench.h), the names Python's cutlass_overhead.Mode has too.
  std::map<std::string, ModeResult> drained, back_to_back;
  ModeResult sync_each;
  std::size_t ws_bytes = 0;  // the allocation beside each call: the workspace's size, or 1 MiB
  Spread with_alloc;
  co::KernelHandle gemm_kernel;
  Spread attr_gemm_idle, attr_empty_idle, launch_empty_idle;
  UnderLoad copy_load, kernel_load;
  Spread prof_host;  // seed host us/call with CUPTI activity attached (child)
  std::string perr;  // why that child failed, if it did
  Spread o0_host;    // the same from the -O0 sibling, where built
  std::string o0_note;
};

// Runs every measurement in the order the doctor always has; prints the reference check's line.
Evidence gather_evidence(Workload const& w, Options const& o, cudaStream_t s, Children const& children,
                         bool host_path);

// Unit costs measured here, to multiply the counts by.
struct UnitCosts {
  double lookup_us = 0, version_us = 0;
  double encode_us = 0;  // median over the "main" combo's captured encodes; 0 where none could be replayed
};
UnitCosts measure_unit_costs(Counts const& counts, Options const& o);

}  // namespace co::doctor
