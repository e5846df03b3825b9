// A Kokkos program that knows nothing of cunumpy, for the plugin's tests on
// every Kokkos: each step pushes a region, copies 8 bytes from the host to
// a "Cuda" space through Kokkos' own tools entry points, and runs a kernel;
// every fifth step a region "output" copies 64 bytes. With --replace it
// also behaves like Trilinos' in-process counters, which replace entries of
// Kokkos' table of callbacks:
//
//   tool_events [--steps N] [--replace MODE] [--pause-us US]
//
//   deep-copy-counter  Tpetra's DeepCopyCounter: start() at step 3 sets its
//                      begin_deep_copy callback, stop() at step 6 clears it
//   region-counter     KokkosRegionCounter::stop() at step 3 clears the
//                      push-region callback
//   again              DeepCopyCounter::start() at every step
//   chaining           at step 3 a tool that keeps the table's callbacks and
//                      forwards to them takes the copy callbacks
//
// --fork forks after the loop; the child calls Kokkos::finalize and ends.
// --empty-regions N pushes N regions that copy nothing ("empty 0"...).
// --library-regions adds a solve to every step, as Belos would make it: a
// region "belos_solve" with regions of Belos and Tpetra inside, each of
// which copies 8 bytes.
//
// --pause-us sleeps between steps, so that checks made at most once a
// millisecond happen during the loop. It prints what the in-process tools
// counted.

#include "tool_events.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  tool_events::device_allocation(); // a GPU build's program
  int steps = 10;
  int pause_us = 0;
  std::string replace = "none";
  bool library_regions = false;
  int empty_regions = 0;
  bool fork_child = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--steps" && i + 1 < argc)
      steps = std::atoi(argv[++i]);
    else if (arg == "--replace" && i + 1 < argc)
      replace = argv[++i];
    else if (arg == "--pause-us" && i + 1 < argc)
      pause_us = std::atoi(argv[++i]);
    else if (arg == "--library-regions")
      library_regions = true;
    else if (arg == "--empty-regions" && i + 1 < argc)
      empty_regions = std::atoi(argv[++i]);
    else if (arg == "--fork")
      fork_child = true;
  }
  using namespace tool_events;
  for (int step = 0; step < steps; ++step) {
    if (replace == "deep-copy-counter" && step == 3)
      DeepCopyCounter::start();
    if (replace == "deep-copy-counter" && step == 6)
      DeepCopyCounter::stop();
    if (replace == "again")
      DeepCopyCounter::start();
    if (replace == "region-counter" && step == 3)
      stop_region_counter();
    if (replace == "chaining" && step == 3)
      ChainingTool::install();
    region("step");
    copy_to_device(8);
    kernel();
    end_region();
    if (library_regions) {
      region("belos_solve");
      for (const char* library :
           {"Belos: Operation Op*x", "Tpetra::CrsMatrix::apply"}) {
        region(library);
        copy_to_device(8);
        end_region();
      }
      end_region();
    }
    if (step % 5 == 4) {
      region("output");
      copy_to_device(64);
      end_region();
    }
    if (pause_us > 0)
      std::this_thread::sleep_for(std::chrono::microseconds(pause_us));
  }
  for (int i = 0; i < empty_regions; ++i) {
    region(("empty " + std::to_string(i)).c_str());
    end_region();
  }
  dual_view_events();
  if (fork_child) {
    std::fflush(stdout);
    const pid_t child = ::fork();
    if (child == 0) {
      Kokkos::finalize(); // the child's tools get their finalize
      std::_Exit(0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    std::printf("tool_events: pid %d, child %d\n", int(::getpid()), int(child));
  }
  std::printf("tool_events: %d steps, counter %d, chaining tool %d\n", steps,
              DeepCopyCounter::copies().load(), ChainingTool::copies().load());
  return 0;
}
