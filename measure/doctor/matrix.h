// --matrix: every built config x epilogue at the user's N and K (counts, host time per mode,
// workspace), get_workspace_size over M, and on the SM90 twin what capturing each call costs.
#pragma once

#include <cuda_runtime_api.h>

#include "children.h"
#include "json.h"
#include "options.h"

namespace co::doctor {

// Prints the table and appends "matrix", "workspace_by_m" (and "capture_cost") to J.
void run_matrix(Options const& o, cudaStream_t s, Counts const& counts, JsonFields& J);

}  // namespace co::doctor
