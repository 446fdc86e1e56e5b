// The GEMM's operands at one shape, filled with known values (small integers, every scale factor 1.0)
// so that a double-precision reference on the host can check sampled outputs. Owns its device buffers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "options.h"
#include "rotation.h"  // co::DeviceBuffer
#include "variant.h"

namespace co::doctor {

class Workload {
 public:
  explicit Workload(Options const& o);

  // 256 sampled outputs against a double-precision reference; returns the number that differ and
  // describes the first of them in *detail.
  int check_reference(std::string* detail) const;

  void run(cudaStream_t s) const { api::run_seed(ops, s); }
  co::BenchResult bench(co::BenchOptions const& o) const { return api::bench(ops, o); }
  std::size_t workspace() const { return api::workspace_bytes(ops); }
  std::size_t params() const;

  api::Operands ops;

 private:
  void* device_copy(void const* host, std::size_t bytes);  // zero-filled where host is null
  float element_at(std::vector<uint8_t> const& host, int row, int kk) const;
  void* out() const;

  std::vector<uint8_t> a_host_, b_host_;  // NVFP4: packed e2m1; SM90: bf16 as bytes
  int m_ = 0, n_ = 0, k_ = 0;
  std::vector<co::DeviceBuffer> buffers_;  // every pointer in ops
};

}  // namespace co::doctor
