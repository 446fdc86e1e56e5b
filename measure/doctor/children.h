// CUPTI never attaches to the process that times. Counting calls and timing with a profiler attached
// run in child processes (this binary re-executed with --child=<mode>, or a sibling binary) that
// print plain lines; the parent parses them here.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "co_trace.h"
#include "options.h"
#include "stats.h"

namespace co::doctor {

class Children {
 public:
  // self: this executable (/proc/self/exe); forwarded: the shape and repeat options of argv, passed
  // on to every child (--child, --json and --device-info are not).
  Children(int argc, char** argv);
  std::string const& self() const { return self_; }
  // Runs `exe --child=<mode> <forwarded>` and returns its stdout and stderr; a failure (popen, or a
  // non-zero exit status) is described in *error.
  std::string run(std::string const& exe, std::string const& mode, std::string* error) const;

 private:
  std::string self_;
  std::vector<std::string> forwarded_;
};

// The child's side: one entry point per --child mode; each returns the process's exit code.
int child_counts(Options const& o, cudaStream_t s);   // CUPTI callbacks: calls per phase, encode inputs
int child_profile(Options const& o, cudaStream_t s);  // CUPTI activity records, as Nsight Systems
int child_seed(Options const& o, cudaStream_t s);     // nothing attached (the -O0 sibling)

// The parent's side of child_counts' output.
struct CountRow {
  std::string combo, phase, domain, api;
  uint64_t n = 0;
};
struct Counts {
  std::vector<CountRow> rows;
  std::vector<std::string> encode_lines;  // one cuTensorMapEncodeTiled's inputs each, combo first
  std::string stand_in;                   // the host-path build's encode stand-in statistics, or empty
  // Calls of any of `apis` in one steady-state call of `combo`, in `phase` (every phase when empty).
  uint64_t of(std::string const& combo, std::vector<std::string> const& apis, std::string const& phase = "") const;
};
Counts parse_counts(std::string const& child_output);
co::trace::EncodeInputs parse_encode(std::string const& encode_line, std::string* combo);

// The seed's host time a child_profile or child_seed printed (median and quartiles, no rounds); nothing
// when it printed none.
std::optional<Spread> parse_seed_host_us(std::string const& child_output);

// The APIs the verdict and the matrix count, by the names CUPTI reports.
inline std::vector<std::string> const kLookupApis = {"cudaGetDriverEntryPoint", "cudaGetDriverEntryPointByVersion"};
inline std::vector<std::string> const kEncodeApis = {"cuTensorMapEncodeTiled"};
inline std::vector<std::string> const kVersionApis = {"cudaDriverGetVersion", "cuDriverGetVersion"};
inline std::vector<std::string> const kAttrApis = {"cudaFuncSetAttribute"};
inline std::vector<std::string> const kSyncApis = {"cudaFree", "cudaStreamSynchronize", "cudaDeviceSynchronize",
                                                   "cudaMemcpy"};

}  // namespace co::doctor
