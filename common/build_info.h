// What this binary is: `ensemble-gw --version` and the egw_build_info metric.
// Defined in build_info.cc.in, which CMake configures (the only file a new
// version or commit recompiles).
#pragma once

#include <string_view>

namespace egw {

// The release, from CMake's project(VERSION ...): "0.1.0".
std::string_view build_version();
// The git commit the tree was configured at ("3f2c1a9b0d4e"), or "unknown"
// when it was built outside a git checkout (a source tarball, the image).
std::string_view build_commit();

}  // namespace egw
