// GPU presence: one clear line (exit 3 or 2), never "driver version is insufficient".
#pragma once

#include <string>

namespace co::doctor {

struct Device {
  int id = 0, major = 0, minor = 0, driver = 0, runtime = 0;
  std::string name;
};

// Exits 3 when there is no driver or no visible GPU.
Device find_gpu();

// Exits 2 when this executable carries no code for the GPU's architecture (CO_DOCTOR_ARCHS).
void require_built_for(Device const& d);

}  // namespace co::doctor
