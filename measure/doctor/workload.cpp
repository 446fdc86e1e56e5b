// Operands with known values and the reference check, for either GEMM (NVFP4 or the SM90 bf16 twin).
#include "workload.h"

#include <cmath>
#include <cstring>
#include <random>

#include "fail.h"

namespace co::doctor {
namespace {

float bf16_to_float(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t float_to_bf16(float f) {  // exact for the small integers used here
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>(u >> 16);
}
[[maybe_unused]] float e2m1(unsigned nibble) {
  static constexpr float kMag[8] = {0.f, 0.5f, 1.f, 1.5f, 2.f, 3.f, 4.f, 6.f};
  return (nibble & 8 ? -1.f : 1.f) * kMag[nibble & 7];
}

}  // namespace

void* Workload::device_copy(void const* host, std::size_t bytes) {
  void* p = nullptr;
  check(cudaMalloc(&p, bytes ? bytes : 16), "cudaMalloc");
  buffers_.emplace_back(p);
  if (bytes && host) check(cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  if (bytes && !host) check(cudaMemset(p, 0, bytes), "cudaMemset");
  return p;
}

Workload::Workload(Options const& o) : m_(o.m), n_(o.n), k_(o.k) {
  std::mt19937 rng(1234);
  ops.m = m_, ops.n = n_, ops.k = k_;
#if defined(CO_DOCTOR_KIND_nvfp4)
  a_host_.resize(std::size_t(m_) * k_ / 2);
  b_host_.resize(std::size_t(n_) * k_ / 2);
  for (auto& x : a_host_) x = static_cast<uint8_t>(rng());
  for (auto& x : b_host_) x = static_cast<uint8_t>(rng());
  // Every scale factor 1.0 (ue4m3 0x38): the reference then needs no knowledge of their swizzle.
  std::vector<uint8_t> sfa(co::nvfp4::scale_bytes(m_, k_), 0x38);
  std::vector<uint8_t> sfb(co::nvfp4::scale_bytes(n_, k_), 0x38);
  ops.a = device_copy(a_host_.data(), a_host_.size());
  ops.b = device_copy(b_host_.data(), b_host_.size());
  ops.scales_a = device_copy(sfa.data(), sfa.size());
  ops.scales_b = device_copy(sfb.data(), sfb.size());
  ops.out = device_copy(nullptr, std::size_t(m_) * n_ * 2);
  ops.silu = o.silu;
  if (o.bias) {
    std::vector<uint16_t> bias(n_, float_to_bf16(0.f));
    ops.bias = device_copy(bias.data(), bias.size() * 2);
  }
#else
  std::uniform_int_distribution<int> small(-2, 2);
  a_host_.resize(std::size_t(m_) * k_ * 2);
  b_host_.resize(std::size_t(n_) * k_ * 2);
  for (std::size_t i = 0; i < a_host_.size() / 2; ++i) reinterpret_cast<uint16_t*>(a_host_.data())[i] = float_to_bf16(float(small(rng)));
  for (std::size_t i = 0; i < b_host_.size() / 2; ++i) reinterpret_cast<uint16_t*>(b_host_.data())[i] = float_to_bf16(float(small(rng)));
  ops.a = device_copy(a_host_.data(), a_host_.size());
  ops.b = device_copy(b_host_.data(), b_host_.size());
  std::vector<uint16_t> zeros(std::size_t(m_) * n_, 0);
  ops.c = device_copy(zeros.data(), zeros.size() * 2);
  ops.d = device_copy(nullptr, std::size_t(m_) * n_ * 2);
#endif
}

// Element (row, kk) of a K-major host operand: packed e2m1 nibbles (NVFP4) or bf16 bit patterns.
float Workload::element_at(std::vector<uint8_t> const& host, int row, int kk) const {
#if defined(CO_DOCTOR_KIND_nvfp4)
  uint8_t byte = host[(std::size_t(row) * k_ + kk) / 2];
  return e2m1(kk % 2 ? byte >> 4 : byte & 15);
#else
  return bf16_to_float(reinterpret_cast<uint16_t const*>(host.data())[std::size_t(row) * k_ + kk]);
#endif
}


void* Workload::out() const {
#if defined(CO_DOCTOR_KIND_nvfp4)
  return ops.out;
#else
  return ops.d;
#endif
}

std::size_t Workload::params() const {
#if defined(CO_DOCTOR_KIND_nvfp4)
  return api::params_bytes(m_);
#else
  return api::params_bytes();
#endif
}

int Workload::check_reference(std::string* detail) const {
  std::vector<uint16_t> d(std::size_t(m_) * n_);
  check(cudaMemcpy(d.data(), out(), d.size() * 2, cudaMemcpyDeviceToHost), "cudaMemcpy (result)");
  std::mt19937 rng(99);
  int bad = 0;
  for (int s = 0; s < 256; ++s) {
    int i = static_cast<int>(rng() % m_), j = static_cast<int>(rng() % n_);
    double ref = 0;
    for (int kk = 0; kk < k_; ++kk) ref += double(element_at(a_host_, i, kk)) * element_at(b_host_, j, kk);
#if defined(CO_DOCTOR_KIND_nvfp4)
    if (ops.silu) ref = ref / (1 + std::exp(-ref));
#endif
    double got = bf16_to_float(d[std::size_t(i) * n_ + j]);
    if (std::fabs(got - ref) > 1.0 + std::fabs(ref) / 64) {
      if (bad++ == 0) *detail = "out[" + std::to_string(i) + "," + std::to_string(j) + "] = " +
                                std::to_string(got) + ", reference " + std::to_string(ref);
    }
  }
  return bad;
}

}  // namespace co::doctor
