// Finds the GPU before anything else touches CUDA. libcuda is loaded by hand first: the doctor does
// not link it (driver_forward.cpp), so on a machine without a driver it can still start and say so.
#include "device.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <sstream>

#include "fail.h"

namespace co::doctor {
namespace {

bool built_for(int major, int minor) {
  std::string archs = CO_DOCTOR_ARCHS;
  std::string cc = std::to_string(major * 10 + minor);
  std::stringstream ss(archs);
  for (std::string a; std::getline(ss, a, ',');) {
    if (!a.empty() && a.back() == 'a') a.pop_back();
    if (a == cc) return true;
  }
  return false;
}

}  // namespace

Device find_gpu() {
  if (dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    die(3, "no NVIDIA driver on this machine (libcuda.so.1 cannot be loaded), so there is no GPU to diagnose");
  }
  Device d;
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    die(3, std::string("no usable CUDA GPU is visible (cudaGetDeviceCount: ") +
               (e == cudaSuccess ? "0 devices" : cudaGetErrorName(e)) + ")");
  }
  check(cudaGetDevice(&d.id), "cudaGetDevice");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, d.id), "cudaGetDeviceProperties");
  d.name = prop.name, d.major = prop.major, d.minor = prop.minor;
  check(cudaDriverGetVersion(&d.driver), "cudaDriverGetVersion");
  check(cudaRuntimeGetVersion(&d.runtime), "cudaRuntimeGetVersion");
  return d;
}

void require_built_for(Device const& d) {
  if (!built_for(d.major, d.minor)) {
    die(2, std::string("this doctor (") + CO_VARIANT_NAME + ") is built for sm_" + CO_DOCTOR_ARCHS + "; " + d.name +
               " is sm_" + std::to_string(d.major) + std::to_string(d.minor) +
               ". Run cutlass-overhead-doctor, which picks the binary for this GPU.");
  }
}

}  // namespace co::doctor
