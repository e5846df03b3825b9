// Rule files of many phases: loading and checking are linear in the number
// of phases (a rule file generated per region of a large code, say).
//
//   build/bench/bench_rule_files --benchmark_filter=phases

#include <benchmark/benchmark.h>
#include <string>

#include <cunumpy/cunumpy.hpp>

namespace {

std::string rule_file(int phases) {
  std::string text;
  text.reserve(std::size_t(phases) * 48);
  for (int i = 0; i < phases; ++i)
    text += "[phases.region_" + std::to_string(i) +
            "]\noptional = true\nallow.to_host = { max_nbytes = 8 }\n";
  return text;
}

/// require_toml and one check of every rule, none of whose phases ran.
void load_and_check_phases(benchmark::State& state) {
  const std::string text = rule_file(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    cunumpy::profiling::TransferBudget budget;
    budget.require_toml(text, "generated.toml");
    benchmark::DoNotOptimize(budget.violations());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.counters["bytes"] = static_cast<double>(text.size());
}

} // namespace

BENCHMARK(load_and_check_phases)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);
