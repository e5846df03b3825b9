// A Kokkos application that calls nothing of cunumpy: a time loop with
// profiling regions, a DualView of diagnostics and output every few steps.
// Loading the cunumpy plugin gives it a transfer report per region, a budget
// checked at exit and a trace, without recompiling; with these two variables
// set in the environment:
//
//   KOKKOS_TOOLS_LIBS=<prefix>/lib/libkp_cunumpy.so
//   CUNUMPY_BUDGET=budget.toml ./legacy_app --copy-in-step
//
// (Kokkos before 3.7 reads only KOKKOS_PROFILE_LIBRARY: set it too. On a
// host-only Kokkos 3, add CUNUMPY_DEVICE_SPACES=FakeDevice: a fake device.)
//
//   ./legacy_app [--steps N] [--size N] [--output-every N] [--copy-in-step]
//                [--probes N] [--alternate-tools N] [--device-time US]
//                [--chdir DIR] [--exit-without-finalize]
//
// --copy-in-step adds a copy of the state to every time step (the bug the
// budget catches); --probes N reads N single values per step (the overhead
// benchmark's "few copies per step", bench/plugin). --alternate-tools N
// times the loop in blocks of N steps and pauses the loaded Kokkos tool
// (Kokkos::Tools::Experimental::pause_tools) in every other block, so that
// the cost of a tool is measured within one process, block against block.
// It also times the step's events apart from its kernel's body: the
// region's push, the kernel's begin and end events, and after the kernel
// the reads of --probes and the region's pop. That time does not hold the
// body, so the body's run-to-run noise does not reach it. (On a build whose
// kernels do not run on the calling thread alone, CUDA or OpenMP, the
// kernel's begin and end events are left out of it: legacy_app says so.)
// --device-time US makes the host wait US microseconds per step after the
// kernel, without touching memory, as a host waits while a GPU computes:
// with a small --size, a GPU-like step on the fake device, whose kernels
// otherwise run on the host core and evict its caches every step.
// --chdir DIR moves to DIR after Kokkos::initialize, as codes that run in a
// run directory do.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <unistd.h>
#include <vector>

#include <Kokkos_Core.hpp>
#include <Kokkos_DualView.hpp>

// One header of cunumpy's, nothing to link: the device memory space, a
// fake one on a host-only Kokkos 3 build (a LogicalMemorySpace named
// "FakeDevice", whose copies reach the tools like host/device copies).
#include <cunumpy/testing/fake_device.hpp>

namespace legacy {

using DeviceSpace = cunumpy::testing::example_device_space;
using DeviceView = Kokkos::View<double*, DeviceSpace>;
using HostView = Kokkos::View<double*, Kokkos::HostSpace>;
using Diagnostics = Kokkos::DualView<double*, DeviceSpace>;
using Policy = Kokkos::RangePolicy<DeviceView::execution_space>;

struct Options {
  int steps = 100;
  int size = 100000;
  int output_every = 10;
  bool copy_in_step = false;
  int probes = 0;
  int alternate_tools = 0; // steps per block; 0: tools stay on
  int device_time_us = 0;  // host wait per step, as for a GPU kernel
  std::string chdir;       // run directory, entered after initialize
  bool exit_without_finalize = false;
};

Options parse(int argc, char* argv[]) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--steps" && has_value)
      options.steps = std::atoi(argv[++i]);
    else if (arg == "--size" && has_value)
      options.size = std::atoi(argv[++i]);
    else if (arg == "--output-every" && has_value)
      options.output_every = std::atoi(argv[++i]);
    else if (arg == "--copy-in-step")
      options.copy_in_step = true;
    else if (arg == "--probes" && has_value)
      options.probes = std::atoi(argv[++i]);
    else if (arg == "--alternate-tools" && has_value)
      options.alternate_tools = std::atoi(argv[++i]);
    else if (arg == "--device-time" && has_value)
      options.device_time_us = std::atoi(argv[++i]);
    else if (arg == "--chdir" && has_value)
      options.chdir = argv[++i];
    else if (arg == "--exit-without-finalize")
      options.exit_without_finalize = true;
  }
  if (options.output_every < 1)
    options.output_every = 1;
  return options;
}

void advance(const DeviceView& state, double dt) {
  Kokkos::parallel_for(
      "legacy::advance", Policy(0, state.extent(0)),
      KOKKOS_LAMBDA(int i) { state(i) += dt * (1.0 - state(i)); });
}

/// When the body of advance() began and ended, for --alternate-tools.
struct BodyTimes {
  std::chrono::steady_clock::time_point start;
  std::chrono::steady_clock::time_point end;
};

#if defined(KOKKOS_ENABLE_SERIAL) && !defined(KOKKOS_ENABLE_CUDA) &&           \
    !defined(KOKKOS_ENABLE_HIP) && !defined(KOKKOS_ENABLE_SYCL) &&             \
    !defined(KOKKOS_ENABLE_OPENMPTARGET)
/// Whether advance_timed() can time the body: the kernel runs on the
/// calling thread, as Serial runs a range, one index after the other.
constexpr bool body_timed =
    std::is_same<Policy::execution_space, Kokkos::Serial>::value;

