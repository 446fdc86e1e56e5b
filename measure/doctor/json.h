// The JSON the doctor writes, built as strings in the order the fields are added (no dependency on
// a JSON library, so the doctor stays a plain C++ program).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "modes.h"
#include "stats.h"

namespace co::doctor {

using JsonFields = std::vector<std::pair<std::string, std::string>>;  // key, serialized value

std::string jstr(std::string const& s);
std::string jnum(double v);  // null where not finite
std::string jobj(JsonFields const& kv);
std::string jarr(std::vector<std::string> const& v);
std::string jspread(Spread const& s);
std::string jmode(ModeResult const& m);

// Writes jobj(fields) and a newline to path; exits 1 when the file cannot be opened.
void write_json(std::string const& path, JsonFields const& fields);

}  // namespace co::doctor
