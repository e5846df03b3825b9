// A program without a device memory space: no copy can be a transfer, so a
// budget, a counter and assert_no_transfers check nothing, and say so and
// fail alike, unless CUNUMPY_ALLOW_NO_DEVICE=1 lets a CPU-only run pass
// (the GPU job's rules run on a CPU-only CI job). Host copies only, through
// Kokkos.
//
//   test_no_device            check() and assert_no_transfers throw, the
//                             counter is not complete, naming why
//   CUNUMPY_ALLOW_NO_DEVICE=1 test_no_device --allowed   all pass

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
  // The same rule for a counter and assert_no_transfers.
  auto counted = count_transfers();
  Kokkos::View<double*, Kokkos::HostSpace> c("c", 8), d("d", 8);
  Kokkos::deep_copy(c, d);
  const TransferCounter& counter = counted.counter();
  std::string asserted;
  try {
    assert_no_transfers([&] { Kokkos::deep_copy(d, c); });
  } catch (const cunumpy::TransferError& error) {
    asserted = error.what();
  }
  if (allowed) {
    CHECK_EQ(counter.complete(), true);
    CHECK_EQ(asserted.empty(), true);
  } else {
    CHECK_EQ(counter.complete(), false);
    CHECK_EQ(counter.losses().size(), std::size_t(1));
    CHECK_EQ(counter.report().find("NOT CHECKED: no device memory space") !=
                 std::string::npos,
             true);
    CHECK_EQ(asserted.find("cannot tell that none happened: no device "
                           "memory space in this program") != std::string::npos,
             true);
  }
  std::printf("%s%s", message.c_str(), asserted.c_str());
  return failures() == 0 ? 0 : 1;
}
