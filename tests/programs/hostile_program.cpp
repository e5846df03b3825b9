// What real programs do that a tool must survive, one case per run, for the
// plugin's tests on every Kokkos (events through Kokkos' own entry points,
// tests/programs/tool_events.hpp). In each case a region "step" makes a
// copy to the device, which the tests' rule file forbids, unless said
// otherwise:
//
//   hostile_program reinitialize   Kokkos finalized, then initialized again
//                                  (Kokkos 3 only; 4 refuses): the copy is
//                                  in the second session
//   hostile_program pause-tools    pauses Kokkos' tools before the copy and
//                                  never resumes them
//   hostile_program clear-callbacks  clears every callback of Kokkos' table
//                                  before the copy, never puts them back
//   hostile_program clear-copy-callbacks  saves the table, clears its
//                                  deep-copy callbacks, makes a real
//                                  Kokkos::deep_copy, puts them back
//   hostile_program drop-region-callbacks  takes the region callbacks out
//                                  of Kokkos' table for the step (its push,
//                                  copy and pop), then puts them back
//   hostile_program half-forwarder a tool takes both copy callbacks,
//                                  forwards the begins, swallows the ends:
//                                  3 copies before cunumpy notices it and 3
//                                  after, in "output" (allowed)
//   hostile_program exit MODE      after Kokkos::finalize: _exit(0),
//                                  quick_exit(0) or exit(5)
//   hostile_program exit-from-signal US  copies in "step" until SIGALRM,
//                                  US microseconds in, whose handler calls
//                                  exit(0), wherever it lands
//   hostile_program exit-in-copy [quick_exit]  in "step", a copy's begin,
//                                  then SIGALRM, whose handler calls exit(0)
//                                  (quick_exit(0)), before its end: the only
//                                  copy of the run
//   hostile_program region NAME    the copy in a region named NAME inside
//                                  "step"
//   hostile_program unpopped-loop N  N steps that each push "step" and
//                                  "output" and pop one: each step nests in
//                                  the last
//   hostile_program second-kokkos V  another Kokkos, of version V, declares
//                                  its version as its initialize does
//   hostile_program no-device      no device at all: host copies only
//   hostile_program helper-thread  the copy made by a thread that pushes no
//                                  region, while the main thread is in
//                                  "step"
//   hostile_program driver-thread  Kokkos initialized on the main thread;
//                                  a simulation thread opens "step" and
//                                  a pool thread it starts, with no region
//                                  of its own, makes the copy
//   hostile_program threads-in-different-regions  as driver-thread, while
//                                  the main thread is in "output"
//   hostile_program unpopped       a library's region "output" (where the
//                                  tests allow copies) inside "step" is
//                                  never popped: the step's copy after it
//                                  counts in "output", and the step's pop
//                                  closes "output", leaving "step" open

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/time.h>
#include <thread>
#include <unistd.h>

#include "tool_events.hpp"

