// The doctor's command line: what the user asked for, checked before CUDA or CUTLASS sees it.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace co::doctor {

struct Options {
  int m = 128, n = 4096, k = 4096;
  int calls = 200, rounds = 7;
  bool silu = false, bias = false;
  long load_mib = 256;
  double load_ms = 1500;
  std::string json = "co-doctor.json";
  bool matrix = false, device_info = false;
  // internal (the wrapper, before it looks for a GPU): parse the command line, then exit 0. The shape
  // checks, which depend on the GEMM this binary runs, are left to the run itself.
  bool check_args = false;
  std::string child;  // internal: counts | profile | seed
};

// Exits 0 after --help, 64 with one line on stderr on a bad argument or a shape this build cannot run
// (the shape only without --check-args).
Options parse(int argc, char** argv);

// The shapes and epilogues --matrix covers (every built config), each with its name; just "main"
// (the user's own options) without --matrix.
std::vector<std::pair<std::string, Options>> combos(Options const& o);

}  // namespace co::doctor