/// advance()'s loop, out of line: inlined into the kernel below, the time
/// loop's ratio with the plugin moved from 1.03 to 1.07 (light step) with
/// code placement alone, from one build of legacy_app to the next.
__attribute__((noinline)) void advance_body(double* data, std::size_t n,
                                            double dt) {
  for (std::size_t i = 0; i < n; ++i)
    data[i] += dt * (1.0 - data[i]);
}

/// advance() with its body timed from inside the kernel, so that the
/// kernel's begin and end events are timed apart from it: the same events
/// ("legacy::advance", one begin and one end) and the same arithmetic, the
/// loop run in the kernel's one index (as a plain loop, about 10% faster
/// here than Kokkos' range loop).
void advance_timed(const DeviceView& state, double dt, BodyTimes& times) {
  BodyTimes* const out = &times;
  Kokkos::parallel_for("legacy::advance", Policy(0, 1), [=](int) {
    out->start = std::chrono::steady_clock::now();
    advance_body(state.data(), state.extent(0), dt);
    out->end = std::chrono::steady_clock::now();
  });
}
#else
constexpr bool body_timed = false;
void advance_timed(const DeviceView& state, double dt, BodyTimes&) {
  advance(state, dt);
}
#endif

void compute_diagnostics(const DeviceView& state, Diagnostics& diagnostics) {
  auto device = diagnostics.view_device();
  const int n = static_cast<int>(state.extent(0));
  Kokkos::parallel_for(
      "legacy::diagnostics", Policy(0, device.extent(0)),
      KOKKOS_LAMBDA(int i) { device(i) = state(i * (n / device.extent(0))); });
  diagnostics.modify_device();
}

/// --device-time: the host spins, as Kokkos' fence does while a GPU
/// kernel runs, reading only the clock.
void wait_for_device(int microseconds) {
  if (microseconds <= 0)
    return;
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::microseconds(microseconds);
  while (std::chrono::steady_clock::now() < until) {
  }
}

struct Result {
  double written = 0.0;
  double loop_seconds = 0.0; // wall-clock time of the time loop alone
};

/// --alternate-tools: times blocks of steps with the loaded Kokkos tool on
/// and paused in turn. Blocks come in pairs, on then paused and paused then
/// on alternately, so that neither side always runs first; a pair's ratio
/// is the tool's cost under the same machine load.
class ToolAlternation {
public:
  explicit ToolAlternation(int block_steps) : block_steps_(block_steps) {}

  bool enabled() const { return block_steps_ > 0; }

  /// Before time step `step` (outside every region): ends a block there.
  void before_step(int step) {
    if (!enabled() || step % block_steps_ != 0)
      return;
    end_block();
    set_paused(!tool_on(step / block_steps_));
  }

  /// After the last step: ends the last block and turns the tool back on,
  /// so that it sees Kokkos::finalize.
  void finish() {
    if (!enabled())
      return;
    end_block();
    set_paused(false);
  }

  /// The kernel's begin and end events: from `before` the kernel's launch
  /// to the start of its body, and from the end of its body to `after` it
  /// returned (with --alternate-tools, where body_timed).
  void kernel_events(std::chrono::steady_clock::time_point before,
                     const BodyTimes& body,
                     std::chrono::steady_clock::time_point after) {
    events_seconds_ += std::chrono::duration<double>((body.start - before) +
                                                     (after - body.end))
                           .count();
  }

  /// The step's events outside its kernel: timed only with --alternate-tools
  /// (two clock reads a segment, in both kinds of block).
  class Events {
  public:
    explicit Events(ToolAlternation& alternation)
        : alternation_(alternation),
          start_(alternation.enabled()
                     ? std::chrono::steady_clock::now()
                     : std::chrono::steady_clock::time_point{}) {}
    ~Events() {
      if (alternation_.enabled())
        alternation_.events_seconds_ +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                          start_)
                .count();
    }
    Events(const Events&) = delete;
    Events& operator=(const Events&) = delete;

  private:
    ToolAlternation& alternation_;
    std::chrono::steady_clock::time_point start_;
  };

  void print() const {
    if (!enabled())
      return;
    const std::size_t pairs = std::min(on_.size(), paused_.size());
    std::vector<double> ratios;
    for (std::size_t i = 0; i < pairs; ++i)
      ratios.push_back(on_[i] / paused_[i]);
    std::sort(ratios.begin(), ratios.end());
    std::printf("legacy_app: blocks of %d steps, tool on:", block_steps_);
    for (double seconds : on_)
      std::printf(" %.9f", seconds);
    std::printf("\nlegacy_app: blocks of %d steps, tool paused:", block_steps_);
    for (double seconds : paused_)
      std::printf(" %.9f", seconds);
    std::printf("\n");
    std::printf(
        "legacy_app: blocks of %d steps, events apart from kernel bodies, tool "
        "on:",
        block_steps_);
    for (double seconds : events_on_)
      std::printf(" %.9f", seconds);
    std::printf(
        "\nlegacy_app: blocks of %d steps, events apart from kernel bodies, "
        "tool paused:",
        block_steps_);
    for (double seconds : events_paused_)
      std::printf(" %.9f", seconds);
    std::printf("\n");
    std::printf("legacy_app: events timed: the region's push and pop, the "
                "reads%s\n",
                body_timed ? ", the kernel's begin and end"
                           : " (not the kernel's begin and end)");
    if (!ratios.empty())
      std::printf("legacy_app: tool on/paused, median of %zu pairs: %.4f\n",
                  pairs, ratios[ratios.size() / 2]);
  }

