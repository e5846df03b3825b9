// Forks while other threads record: a child forked while another thread
// holds one of cunumpy's locks would inherit it held by a thread it does not
// have, and hang at its first event or read. Four threads copy and push
// regions without pause under a budget, a fifth reads the budget's count;
// the main thread forks many
// times, and each child records and reads a count before it exits. A child
// that does not end within 10 s is a hang: the test fails (and kills it).
//
//   test_fork_under_load [forks]

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <cunumpy/cunumpy.hpp>

#include "tool_events.hpp"

namespace {

using namespace tool_events;

/// Ends within `seconds` with status 0; otherwise says how it failed (a
/// child still running then is killed and counted as a hang).
bool ended_in_time(pid_t child, int seconds) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) {
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return true;
      if (WIFEXITED(status))
        std::printf("fork_under_load: a child ended with status %d\n",
                    WEXITSTATUS(status));
      else
        std::printf("fork_under_load: a child was killed by signal %d\n",
                    WTERMSIG(status));
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::printf("fork_under_load: a child hung (killed after %d s)\n", seconds);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  return false;
}

} // namespace

int main(int argc, char** argv) {
  const int forks = argc > 1 ? std::atoi(argv[1]) : 300;
  Kokkos::ScopeGuard kokkos(argc, argv);
  cunumpy::profiling::TransferBudget budget;
  device_allocation();
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&stop] {
      while (!stop.load(std::memory_order_relaxed)) {
        region("work");
        copy_to_device(8);
        copy_to_host(8);
        end_region();
      }
    });
  // A thread that reads the budget's count without pause: a read checks
  // Kokkos' table of callbacks under its own lock.
  threads.emplace_back([&stop, &budget] {
    while (!stop.load(std::memory_order_relaxed))
      (void)budget.total();
  });
  int failures = 0;
  for (int i = 0; i < forks; ++i) {
    std::fflush(nullptr);
    const pid_t child = ::fork();
    if (child == 0) {
      // The child records and reads, as a program's child process would.
      region("child");
      copy_to_device(8);
      end_region();
      const bool counted = budget.total().to_device() > 0;
      std::_Exit(counted ? 0 : 1);
    }
    if (child < 0 || !ended_in_time(child, 10))
      ++failures;
  }
  stop = true;
  for (std::thread& thread : threads)
    thread.join();
  std::printf("fork_under_load: %d forks, %d failed or hung\n", forks,
              failures);
  return failures == 0 ? 0 : 1;
}
