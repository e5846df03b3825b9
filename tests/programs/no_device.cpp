// A program without a device memory space: no copy can be a transfer, so a
// budget checks nothing, and check() says so and fails, unless
// CUNUMPY_ALLOW_NO_DEVICE=1 lets a CPU-only run pass (the GPU job's rules
// run on a CPU-only CI job). Host copies only, through Kokkos.
//
//   test_no_device            check() throws, naming why
//   CUNUMPY_ALLOW_NO_DEVICE=1 test_no_device --allowed   check() passes

#include <cstdio>
#include <cstring>
#include <string>

#include <cunumpy/cunumpy.hpp>

#include "check.hpp"

int main(int argc, char** argv) {
  const bool allowed = argc > 1 && std::strcmp(argv[1], "--allowed") == 0;
  Kokkos::ScopeGuard kokkos(argc, argv);
  if constexpr (cunumpy::has_device_backend)
    return 77; // this build has a device
  using namespace cunumpy::profiling;
  TransferBudget budget;
  budget.require("step", Rule());
  {
    auto step = budget.phase("step");
    Kokkos::View<double*, Kokkos::HostSpace> a("a", 8), b("b", 8);
    Kokkos::deep_copy(a, b);
  }
  const auto violations = budget.violations();
  std::string message;
  try {
    budget.check();
  } catch (const cunumpy::TransferError& error) {
    message = error.what();
  }
  if (allowed) {
    CHECK_EQ(violations.empty(), true);
    CHECK_EQ(message.empty(), true);
    CHECK_EQ(budget.snapshot().unchecked_allowed, true);
  } else {
    CHECK_EQ(violations.size(), std::size_t(1));
    if (!violations.empty())
      CHECK_EQ(violations[0].limit == Limit::no_device, true);
    CHECK_EQ(message.find("no device memory space in this program") !=
                 std::string::npos,
             true);
    CHECK_EQ(message.find("CUNUMPY_ALLOW_NO_DEVICE=1") != std::string::npos,
             true);
  }
  std::printf("%s", message.c_str());
  return failures() == 0 ? 0 : 1;
}
