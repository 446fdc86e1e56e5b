// Host-only CuTe/CUTLASS template code for tests/test_inspect_binary.py: g++ compiles it at -O0 and -O3
// (no nvcc), and `cutlass-overhead-doctor --inspect` must tell the two apart.
#include <cute/tensor.hpp>
#include <cutlass/numeric_types.h>

#include <cstdio>

extern "C" int cute_host_entry() {
  using namespace cute;
  auto layout = make_layout(make_shape(Int<8>{}, 16), make_stride(Int<1>{}, 8));
  float data[8 * 16] = {};
  Tensor t = make_tensor(&data[0], layout);
  for (int i = 0; i < size(t); ++i) t(i) = static_cast<float>(i);
  auto tiled = zipped_divide(layout, make_shape(Int<4>{}, Int<4>{}));
  cutlass::half_t h(t(3));
  std::printf("%d %d %f\n", int(size(tiled)), int(cosize(layout)), float(h));
  return 0;
}

#ifndef CUTE_HOST_SHARED
int main() { return cute_host_entry(); }
#endif