namespace {

using namespace tool_events;

void step_with_copy() {
  region("step");
  copy_to_device(8);
  end_region();
}

/// A real Kokkos::deep_copy between two host views: Kokkos reports it (and
/// from 3.5 on fences inside it, with names that say so).
void host_deep_copy() {
  Kokkos::View<double*, Kokkos::HostSpace> a("a", 64), b("b", 64);
  Kokkos::deep_copy(a, b);
}

int usage() {
  std::fprintf(stderr, "usage: hostile_program CASE [ARGUMENT]\n");
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2)
    return usage();
  const std::string which = argv[1];
  const std::string argument = argc > 2 ? argv[2] : "";
  if (which == "reinitialize") {
    Kokkos::initialize(argc, argv);
    device_allocation();
    region("setup");
    end_region();
    Kokkos::finalize();
    Kokkos::initialize(argc, argv);
    step_with_copy();
    Kokkos::finalize();
    std::printf("hostile_program: two sessions\n");
    return 0;
  }
  Kokkos::initialize(argc, argv);
  if (which != "no-device")
    device_allocation();
  if (which == "pause-tools") {
    KT::pause_tools();
    step_with_copy();
  } else if (which == "clear-callbacks") {
    KT::set_callbacks(Kokkos_Profiling_EventSet{});
    step_with_copy();
  } else if (which == "clear-copy-callbacks") {
    Kokkos_Profiling_EventSet table = KT::get_callbacks();
    const Kokkos_Profiling_EventSet saved = table;
    table.begin_deep_copy = nullptr;
    table.end_deep_copy = nullptr;
    KT::set_callbacks(table);
    region("step");
    host_deep_copy();
    end_region();
    KT::set_callbacks(saved);
  } else if (which == "drop-region-callbacks") {
    Kokkos_Profiling_EventSet table = KT::get_callbacks();
    const Kokkos_Profiling_EventSet saved = table;
    table.push_region = nullptr;
    table.pop_region = nullptr;
    KT::set_callbacks(table);
    step_with_copy();
    KT::set_callbacks(saved);
    region("output");
    end_region();
  } else if (which == "half-forwarder") {
    // Three copies before cunumpy notices the tool, three after: at a
    // region's push, which checks Kokkos' table once every 10 ms.
    HalfForwarder::install();
    region("output");
    for (int i = 0; i < 3; ++i)
      copy_to_device(8);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    region("check");
    end_region();
    for (int i = 0; i < 3; ++i)
      copy_to_device(8);
    end_region();
  } else if (which == "exit") {
    step_with_copy();
    Kokkos::finalize();
    std::fflush(stdout);
    if (argument == "_exit0")
      ::_exit(0);
    if (argument == "quick_exit0")
      std::quick_exit(0);
    if (argument == "exit5")
      std::exit(5);
    return usage();
  } else if (which == "exit-from-signal") {
    std::signal(SIGALRM, [](int) { std::exit(0); });
    itimerval once{};
    once.it_value.tv_usec = std::atol(argument.c_str()) % 1000000;
    region("step");
    copy_to_device(8); // one copy in "step" however late the timer starts
    ::setitimer(ITIMER_REAL, &once, nullptr);
    for (;;)
      copy_to_device(8);
  } else if (which == "exit-in-copy") {
    if (argument == "quick_exit")
      std::signal(SIGALRM, [](int) { std::quick_exit(0); });
    else
      std::signal(SIGALRM, [](int) { std::exit(0); });
    static double data[8];
    region("step");
    Kokkos::Tools::beginDeepCopy(
        Kokkos::Tools::make_space_handle("Cuda"), "device", data,
        Kokkos::Tools::make_space_handle("Host"), "host", data, sizeof data);
    std::raise(SIGALRM); // the copy's end never comes
  } else if (which == "region") {
    region("step");
    region(argument.c_str());
    copy_to_device(8);
    end_region();
    end_region();
  } else if (which == "helper-thread") {
    region("step");
    std::thread helper([] { copy_to_device(8); });
    helper.join();
    end_region();
  } else if (which == "driver-thread" ||
             which == "threads-in-different-regions") {
    const bool main_in_output = which == "threads-in-different-regions";
    if (main_in_output)
      region("output");
    std::thread simulation([] {
      region("step");
      std::thread pool([] { copy_to_device(8); });
      pool.join();
      end_region();
    });
    simulation.join();
    if (main_in_output)
      end_region();
  } else if (which == "unpopped") {
    region("step");
    region("output");
    copy_to_device(8);
    copy_to_device(8); // the step's, after the missing pop of "output"
    end_region();      // meant for "step"
  } else if (which == "unpopped-loop") {
    for (int i = std::atoi(argument.c_str()); i > 0; --i) {
      region("step");
      region("output");
      end_region();
    }
  } else if (which == "second-kokkos") {
    Kokkos::Tools::declareMetadata("Kokkos Version", argument);
  } else if (which == "no-device") {
    region("step");
    host_deep_copy();
    end_region();
  } else {
    Kokkos::finalize();
    return usage();
  }
  Kokkos::finalize();
  std::printf("hostile_program: %s\n", which.c_str());
  return 0;
}
