// A time loop under a TransferBudget: the integrate phase may not copy at
// all, output every N steps may bring the state home within a byte budget.
// With --copy-in-step a copy sneaks into the time step, and the budget
// report names its line. Exit status 1 when a rule is broken.
//
//   ./budget_time_loop [--copy-in-step] [--rules budget.toml]

#include <cstdio>
#include <string>

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>
#include <cunumpy/testing/fake_device.hpp>

namespace {

using cunumpy::EventKind;
using cunumpy::profiling::Limits;
using cunumpy::profiling::Rule;
using cunumpy::profiling::TransferBudget;
using Device = cunumpy::testing::example_device_space;
using DeviceState = Kokkos::View<double*, Device>;
using Policy = Kokkos::RangePolicy<typename DeviceState::execution_space>;

constexpr int n = 100000;
constexpr int steps = 200;
constexpr int output_every = 20;

struct Model {
  DeviceState state{"state", n};
  Kokkos::View<double*, Kokkos::HostSpace> diagnostics{"diagnostics", n};
  bool copy_in_step = false;

  void integrate(double dt) {
    auto u = state;
    Kokkos::parallel_for(
        "integrate", Policy(0, n),
        KOKKOS_LAMBDA(int i) { u(i) += dt * (1.0 - u(i)); });
    if (copy_in_step)
      Kokkos::deep_copy(diagnostics, state); // the copy that sneaks in
  }

  void save() const {
    auto host = cunumpy::to_host(state);
    std::printf("  output: state[0] = %.6f\n", host(0));
  }
};

} // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  cunumpy::testing::setup_example_device();
  Model model;
  std::string rules_file;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument == "--copy-in-step")
      model.copy_in_step = true;
    else if (argument == "--rules" && i + 1 < argc)
      rules_file = argv[++i];
  }

  cunumpy::profiling::BudgetOptions options;
  options.started = false; // setup is not counted
  options.advice = cunumpy::profiling::AdviceRecording::on; // for advice()
  TransferBudget budget(options);
  auto integrate =
      budget.count("integrate", [&](double dt) { model.integrate(dt); });
  budget.start();
  for (int step = 0; step < steps; ++step) {
    integrate(1e-3);
    if (step % output_every == 0) {
      auto output = budget.phase("output");
      model.save();
    }
  }
  budget.stop();

  if (!rules_file.empty()) {
    budget.require_file(rules_file);
  } else {
    budget.require("integrate", Rule().calls(steps)); // no transfer at all
    budget.require("output", Rule()
                                 .calls(steps / output_every)
                                 .allow(EventKind::to_host,
                                        Limits()
                                            .max_count(steps / output_every)
                                            .max_total_bytes(8000000)));
  }
  // A few lines; budget.report() is the whole text report.
  std::printf("%s", budget.report("summary").c_str());
  // Advice never changes the verdict; it says which copies to change.
  const auto findings = budget.advice();
  std::printf("advice: %zu finding(s)\n", findings.size());
  for (const auto& finding : findings)
    std::printf("  %s\n", finding.str().c_str());
  return budget.violations().empty() ? 0 : 1;
}
