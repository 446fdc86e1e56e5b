// What the FP4 encode stand-in (driver_stand_in.cpp) returned, for the byte-identity test.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace co::hopper {

// Every descriptor the wrapper returned (128 bytes each, first 1024 kept), for the byte-identity test.
std::vector<std::array<uint8_t, 128>> encoded_descriptors();

}  // namespace co::hopper
