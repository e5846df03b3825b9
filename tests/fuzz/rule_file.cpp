// libFuzzer target: TransferBudget::require_toml, the parser of rule files
// shared by the C++ library, the Python module and the plugin. Any input
// must give a budget or one std::invalid_argument whose message is short
// (an excerpt of the offending text, never the text); a crash, a sanitizer
// report, another exception or a long message is a finding.
//
//   scripts/fuzz                           # builds, seeds and runs it

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include <Kokkos_Core.hpp>

#include <cunumpy/transfer_budget.hpp>

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  Kokkos::initialize(*argc, *argv);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  cunumpy::profiling::TransferBudget budget;
  try {
    budget.require_toml(text, "fuzz.toml");
  } catch (const std::invalid_argument& error) {
    // "fuzz.toml:<line>:<column>: " and a message with excerpts of at most
    // 256 bytes (toml++'s description) or 64 (keys and names).
    const std::size_t length = std::string_view(error.what()).size();
    if (length > 1024) {
      std::fprintf(stderr, "fuzz_rule_file: a message of %zu bytes\n", length);
      std::abort();
    }
  }
  return 0;
}
