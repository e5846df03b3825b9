// A program of the C++ library whose copies' sites come from its own debug
// information, for tests/plugin/test_symbolizing.py to run on damaged copies
// of it and with files that open slowly:
//
//   test_reports_with_debug_files twice
//     one copy, then two reports, each caught: prints "report N:" and the
//     report, or "report N threw: <what>"; then the copy's site and its
//     problem ("site: ...", "problem: ...").
//   test_reports_with_debug_files concurrent
//     a report while another thread copies: prints the copies that thread
//     made while the report was made ("copies while reporting: N").
//   test_reports_with_debug_files exit_while_reporting
//     one copy, then a report that SIGALRM's handler, calling exit(0),
//     interrupts a second later (status 1 if the report ends first).
//
// Exit status 77 where Kokkos has no fake device.

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
#include <unistd.h>

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>
#include <cunumpy/testing/fake_device.hpp>

int main(int argc, char** argv) {
#if CUNUMPY_HAS_FAKE_DEVICE
  using FakeDevice = cunumpy::testing::FakeDevice;
  const std::string mode = argc > 1 ? argv[1] : "";
  Kokkos::ScopeGuard kokkos(argc, argv);
  cunumpy::testing::register_fake_device();
  Kokkos::View<double*, Kokkos::HostSpace> host("host", 10);
  Kokkos::View<double*, FakeDevice> device("device", 10);
  auto counted = cunumpy::profiling::count_transfers();
  if (mode == "twice") {
    Kokkos::deep_copy(device, host);
    for (int report = 1; report <= 2; ++report) {
      try {
        const std::string text = counted.counter().report();
        std::printf("report %d:\n%s\n", report, text.c_str());
      } catch (const std::exception& error) {
        std::printf("report %d threw: %s\n", report, error.what());
      }
    }
    const auto events = counted.counter().events();
    if (!events.empty())
      std::printf("site: %s\nproblem: %s\n", events[0].site.str().c_str(),
                  events[0].site.problem.c_str());
    return 0;
  }
  if (mode == "concurrent") {
    std::atomic<bool> stop{false};
    std::atomic<long> copies{0};
    std::thread helper([&] {
      while (!stop.load()) {
        Kokkos::deep_copy(device, host);
        copies.fetch_add(1);
      }
    });
    while (copies.load() < 10)
      std::this_thread::yield();
    const long before = copies.load();
    const std::string text = counted.counter().report();
    const long during = copies.load() - before;
    stop.store(true);
    helper.join();
    std::printf("%s\ncopies while reporting: %ld\n", text.c_str(), during);
    return 0;
  }
  if (mode == "exit_while_reporting") {
    Kokkos::deep_copy(device, host);
    std::signal(SIGALRM, [](int) { std::exit(0); });
    ::alarm(1);
    (void)counted.counter().report();
    return 1;
  }
  std::fprintf(stderr, "usage: %s twice|concurrent|exit_while_reporting\n",
               argv[0]);
  return 2;
#else
  (void)argc;
  (void)argv;
  return 77;
#endif
}
