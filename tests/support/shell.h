// Runs a shell command and returns its stdout without the trailing newline
// (tests that make keys with wg(8), as an admin does).
#pragma once

#include <cstdio>
#include <string>

namespace egw::test_support {

inline std::string run_command(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return out;
  char buf[256];
  while (fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

}  // namespace egw::test_support
