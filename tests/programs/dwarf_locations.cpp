// Prints the source locations cunumpy's debug information reader gives each
// address (link-time, hex, one a line on stdin) of the module named on the
// command line: "address | file:line | file:line ...", innermost first, as
// llvm-addr2line -i gives them (dwarf_locations_check.py compares).

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "call_sites/debug_info.hpp"

int main(int argc, char** argv) {
  using namespace cunumpy::Impl;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODULE < addresses\n", argv[0]);
    return 2;
  }
  DebugInfo reader(argv[1], "");
  if (!reader.problem().empty()) {
    std::fprintf(stderr, "%s: %s\n", argv[1], reader.problem().c_str());
    return 1;
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    std::printf("%s", line.c_str());
    const auto address = std::strtoull(line.c_str(), nullptr, 16);
    for (const DebugLocation& location : reader.locations(address))
      std::printf(" | %s:%d", location.file.c_str(), location.line);
    std::printf("\n");
  }
  return 0;
}
