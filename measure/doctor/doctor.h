// Helpers of the doctor (measure/doctor/): the baseline and load kernels, and host facts.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace co::doctor {

void const* empty_kernel_function();
cudaError_t launch_empty(cudaStream_t stream);
cudaError_t launch_spin(cudaStream_t stream, double ms);  // one block spinning for about `ms`

struct HostInfo {
  int cpus = 0;
  std::string cpu_model, governor, cur_khz, min_khz, max_khz, nvpmodel, module_loading;
};
HostInfo host_info();

}  // namespace co::doctor
