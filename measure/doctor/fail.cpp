// The doctor's two ways out of a failure: exit now with a code (die), or throw to main (check).
#include "fail.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace co::doctor {

void die(int code, std::string const& msg) {
  std::fprintf(stderr, "%s: %s\n", kTool, msg.c_str());
  std::exit(code);
}

void check(cudaError_t e, char const* what) {
  if (e != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
  }
}

}  // namespace co::doctor
