// Python module _device: what the report needs from the GPU without torch. Device arrays the module
// allocates and frees itself (DLPack, so every variant module accepts them), a non-blocking stream,
// the device's name and architecture, and the NVFP4 operand layout (one formula, in repro/gemm_api.h).
#include <cuda_runtime_api.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda_handles.h"
#include "gemm_api.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

// Arrays this module returns carry the array_api framework tag (nanobind >= 2.10): Python gets a nanobind.nb_ndarray, which
// implements __dlpack__ and can be passed to the variant modules any number of times. Without a tag an
// older nanobind returns a bare DLPack capsule, which no nanobind function accepts as an ndarray argument.
using DeviceArray = nb::ndarray<nb::array_api, nb::device::cuda, nb::c_contig>;
// Arguments: any C-contiguous CUDA array (torch, cupy, or one of the above).
using DeviceArrayArg = nb::ndarray<nb::device::cuda, nb::c_contig>;

// The element types the variant modules take: bf16 operands, and bytes for packed e2m1 / ue4m3.
nb::dlpack::dtype dtype_of(std::string const& name) {
  if (name == "bfloat16") return {static_cast<uint8_t>(nb::dlpack::dtype_code::Bfloat), 16, 1};
  if (name == "uint8") return nb::dtype<uint8_t>();
  throw nb::value_error(("dtype must be 'bfloat16' or 'uint8', got '" + name + "'").c_str());
}

// A fresh device allocation of `shape` elements of `dtype`, owned by the returned array: freed with
// cudaFree when the last Python reference goes.
DeviceArray device_array(std::vector<size_t> const& shape, nb::dlpack::dtype dtype) {
  size_t count = 1;
  for (size_t extent : shape) {
    if (extent == 0) throw nb::value_error("every extent must be positive");
    count *= extent;
  }
  int device = 0;
  co::cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  void* data = nullptr;
  co::cuda_check(cudaMalloc(&data, count * dtype.bits / 8), "cudaMalloc");
  // The status of cudaFree is ignored: a deleter cannot raise, and at interpreter exit the runtime
  // may already be unloading (cudaErrorCudartUnloading), when there is nothing left to free.
  nb::capsule owner(data, [](void* p) noexcept { cudaFree(p); });
  return DeviceArray(data, shape.size(), shape.data(), owner, nullptr, dtype, nb::device::cuda::value, device);
}

// One ue4m3 scale factor per this many elements of K, as the one formula (co::nvfp4::scale_bytes) states
// it: the smallest K that takes a scale factor.
constexpr int64_t kScaleBlock = [] {
  int64_t k = 1;
  while (co::nvfp4::scale_bytes(1, k) == 0) ++k;
  return k;
}();

// An int argument in [1, INT32_MAX] (the GEMMs' int M, N, K), or a one-line TypeError/ValueError naming it:
// nanobind's own conversion error would list the signature, and -500 would pass as a negative size.
int64_t extent_arg(nb::handle value, char const* name) {
  if (!PyIndex_Check(value.ptr()) || PyBool_Check(value.ptr())) {  // int, numpy integers; not bool or float
    throw nb::type_error((std::string(name) + " must be an int, got " + nb::type_name(value.type()).c_str()).c_str());
  }
  nb::object index = nb::steal(PyNumber_Index(value.ptr()));
  if (!index.is_valid()) throw nb::python_error();
  int64_t v = 0;
  if (!nb::try_cast<int64_t>(index, v) || v < 1 || v > INT32_MAX) {
    throw nb::value_error((std::string(name) + " must be an integer in [1, " + std::to_string(INT32_MAX) + "], got " +
                           nb::str(value).c_str()).c_str());
  }
  return v;
}

int64_t scale_bytes_arg(nb::handle rows, nb::handle k) {
  int64_t r = extent_arg(rows, "rows"), kk = extent_arg(k, "k");
  if (kk % kScaleBlock != 0) {
    throw nb::value_error(("k must be a multiple of " + std::to_string(kScaleBlock) + " (one ue4m3 scale factor per " +
                           std::to_string(kScaleBlock) + " elements), got " + std::to_string(kk)).c_str());
  }
  return co::nvfp4::scale_bytes(r, kk);
}

class Stream {
 public:
  Stream() : stream_(co::make_stream()) {}
  uintptr_t handle() const { return reinterpret_cast<uintptr_t>(stream_.get()); }
  void synchronize() const { co::cuda_check(cudaStreamSynchronize(stream_.get()), "cudaStreamSynchronize"); }

