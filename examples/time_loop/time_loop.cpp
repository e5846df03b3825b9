// The classic bug of a GPU port, and its fix: a time loop that copies the
// state to the device and back every step, then the same loop with the
// copies moved to the boundaries. cunumpy counts both, names the lines, and
// its advice names the round trip of the first loop and what to change.
//
//   ./time_loop [steps]

#include <cstdio>
#include <cstdlib>
#include <string>

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>
#include <cunumpy/testing/fake_device.hpp>

namespace {

// The device of this build; on a host-only Kokkos 3 build, a fake device
// whose copies still go through Kokkos::deep_copy.
using Device = cunumpy::testing::example_device_space;
using DeviceState = Kokkos::View<double*, Device>;
using HostState = Kokkos::View<double*, Kokkos::HostSpace>;
using Policy = Kokkos::RangePolicy<typename DeviceState::execution_space>;

constexpr int n = 100000;
constexpr int output_every = 100;

void advance(const DeviceState& state, double dt) {
  Kokkos::parallel_for(
      "advance", Policy(0, state.extent(0)),
      KOKKOS_LAMBDA(int i) { state(i) += dt * (1.0 - state(i)); });
}

double write_output(const HostState& state) {
  return state(n / 2);
}

void wrong_way(HostState state, int steps, double dt) {
  for (int step = 0; step < steps; ++step) {
    DeviceState device = cunumpy::to_device<Device>(state); // up every step
    advance(device, dt);
    state = cunumpy::to_host(device); // and down again
    if (step % output_every == 0)
      write_output(state);
  }
}

void right_way(HostState initial, int steps, double dt) {
  DeviceState state = cunumpy::to_device<Device>(initial); // once
  for (int step = 0; step < steps; ++step) {
    advance(state, dt);
    if (step % output_every == 0)
      write_output(cunumpy::to_host(state)); // only when writing output
  }
}

void print_advice(const char* loop,
                  const cunumpy::profiling::TransferCounter& counter) {
  const auto findings = counter.advice();
  std::printf("%s advice: %zu finding(s)\n", loop, findings.size());
  for (const auto& finding : findings)
    std::printf("  %s\n", finding.str().c_str());
}

} // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  cunumpy::testing::setup_example_device();
  const int steps = argc > 1 ? std::atoi(argv[1]) : 900;
  HostState state("state", n);

  // Counters that record what advice() needs (off by default).
  using cunumpy::profiling::AdviceRecording;
  using cunumpy::profiling::TransferCounter;
  TransferCounter wrong_counter(TransferCounter::default_max_events,
                                AdviceRecording::on);
  TransferCounter right_counter(TransferCounter::default_max_events,
                                AdviceRecording::on);
  auto wrong = cunumpy::profiling::count_transfers(wrong_counter);
  wrong_way(state, steps, 1e-3);
  wrong.stop();
  std::printf("wrong way: %s\n", wrong.counter().report().c_str());
  print_advice("wrong way", wrong.counter());

  auto right = cunumpy::profiling::count_transfers(right_counter);
  right_way(state, steps, 1e-3);
  right.stop();
  std::printf("right way: %s\n", right.counter().report().c_str());
  print_advice("right way", right.counter());
  std::printf(
      "moved %.1f MB the wrong way, %.1f MB the right way\n",
      (wrong.counter().bytes_to_host() + wrong.counter().bytes_to_device()) /
          1e6,
      (right.counter().bytes_to_host() + right.counter().bytes_to_device()) /
          1e6);
  return 0;
}
