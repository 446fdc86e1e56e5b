// What the FP4 encode stand-in (driver_stand_in.cpp) saw, for tests and the module.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace co::hopper {

struct StandInStats {
  uint64_t lookups = 0;         // entry-point lookups forwarded to the runtime
  uint64_t encodes = 0;         // cuTensorMapEncodeTiled calls through the wrapper
  uint64_t fp4_stand_ins = 0;   // ... of which had a sub-byte data type mapped to UINT8
  uint64_t encode_errors = 0;   // ... of which the driver still rejected
};

StandInStats stand_in_stats();

// Every descriptor the wrapper returned (128 bytes each, first 1024 kept), for the byte-identity test.
std::vector<std::array<uint8_t, 128>> encoded_descriptors();

}  // namespace co::hopper