 private:
  co::Stream stream_;
};

nb::dict device_info() {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError();
    // cudaErrorInsufficientDriver is also what a machine without any NVIDIA driver reports.
    std::string why = e == cudaSuccess ? "no device" : std::string(cudaGetErrorName(e));
    throw std::runtime_error("no CUDA GPU is visible (cudaGetDeviceCount: " + why +
                             "; on a machine without an NVIDIA GPU or driver this is expected)");
  }
  int device = 0, driver = 0, runtime = 0;
  co::cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp prop{};
  co::cuda_check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  co::cuda_check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  co::cuda_check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  co::cuda_check(cudaFree(nullptr), "cudaFree(nullptr) to create the context");
  nb::dict d;
  d["device"] = device;
  d["name"] = std::string(prop.name);
  d["major"] = prop.major;
  d["minor"] = prop.minor;
  d["driver_api"] = driver;
  d["runtime"] = runtime;
  return d;
}

}  // namespace

NB_MODULE(_device, m) {
  m.doc() = "Device buffers, a stream and GPU facts for the report without torch; the NVFP4 operand layout.";

  m.def("nvfp4_scale_bytes", &scale_bytes_arg, "rows"_a, "k"_a,
        "Bytes of one operand's ue4m3 scale factors in CUTLASS's Sm1xx block-scaled layout (rows >= 1, K a "
        "positive multiple of the scale block).");

  m.def("device_info", &device_info,
        "{device, name, major, minor, driver_api, runtime} of the current device; RuntimeError without a GPU.");

  m.def("empty", [](std::vector<size_t> shape, std::string const& dtype) { return device_array(shape, dtype_of(dtype)); },
        "shape"_a, "dtype"_a, "An uninitialized device array ('bfloat16' or 'uint8') this module allocated.");

  m.def("full", [](std::vector<size_t> shape, std::string const& dtype, uint8_t byte) {
        DeviceArray a = device_array(shape, dtype_of(dtype));
        co::cuda_check(cudaMemset(a.data(), byte, a.nbytes()), "cudaMemset");
        return a;
      }, "shape"_a, "dtype"_a, "byte"_a, "A device array with every byte set to `byte`.");

  m.def("from_host", [](nb::ndarray<nb::numpy, nb::c_contig, nb::device::cpu> host, std::string const& dtype) {
        nb::dlpack::dtype t = dtype_of(dtype);
        if (host.itemsize() * 8 != t.bits) {
          throw nb::value_error(("the host array's items are " + std::to_string(host.itemsize()) + " bytes; " +
                                 dtype + " needs " + std::to_string(t.bits / 8)).c_str());
        }
        std::vector<size_t> shape(host.shape_ptr(), host.shape_ptr() + host.ndim());
        DeviceArray a = device_array(shape, t);
        co::cuda_check(cudaMemcpy(a.data(), host.data(), host.nbytes(), cudaMemcpyHostToDevice), "cudaMemcpy");
        return a;
      }, "host"_a, "dtype"_a,
      "A device copy of a C-contiguous numpy array whose items have dtype's size (bf16: the uint16 bit patterns).");

  m.def("to_host", [](DeviceArrayArg a) {
        std::vector<size_t> shape(a.shape_ptr(), a.shape_ptr() + a.ndim());
        auto* out = new uint8_t[a.nbytes()];
        nb::capsule owner(out, [](void* p) noexcept { delete[] static_cast<uint8_t*>(p); });
        size_t item = a.itemsize();
        shape.push_back(item);  // bytes of each element as a last axis: the caller views them as it likes
        co::cuda_check(cudaMemcpy(out, a.data(), a.nbytes(), cudaMemcpyDeviceToHost), "cudaMemcpy");
        return nb::ndarray<nb::numpy, uint8_t>(out, shape.size(), shape.data(), owner);
      }, "array"_a, "The bytes of a device array, as a numpy uint8 array with one more axis (the item's bytes).");

  nb::class_<Stream>(m, "Stream", "A non-blocking CUDA stream, destroyed with the object.")
      .def(nb::init<>())
      .def_prop_ro("handle", &Stream::handle, "The cudaStream_t as an integer.")
      .def("__cuda_stream__", [](Stream const& s) { return std::make_tuple(0, s.handle()); })
      .def("synchronize", &Stream::synchronize, nb::call_guard<nb::gil_scoped_release>());
}
