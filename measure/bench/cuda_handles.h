// Owning handles for the CUDA runtime objects a benchmark creates (events, streams, graphs), and the
// one check every CUDA call goes through. A handle is released on every path out of its scope,
// exceptions included, so a failed timed loop leaks nothing.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <utility>

#include "bench.h"

namespace co {

inline void cuda_check(cudaError_t e, char const* what) {
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear a non-sticky error so the next, unrelated call does not report it again
    throw CudaError(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
  }
}

// Move-only owner of one handle; Destroy's status is ignored because a destructor cannot report it.
template <class Handle, cudaError_t (*Destroy)(Handle)>
class CudaHandle {
 public:
  CudaHandle() = default;
  explicit CudaHandle(Handle h) : h_(h) {}
  CudaHandle(CudaHandle&& other) noexcept : h_(std::exchange(other.h_, nullptr)) {}
  CudaHandle& operator=(CudaHandle&& other) noexcept {
    if (this != &other) {
      reset();
      h_ = std::exchange(other.h_, nullptr);
    }
    return *this;
  }
  CudaHandle(CudaHandle const&) = delete;
  CudaHandle& operator=(CudaHandle const&) = delete;
  ~CudaHandle() { reset(); }

  Handle get() const { return h_; }
  Handle* out() {  // for the create call: cudaEventCreate(handle.out())
    reset();
    return &h_;
  }
  void reset() {
    if (h_ != nullptr) Destroy(std::exchange(h_, nullptr));
  }

 private:
  Handle h_ = nullptr;
};

using Event = CudaHandle<cudaEvent_t, cudaEventDestroy>;
using Stream = CudaHandle<cudaStream_t, cudaStreamDestroy>;
using Graph = CudaHandle<cudaGraph_t, cudaGraphDestroy>;
using GraphExec = CudaHandle<cudaGraphExec_t, cudaGraphExecDestroy>;

inline Event make_event() {
  Event e;
  cuda_check(cudaEventCreate(e.out()), "cudaEventCreate");
  return e;
}

inline Stream make_stream() {
  Stream s;
  cuda_check(cudaStreamCreateWithFlags(s.out(), cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  return s;
}

// Ends a stream capture that an exception interrupted, so the stream is usable again.
class CaptureGuard {
 public:
  CaptureGuard(cudaStream_t stream, cudaStreamCaptureMode mode) : stream_(stream) {
    cuda_check(cudaStreamBeginCapture(stream, mode), "cudaStreamBeginCapture");
  }
  CaptureGuard(CaptureGuard const&) = delete;
  CaptureGuard& operator=(CaptureGuard const&) = delete;
  Graph end() {
    Graph g;
    capturing_ = false;
    cuda_check(cudaStreamEndCapture(stream_, g.out()), "cudaStreamEndCapture");
    return g;
  }
  ~CaptureGuard() {
    if (capturing_) {
      cudaGraph_t dropped = nullptr;
      if (cudaStreamEndCapture(stream_, &dropped) == cudaSuccess && dropped) cudaGraphDestroy(dropped);
      cudaGetLastError();
    }
  }

 private:
  cudaStream_t stream_;
  bool capturing_ = true;
};

}  // namespace co