private:
  bool tool_on(int block) const {
    const bool first_of_pair = block % 2 == 0;
    const bool even_pair = (block / 2) % 2 == 0;
    return first_of_pair == even_pair;
  }

  void end_block() {
    Kokkos::fence(); // a device's kernels are asynchronous
    const auto now = std::chrono::steady_clock::now();
    if (started_) {
      const std::chrono::duration<double> seconds = now - block_start_;
      (paused_now_ ? paused_ : on_).push_back(seconds.count());
      (paused_now_ ? events_paused_ : events_on_).push_back(events_seconds_);
    }
    events_seconds_ = 0.0;
    started_ = true;
    block_start_ = now;
  }

  // Kokkos keeps one set of saved callbacks: pause and resume only on a
  // change.
  void set_paused(bool paused) {
    if (paused == paused_now_)
      return;
    if (paused)
      Kokkos::Tools::Experimental::pause_tools();
    else
      Kokkos::Tools::Experimental::resume_tools();
    paused_now_ = paused;
  }

  int block_steps_;
  bool started_ = false;
  bool paused_now_ = false;
  std::chrono::steady_clock::time_point block_start_;
  std::vector<double> on_, paused_;
  double events_seconds_ = 0.0; // of the block under way
  std::vector<double> events_on_, events_paused_;
};

Result run(const Options& options, ToolAlternation& alternation) {
  Kokkos::Profiling::pushRegion("setup");
  DeviceView state("state", options.size);
  HostView host_state("host_state", options.size);
  for (int i = 0; i < options.size; ++i)
    host_state(i) = double(i) / options.size;
  Kokkos::deep_copy(state, host_state);
  Diagnostics diagnostics("diagnostics", 16);
  Kokkos::DualView<double*, DeviceSpace> parameters("parameters", 4);
  HostView probe("probe", options.size);
  Kokkos::View<double, Kokkos::HostSpace> probe_value("probe_value");
  Kokkos::Profiling::popRegion();

  double written = 0.0;
  const auto loop_start = std::chrono::steady_clock::now();
  for (int step = 0; step < options.steps; ++step) {
    alternation.before_step(step);
    {
      const ToolAlternation::Events events(alternation);
      Kokkos::Profiling::pushRegion("integrate");
    }
    if (body_timed && alternation.enabled()) {
      BodyTimes body;
      const auto before = std::chrono::steady_clock::now();
      advance_timed(state, 1e-3, body);
      alternation.kernel_events(before, body, std::chrono::steady_clock::now());
    } else {
      advance(state, 1e-3);
    }
    wait_for_device(options.device_time_us);
    {
      const ToolAlternation::Events events(alternation);
      if (options.copy_in_step)
        Kokkos::deep_copy(probe, state); // the copy --copy-in-step adds
      for (int p = 0; p < options.probes; ++p) {
        Kokkos::deep_copy(probe_value, Kokkos::subview(state, p));
        written += probe_value();
      }
      Kokkos::Profiling::popRegion();
    }

    if ((step + 1) % options.output_every == 0) {
      Kokkos::Profiling::pushRegion("output");
      Kokkos::deep_copy(host_state, state);
      compute_diagnostics(state, diagnostics);
      diagnostics.sync_host();
      written += host_state(options.size / 2) + diagnostics.view_host()(0);
      Kokkos::Profiling::popRegion();
    }
  }
  Kokkos::fence();
  alternation.finish();
  const std::chrono::duration<double> loop_time =
      std::chrono::steady_clock::now() - loop_start;

  // The parameters change on the host for a next run that never comes: a
  // modification no sync follows, which the plugin lists.
  parameters.view_host()(0) = written;
  parameters.modify_host();
  return {written, loop_time.count()};
}

} // namespace legacy

int main(int argc, char* argv[]) {
  Kokkos::initialize(argc, argv);
  const legacy::Options options = legacy::parse(argc, argv);
  if (!options.chdir.empty() && ::chdir(options.chdir.c_str()) != 0) {
    std::perror(("legacy_app: --chdir " + options.chdir).c_str());
    return 1;
  }
  legacy::ToolAlternation alternation(options.alternate_tools);
  const legacy::Result result = legacy::run(options, alternation);
  std::printf("legacy_app: %d steps of %d points, output %.6f\n", options.steps,
              options.size, result.written);
  std::printf("legacy_app: time loop %.6f s\n", result.loop_seconds);
  alternation.print();
  std::fflush(stdout);
  if (options.exit_without_finalize)
    std::exit(0); // a code that never calls Kokkos::finalize
  Kokkos::finalize();
  return 0;
}
