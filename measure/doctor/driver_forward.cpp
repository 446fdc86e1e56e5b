// CUTLASS 4.3.x calls cuDriverGetVersion by name. The doctor does not link libcuda (so that it can
// start, and say so, where there is no driver); this definition forwards the call to the driver's own
// entry point, so CUPTI still sees every call the seed makes.
#include <cuda.h>
#include <dlfcn.h>

extern "C" CUresult CUDAAPI cuDriverGetVersion(int* version) {
  using Fn = CUresult (*)(int*);
  static Fn real = [] {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    return lib ? reinterpret_cast<Fn>(dlsym(lib, "cuDriverGetVersion")) : nullptr;
  }();
  return real ? real(version) : CUDA_ERROR_NO_DEVICE;
}
