// Two experiments beside the issue's pattern, on the GEMM of one variant: a transformer layer's GEMMs in one
// mode, and the pieces of GemmUniversalAdapter::initialize() timed one at a time. They measure; the pattern
// itself lives in repro/. Generic over the Gemm and its Arguments builder: the variant's translation unit
// instantiates them with its own types (repro/sm90_gemm.cu).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cutlass/util/device_memory.h"

#include "bench.cuh"

namespace co::experiments {

// One call = each GEMM of `layer` ({name, n, k} rows) once, in o.mode (issue_pattern, initialize_run, update_run,
// kept_gemm), at M = m, with `elem`-byte elements. Weights and activations are allocated (zero-filled) here; with
// o.rotation = r, call i takes its A and D buffers from slot i % r of r per GEMM, as a caching allocator hands
// out activations. run_pattern(operands) makes one call of the issue's pattern; args(operands) builds its Arguments.
template <typename Gemm, typename Operands, typename Layer, typename RunIssuePattern, typename MakeArgs>
BenchResult bench_layer(int m, std::size_t elem, Layer const& layer, BenchOptions const& options, RunIssuePattern&& run_pattern,
                        MakeArgs&& args) {
  if (m < 1) throw std::invalid_argument("M must be positive");
  if (options.mode == Mode::kKeptGemm && options.rotation != 1) {
    throw std::invalid_argument("mode kept_gemm builds its Params once, so its operands cannot change (rotation 1)");
  }
  if (options.mode != Mode::kIssuePattern && options.mode != Mode::kInitializeRun && options.mode != Mode::kUpdateRun &&
      options.mode != Mode::kKeptGemm) {
    throw std::invalid_argument(std::string("the layer benchmark has no mode ") + mode_name(options.mode));
  }
  struct Step {
    Operands ops;
    DeviceBuffer w, a, d;
    std::unique_ptr<Rotation> as, ds;
    std::unique_ptr<ModeCall<Gemm>> call;
  };
  std::vector<Step> steps;
  for (auto const& g : layer) {
    Step s;
    s.w = zeroed_buffer(elem * g.n * g.k);
    s.a = zeroed_buffer(elem * m * g.k);
    s.d = zeroed_buffer(elem * m * g.n);
    s.as = std::make_unique<Rotation>(s.a.get(), elem * m * g.k, options.rotation);
    s.ds = std::make_unique<Rotation>(s.d.get(), elem * m * g.n, options.rotation);
    s.ops.a = s.a.get();
    s.ops.b = s.w.get();
    s.ops.c = s.ops.d = s.d.get();
    s.ops.m = m;
    s.ops.n = g.n;
    s.ops.k = g.k;
    steps.push_back(std::move(s));
  }
  // The fills ran on the legacy stream, which options.stream (non-blocking) does not wait for.
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after filling the layer's buffers");
  auto operands = [](Step const& s, long long call) {
    Operands x = s.ops;
    x.a = s.as->at(call);
    x.c = x.d = s.ds->at(call);
    return x;
  };
  std::vector<typename Gemm::Arguments> first;  // the kept Gemm's (its Params never change)
  if (options.mode != Mode::kIssuePattern) {
    for (Step& s : steps) {
      first.push_back(args(operands(s, 0)));
      s.call = std::make_unique<ModeCall<Gemm>>(options.mode, first.back(), options.stream);
    }
  }
  long long call = 0;
  BenchResult r = time_loop([&] {
    for (std::size_t i = 0; i < steps.size(); ++i) {
      Step& s = steps[i];
      if (options.mode == Mode::kIssuePattern) {
        run_pattern(operands(s, call));
      } else if (options.mode == Mode::kKeptGemm) {
        PhaseScope phase;
        (*s.call)(first[i], phase);
      } else {
        PhaseScope phase;
        phase.enter(Phase::kArgs);
        (*s.call)(args(operands(s, call)), phase);
      }
    }
    ++call;
  }, options);
  return r;
}

// Mean host ns of one call of `part` (get_workspace_size, can_implement, to_underlying_arguments,
// initialize_workspace, initialize) with `args`, timed in a loop of `iterations` calls after the adapter's first
// initialize() (first-call costs excluded).
template <typename Gemm>
double initialize_part_ns(typename Gemm::Arguments const& args, char const* part, int iterations) {
  using GemmKernel = typename Gemm::GemmKernel;
  if (iterations < 1) throw std::invalid_argument("iterations must be >= 1");
  cutlass::device_memory::allocation<uint8_t> workspace(Gemm::get_workspace_size(args));
  Gemm gemm;
  // The first initialize() pays the one-time costs (entry points, module load, the attribute in the
  // patched build); the loops below time the steady state, as the issue's loop sees it.
  CUTLASS_CHECK(gemm.initialize(args, workspace.get()));
  auto time = [iterations](auto&& call) {
    for (int i = 0; i < 8; ++i) call();
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) {
      call();
      asm volatile("" ::: "memory");  // keep each call: nothing may be hoisted out of the loop
    }
    std::chrono::duration<double, std::nano> elapsed = std::chrono::steady_clock::now() - start;
    return elapsed.count() / iterations;
  };
  std::string const name(part);
  if (name == "get_workspace_size") {
    std::size_t volatile sink = 0;
    return time([&] { sink = Gemm::get_workspace_size(args); });
  }
  if (name == "can_implement") {
    return time([&] { CUTLASS_CHECK(Gemm::can_implement(args)); });
  }
  if (name == "to_underlying_arguments") {
    typename Gemm::Params params;
    double ns = time([&] { params = GemmKernel::to_underlying_arguments(args, workspace.get()); });
    asm volatile("" : : "r"(&params) : "memory");
    return ns;
  }
  if (name == "initialize_workspace") {
    return time([&] { CUTLASS_CHECK(GemmKernel::initialize_workspace(args, workspace.get())); });
  }
  if (name == "initialize") {
    return time([&] { CUTLASS_CHECK(gemm.initialize(args, workspace.get())); });
  }
  throw std::invalid_argument("unknown initialize part '" + name + "'");
}

}  // namespace co::experiments
