// How the doctor stops: one line on stderr and the exit code the wrapper and the tests rely on
// (0 ok, 1 CUDA/CUTLASS error, 2 wrong GPU, 3 no driver or GPU, 64 bad arguments; see README.md).
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace co::doctor {

inline constexpr char kTool[] = "co-doctor";

[[noreturn]] void die(int code, std::string const& msg);

// Throws std::runtime_error naming the call and CUDA's error; main turns it into exit code 1.
void check(cudaError_t e, char const* what);

}  // namespace co::doctor
