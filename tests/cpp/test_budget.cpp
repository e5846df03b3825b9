// TransferBudget: transfers per phase, rules, Kokkos regions as phases, and
// the TOML rule file.

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <thread>

#include "test_helpers.hpp"

namespace {

using cunumpy_tests::contains;
using cunumpy_tests::message_of;

using cunumpy::EventKind;
using cunumpy::TransferError;
using cunumpy::profiling::Limit;
using cunumpy::profiling::Limits;
using cunumpy::profiling::Rule;
using cunumpy::profiling::TransferBudget;
using cunumpy_tests::site;
using cunumpy_tests::without_elapsed;

/// A marker event: works on every Kokkos, with or without a device.
void marker(
    cunumpy::SourceLocation where = cunumpy::SourceLocation::current()) {
  cunumpy::Impl::record_marker(EventKind::fallback, "kernel()", where);
}

/// A file that is removed when the test ends.
class TemporaryFile {
public:
  TemporaryFile(const std::string& name, const std::string& text)
      : path_(::testing::TempDir() + name) {
    std::ofstream(path_) << text;
  }
  ~TemporaryFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

private:
  std::string path_;
};

TEST(Budget, ReportsTheRunInEveryFormatOfThePlugin) {
  TransferBudget budget;
  int line = 0;
  {
    auto phase = budget.phase("integrate");
    line = __LINE__ + 1;
    marker();
  }
  EXPECT_TRUE(contains(budget.report("text"),
                       "budget: none (the TransferBudget has no rule)"));
  budget.require("integrate", Rule());
  const std::string text = budget.report("text");
  EXPECT_TRUE(contains(text, "cunumpy transfer report: ")) << text;
  EXPECT_TRUE(contains(text, "phase 'integrate' (1 call); rule: ")) << text;
  EXPECT_TRUE(contains(text, site(__FILE__, line))) << text;
  const std::string json = budget.report("json");
  EXPECT_TRUE(contains(json, "\"format\": \"cunumpy-report\"")) << json;
  EXPECT_TRUE(contains(json, "\"name\": \"integrate\"")) << json;
  EXPECT_FALSE(contains(json, "\"verdict\": \"ok\"")) << json;
  EXPECT_FALSE(contains(json, "\"verdict\": \"none\"")) << json;
  EXPECT_TRUE(contains(budget.report("hatchet"), "\"name\": \"integrate\""));
  EXPECT_TRUE(contains(budget.report("summary"), "cunumpy: budget"));
  EXPECT_EQ(cunumpy::profiling::report_formats(),
            (std::vector<std::string>{"text", "summary", "json", "hatchet",
                                      "sarif", "junit"}));
  const std::string message =
      message_of<std::invalid_argument>([&] { (void)budget.report("csv"); });
  EXPECT_TRUE(contains(message, "no report format 'csv'")) << message;
  EXPECT_TRUE(contains(message, "'hatchet'")) << message;
}

TEST(Budget, PhasesCountTheirEventsAndCalls) {
  TransferBudget budget;
  for (int i = 0; i < 3; ++i) {
    auto phase = budget.phase("solve");
    marker();
  }
  EXPECT_EQ(budget.calls("solve"), 3u);
  EXPECT_EQ(budget["solve"].fallback(), 3u);
  EXPECT_EQ(budget.calls("never"), 0u);
  EXPECT_EQ(budget["never"].total(), 0u);
}

TEST(Budget, EventsCountInTheInnermostPhaseOnly) {
  TransferBudget budget;
  {
    auto outer = budget.phase("outer");
    marker();
    {
      auto inner = budget.phase("inner");
      marker();
      marker();
    }
  }
  EXPECT_EQ(budget["outer"].fallback(), 1u);
  EXPECT_EQ(budget["inner"].fallback(), 2u);
  EXPECT_EQ(budget.total().fallback(), 3u);
}

TEST(Budget, NotStartedPhasesRunUncountedUntilStart) {
  TransferBudget budget(false);
  EXPECT_FALSE(budget.started());
  {
    auto setup = budget.phase("setup");
    marker();
  }
  budget.start();
  {
    auto step = budget.phase("step");
    marker();
  }
  budget.stop();
  {
    auto step = budget.phase("step");
    marker();
  }
  EXPECT_EQ(budget.calls("setup"), 0u);
  EXPECT_EQ(budget["setup"].total(), 0u);
  EXPECT_EQ(budget.calls("step"), 1u);
  EXPECT_EQ(budget["step"].total(), 1u);
}

TEST(Budget, CountWrapsCallablesWithArgumentsAndResults) {
  TransferBudget budget;
  auto add = budget.count("add", [](int a, const std::string& b) {
    marker();
    return a + static_cast<int>(b.size());
  });
  EXPECT_EQ(add(1, "abc"), 4);
  EXPECT_EQ(add(2, ""), 2);
  int value = 5;
  auto reference = budget.count("ref", [](int& x) -> int& { return x; });
  reference(value) = 9;
  EXPECT_EQ(value, 9);
  auto move_only =
      budget.count("move", [](std::unique_ptr<int> p) { return *p; });
  EXPECT_EQ(move_only(std::make_unique<int>(3)), 3);
  EXPECT_EQ(budget.calls("add"), 2u);
  EXPECT_EQ(budget["add"].fallback(), 2u);
  EXPECT_EQ(budget.calls("ref"), 1u);
}

TEST(Budget, AnExceptionInsideAPhaseClosesIt) {
  TransferBudget budget;
  auto failing = budget.count("failing", [] {
    marker();
    throw std::runtime_error("inside the phase");
  });
  EXPECT_THROW(failing(), std::runtime_error);
  marker(); // outside any phase now
  EXPECT_EQ(budget["failing"].fallback(), 1u);
  EXPECT_EQ(budget.calls("failing"), 1u);
  EXPECT_EQ(budget.total().fallback(), 2u);
}

TEST(Budget, AKokkosRegionIsAPhaseWhenARuleNamesIt) {
  TransferBudget budget;
  for (int i = 0; i < 2; ++i) {
    Kokkos::Profiling::pushRegion("integrate");
    marker();
    Kokkos::Profiling::pushRegion("inner");
    marker();
    Kokkos::Profiling::popRegion();
    Kokkos::Profiling::popRegion();
  }
  // No rule names "inner": its events count in "integrate".
  budget.require("integrate", Rule().allow(EventKind::fallback));
  EXPECT_EQ(budget.calls("integrate"), 2u);
  EXPECT_EQ(budget["integrate"].fallback(), 4u);
  EXPECT_TRUE(budget.violations().empty());
  // A rule on "inner", set after the run, takes its events out of
  // "integrate".
  budget.require("inner", Rule());
  EXPECT_EQ(budget["integrate"].fallback(), 2u);
  EXPECT_EQ(budget["inner"].fallback(), 2u);
  EXPECT_EQ(budget.calls("inner"), 2u);
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].phase, "inner");
}

TEST(Budget, RulesSetAfterTheRunDecideThePhases) {
  // As in a test that runs the loop, then states its rules.
  TransferBudget budget;
  Kokkos::Profiling::pushRegion("step");
  Kokkos::Profiling::pushRegion("output");
  marker();
  Kokkos::Profiling::popRegion();
  Kokkos::Profiling::popRegion();
  budget.require("step", Rule());
  ASSERT_EQ(budget.violations().size(), 1u); // output is not a phase yet
  budget.require("output", Rule().allow(EventKind::fallback));
  EXPECT_TRUE(budget.violations().empty());
}

TEST(Budget, RegionsLibrariesPushAreTransparentToTheCallersRule) {
  // Belos, Tpetra, Teuchos timers and Kokkos Kernels push their own regions
  // inside a solve; the copies made there must break the solve's rule.
  TransferBudget budget;
  budget.require("belos_solve", Rule());
  Kokkos::Profiling::pushRegion("belos_solve");
  for (const char* library :
       {"Belos: Operation Op*x", "Tpetra::CrsMatrix::apply",
        "KokkosBlas::dot[ETI]", "Teuchos::TimeMonitor"}) {
    Kokkos::Profiling::pushRegion(library);
    marker();
    Kokkos::Profiling::popRegion();
  }
  Kokkos::Profiling::popRegion();
  EXPECT_EQ(budget["belos_solve"].fallback(), 4u);
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].phase, "belos_solve");
  EXPECT_EQ(violations[0].limit, Limit::forbidden);
  EXPECT_EQ(violations[0].actual, "4");
  const auto phases = budget.phases();
  EXPECT_EQ(phases, std::vector<std::string>{"belos_solve"});
  EXPECT_THROW(budget.check(), TransferError);
}

TEST(Budget, TheRegionTreeKeepsEachPathWithOwnAndInclusiveCounts) {
  TransferBudget budget;
  budget.require("step", Rule().allow(EventKind::fallback));
  for (int i = 0; i < 3; ++i) {
    Kokkos::Profiling::pushRegion("step");
    marker();
    Kokkos::Profiling::pushRegion("solve");
    marker();
    marker();
    Kokkos::Profiling::popRegion();
    Kokkos::Profiling::popRegion();
  }
  Kokkos::Profiling::pushRegion("output");
  Kokkos::Profiling::pushRegion("solve");
  marker();
  Kokkos::Profiling::popRegion();
  Kokkos::Profiling::popRegion();
  const auto snapshot = budget.snapshot();
  ASSERT_EQ(snapshot.regions.size(),
            5u); // root, step, step/solve, output, output/solve
  const auto find = [&](const std::string& path) {
    for (const auto& node : snapshot.regions)
      if (node.path == path)
        return node;
    ADD_FAILURE() << "no region " << path;
    return cunumpy::profiling::RegionNode{};
  };
  const auto fallback = [](const cunumpy::profiling::KindTable& table) {
    return table[static_cast<std::size_t>(EventKind::fallback)].count;
  };
  EXPECT_EQ(find("step").calls, 3u);
  EXPECT_EQ(fallback(find("step").own), 3u);
  EXPECT_EQ(fallback(find("step").inclusive), 9u);
  EXPECT_EQ(find("step/solve").calls, 3u);
  EXPECT_EQ(find("step/solve").phase, "step");
  EXPECT_FALSE(find("step/solve").is_phase);
  EXPECT_EQ(fallback(find("output/solve").own), 1u);
  EXPECT_EQ(find("output/solve").phase, "");
  EXPECT_EQ(fallback(snapshot.outside.totals), 1u);
  EXPECT_EQ(fallback(snapshot.total), 10u);
  ASSERT_EQ(snapshot.phases.size(), 1u);
  EXPECT_EQ(fallback(snapshot.phases[0].totals), 9u);
}

TEST(Budget, ARuleWhosePhaseNeverRanIsBrokenUnlessOptional) {
  TransferBudget budget;
  Kokkos::Profiling::pushRegion("integrate");
  Kokkos::Profiling::popRegion();
  Kokkos::Profiling::pushRegion("output");
  Kokkos::Profiling::popRegion();
  budget.require("integrat", Rule()); // a typo
  auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].limit, Limit::never_entered);
  EXPECT_EQ(violations[0].phase, "integrat");
  const std::string message = violations[0].str();
  // The phases that ran, closest name first.
  EXPECT_TRUE(contains(message, "'integrate', 'output'")) << message;
  EXPECT_TRUE(contains(message, "optional")) << message;
  budget.require("integrat", Rule().optional());
  EXPECT_TRUE(budget.violations().empty());
  // A rule that requires zero calls is met by a phase that never ran.
  budget.require("never", Rule().calls(0));
  EXPECT_TRUE(budget.violations().empty());
}

TEST(Budget, EventsOfAThreadWithoutRegionsAreInTheRegionOpenElsewhere) {
  // A worker pushes a region; this thread, inside none, makes a marker
  // while it is open: it counts there, as a pool thread's work would.
  TransferBudget budget;
  std::atomic<int> stage{0};
  std::thread worker([&] {
    Kokkos::Profiling::pushRegion("solve");
    marker();
    stage = 1;
    while (stage != 2)
      std::this_thread::yield();
    Kokkos::Profiling::popRegion();
  });
  while (stage != 1)
    std::this_thread::yield();
  marker();
  stage = 2;
  worker.join();
  marker();
  EXPECT_EQ(budget["solve"].fallback(), 2u);
  EXPECT_EQ(budget.total().fallback(), 3u);
}

TEST(Budget, ARegionInsideAPhaseOfTheSameNameIsOneCall) {
  TransferBudget budget;
  auto step = budget.count("step", [] {
    Kokkos::Profiling::pushRegion("step");
    marker();
    Kokkos::Profiling::popRegion();
  });
  step();
  step();
  EXPECT_EQ(budget.calls("step"), 2u);
  EXPECT_EQ(budget["step"].fallback(), 2u);
}

TEST(Budget, ARecursiveRegionIsOneCallWhateverIsBetween) {
  TransferBudget budget;
  budget.require("solve", Rule().allow(EventKind::fallback));
  auto step = budget.count("step", [] {
    Kokkos::Profiling::pushRegion("solve");   // a phase
    Kokkos::Profiling::pushRegion("library"); // not one
    Kokkos::Profiling::pushRegion("step");
    marker();
    Kokkos::Profiling::popRegion();
    Kokkos::Profiling::popRegion();
    Kokkos::Profiling::popRegion();
  });
  step();
  step();
  step();
  EXPECT_EQ(budget.calls("step"), 3u);
  EXPECT_EQ(budget.calls("solve"), 3u);
  EXPECT_EQ(budget["step"].fallback(), 3u);
}

TEST(Budget, ADefaultRuleForbidsEveryTransferAndNamesTheLine) {
  TransferBudget budget;
  int line = 0;
  {
    auto phase = budget.phase("integrate");
    line = __LINE__ + 1;
    marker();
  }
  budget.require("integrate", Rule());
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].phase, "integrate");
  EXPECT_EQ(violations[0].limit, Limit::forbidden);
  ASSERT_EQ(violations[0].events.size(), 1u);
  EXPECT_EQ(violations[0].events[0].site.str(), site(__FILE__, line));
  const std::string message =
      message_of<TransferError>([&] { budget.check(); });
  EXPECT_EQ(without_elapsed(message), without_elapsed(budget.report()));
  EXPECT_TRUE(contains(message, "phase 'integrate': fallback is not allowed, "
                                "got 1 event(s)"));
  EXPECT_TRUE(contains(message, site(__FILE__, line)));
}

// report() is report("text"), the plugin's text: the verdict, every phase
// with its events and rule, the broken rules; check() and job_check()
// (outside MPI) throw it.
TEST(Budget, ReportIsTheTextReportOfEveryPhaseAndTheBrokenRules) {
  TransferBudget budget;
  int line = 0;
  for (int i = 0; i < 2; ++i) {
    {
      auto phase = budget.phase("integrate");
      line = __LINE__ + 1;
      marker();
    }
    auto output = budget.phase("output");
  }
  budget.require("integrate", Rule());
  budget.require("output", Rule().calls(3));
  budget.require("absent", Rule());
  const std::string text = without_elapsed(budget.report("text"));
  EXPECT_EQ(without_elapsed(budget.report()), text);
  EXPECT_EQ(without_elapsed(message_of<TransferError>([&] { budget.check(); })),
            text);
  EXPECT_EQ(
      without_elapsed(message_of<TransferError>([&] { budget.job_check(); })),
      text);
  for (const std::string& part :
       {std::string("cunumpy transfer report: "),
        std::string("\nbudget: BROKEN, "),
        std::string("\nphase 'integrate' (2 calls); rule: allow nothing"),
        std::string("\nphase 'output' (2 calls); rule: "),
        std::string("\nphase 'absent' (0 calls); rule: "),
        std::string("  never entered\n"), std::string("\nbroken rules ("),
        std::string("  phase 'integrate': fallback is not allowed"),
        site(__FILE__, line)})
    EXPECT_TRUE(contains(text, part));
}

TEST(Budget, CallsRuleChecksTheCallCount) {
  TransferBudget budget;
  auto step = budget.count("step", [] {});
  for (int i = 0; i < 3; ++i)
    step();
  budget.require("step", Rule().calls(3));
  EXPECT_TRUE(budget.violations().empty());
  budget.require("step", Rule().calls(4));
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].limit, Limit::calls);
  EXPECT_EQ(violations[0].allowed, "4");
  EXPECT_EQ(violations[0].actual, "3");
  budget.require("absent", Rule().calls(1));
  EXPECT_EQ(budget.violations().size(), 2u);
}

TEST(Budget, IgnoredKindsAreNotChecked) {
  TransferBudget budget;
  {
    auto phase = budget.phase("p");
    marker();
  }
  budget.require("p", Rule().ignore({EventKind::fallback}));
  EXPECT_TRUE(budget.violations().empty());
}

TEST(Budget, AKindBothAllowedAndIgnoredIsAnError) {
  TransferBudget budget;
  const std::string message = message_of<std::invalid_argument>(
      [&] { budget.require("p", Rule().allow(EventKind::sync)); });
  EXPECT_NE(message.find("'sync' is both allowed and ignored"),
            std::string::npos)
      << message;
}

TEST(Budget, LimitsAndRulesDescribeThemselves) {
  EXPECT_EQ(Limits().str(), "no limits");
  EXPECT_EQ(Limits().max_nbytes(8).blocking(false).str(),
            "max_nbytes=8, blocking=false");
  EXPECT_EQ(Rule().str(), "allow nothing; ignore device_copy, sync");
  EXPECT_EQ(Rule()
                .allow(EventKind::to_host, Limits().max_count(10))
                .ignore({EventKind::device_copy})
                .calls(5)
                .str(),
            "allow to_host (max_count=10); ignore device_copy; calls=5");
}

// With real copies to a device (the fake device on Kokkos 3); the same
// rules with synthetic Kokkos Tools events on every Kokkos: test_events.cpp
// (SyntheticBudget).
#if CUNUMPY_HAS_TEST_DEVICE

using cunumpy_tests::TestDevice;
using DeviceVector = Kokkos::View<double*, TestDevice>;
using HostVector = Kokkos::View<double*, Kokkos::HostSpace>;

TEST(Budget, MaxNbytesAndBlocking) {
  Kokkos::View<double, TestDevice> norm("norm");
  DeviceVector state("state", 100);
  TransferBudget budget;
  auto iterate = budget.count("iterate", [&](bool add_big_copy) {
    double value = 0;
    Kokkos::deep_copy(value, norm); // 8 bytes, blocking
    if (add_big_copy)
      (void)cunumpy::to_host(state);
  });
  iterate(false);
  budget.require("iterate",
                 Rule().allow(EventKind::to_host, Limits().max_nbytes(8)));
  EXPECT_TRUE(budget.violations().empty()) << budget.report();

  budget.require(
      "iterate",
      Rule().allow(EventKind::to_host, Limits().max_nbytes(8).blocking(false)));
  auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].limit, Limit::blocking);

  iterate(true);
  budget.require("iterate",
                 Rule().allow(EventKind::to_host, Limits().max_nbytes(8)));
  violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].limit, Limit::max_nbytes);
  EXPECT_EQ(violations[0].actual, "800");
  ASSERT_EQ(violations[0].events.size(), 1u); // only the big copy offends
  EXPECT_EQ(violations[0].events[0].what,
            "to_host(shape=(100,), dtype=float64)");
}

TEST(Budget, MaxCountAndMaxTotalBytes) {
  DeviceVector state("state", 1000);
  TransferBudget budget;
  for (int i = 0; i < 4; ++i) {
    auto output = budget.phase("output");
    (void)cunumpy::to_host(state);
  }
  budget.require("output",
                 Rule().allow(EventKind::to_host,
                              Limits().max_count(4).max_total_bytes(32000)));
  EXPECT_TRUE(budget.violations().empty()) << budget.report();
  budget.require("output",
                 Rule().allow(EventKind::to_host,
                              Limits().max_count(3).max_total_bytes(31999)));
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 2u);
  EXPECT_EQ(violations[0].limit, Limit::max_count);
  EXPECT_EQ(violations[0].actual, "4");
  EXPECT_EQ(violations[1].limit, Limit::max_total_bytes);
  EXPECT_EQ(violations[1].actual, "32000");
}

TEST(Budget, ImplicitFalseRejectsScalarReads) {
  Kokkos::View<double, TestDevice> norm("norm");
  TransferBudget budget;
  {
    auto phase = budget.phase("iterate");
    double value = 0;
    Kokkos::deep_copy(value, norm);
  }
  budget.require("iterate",
                 Rule()
                     .allow(EventKind::to_host, Limits().max_nbytes(8))
                     .allow(EventKind::sync, Limits().implicit(false))
                     .ignore({EventKind::device_copy}));
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].kind, EventKind::sync);
  EXPECT_EQ(violations[0].limit, Limit::implicit);
}

TEST(Budget, DeviceCopiesAreIgnoredByDefault) {
  DeviceVector a("a", 10), b("b", 10);
  TransferBudget budget;
  {
    auto phase = budget.phase("p");
    Kokkos::deep_copy(b, a);
  }
  budget.require("p", Rule());
  EXPECT_TRUE(budget.violations().empty());
  budget.require("p", Rule().ignore({EventKind::sync}));
  EXPECT_EQ(budget.violations().size(), 1u);
}

TEST(Budget, ACopyInTheTimeLoopIsReportedWithItsLine) {
  HostVector host("host", 10);
  DeviceVector device("device", 10);
  TransferBudget budget(false);
  int line = 0;
  auto integrate = budget.count("integrate", [&](int step) {
    if (step == 3) {
      line = __LINE__ + 1;
      Kokkos::deep_copy(host, device); // the copy that sneaked in
    }
  });
  budget.start();
  for (int step = 0; step < 5; ++step)
    integrate(step);
  budget.require("integrate", Rule().calls(5));
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u);
  ASSERT_EQ(violations[0].events.size(), 1u);
  EXPECT_EQ(violations[0].events[0].site.str(), site(__FILE__, line));
  EXPECT_THROW(budget.check(), TransferError);
}

TEST(Budget, RuleFileFromTheIssue) {
  TemporaryFile file("rules.toml", R"(
[phases.integrate]
calls = 2                                    # optional
allow.to_host = { max_nbytes = 8, blocking = true }
ignore = ["device_copy", "sync"]             # the default

[phases.output]
allow.to_host = { max_count = 10, max_total_bytes = 8000000 }
)");
  Kokkos::View<double, TestDevice> norm("norm");
  DeviceVector state("state", 100);
  auto budget = TransferBudget::from_file(file.path());
  for (int step = 0; step < 2; ++step) {
    auto integrate = budget.phase("integrate");
    double value;
    Kokkos::deep_copy(value, norm);
  }
  {
    auto output = budget.phase("output");
    (void)cunumpy::to_host(state);
  }
  EXPECT_TRUE(budget.violations().empty()) << budget.report();
  const auto rule = budget.rule("output");
  ASSERT_TRUE(rule.has_value());
  EXPECT_EQ(rule->allowed().at(EventKind::to_host).max_count(), 10u);
}

#endif // CUNUMPY_HAS_TEST_DEVICE

TEST(BudgetFile, PhasesWithoutTableAreUnconstrainedTablesWithoutAllowForbid) {
  TransferBudget budget;
  budget.require_toml("[phases.quiet]\n");
  {
    auto free = budget.phase("free");
    marker();
  }
  {
    auto quiet = budget.phase("quiet");
    marker();
  }
  const auto violations = budget.violations();
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].phase, "quiet");
}

TEST(BudgetFile, ErrorsNameTheFileTheLineAndTheKey) {
  struct Case {
    const char* toml;
    const char* expected;
  };
  const Case cases[] = {
      {"[phases.a]\nallow.to_hst = {}\n",
       "rules.toml:2: key 'phases.a.allow.to_hst': unknown event kind "
       "'to_hst'"},
      {"[phases.a]\ncals = 3\n",
       "rules.toml:2: key 'phases.a.cals': unknown key"},
      {"[phases.a]\nallow.to_host = { max_nbytes = -1 }\n",
       "rules.toml:2: key 'phases.a.allow.to_host.max_nbytes': must be a "
       "non-negative integer, not -1"},
      {"[phases.a]\nallow.to_host = { max_count = 2.5 }\n",
       "rules.toml:2: key 'phases.a.allow.to_host.max_count': must be a "
       "non-negative integer, not a float"},
      {"[phases.a]\nallow.to_host = { max_size = 8 }\n",
       "rules.toml:2: key 'phases.a.allow.to_host.max_size': unknown limit"},
      {"[phases.a]\nallow.to_host = { blocking = 1 }\n",
       "rules.toml:2: key 'phases.a.allow.to_host.blocking': must be true or "
       "false"},
      {"[phases.a]\nignore = [\"sink\"]\n",
       "rules.toml:2: key 'phases.a.ignore': unknown event kind 'sink'"},
      {"[phases.a]\nallow.sync = {}\n",
       "rules.toml:1: key 'phases.a': phase 'a': 'sync' is both allowed and "
       "ignored"},
      {"[phase.a]\n", "rules.toml:1: key 'phase': unknown key"},
      {"[phases.a]\ncalls = \"3\"\n",
       "rules.toml:2: key 'phases.a.calls': must be a non-negative integer, "
       "not a string"},
      {"[phases.a\n", "rules.toml:1:"},
  };
  for (const Case& c : cases) {
    TemporaryFile file("rules.toml", c.toml);
    const std::string message = message_of<std::invalid_argument>(
        [&] { (void)TransferBudget::from_file(file.path()); });
    EXPECT_NE(message.find(c.expected), std::string::npos)
        << "for:\n"
        << c.toml << "got: " << message;
  }
  const std::string missing = message_of<std::invalid_argument>(
      [] { (void)TransferBudget::from_file("/nonexistent/rules.toml"); });
  EXPECT_NE(missing.find("cannot read rule file '/nonexistent/rules.toml'"),
            std::string::npos)
      << missing;
}

// A path that names no rules is refused, not a budget that passes whatever
// the program copies: a directory (which opens for reading on Linux), an
// empty file, a file of comments or an empty [phases] table.
TEST(Budget, RuleFileWithoutPhasesIsAnError) {
  const std::string directory = message_of<std::invalid_argument>(
      [] { (void)TransferBudget::from_file(::testing::TempDir()); });
  EXPECT_NE(directory.find("is a directory; name the .toml file in it"),
            std::string::npos)
      << directory;
  for (const std::string text : {"", "# to be written\n", "[phases]\n"}) {
    TemporaryFile file("empty.toml", text);
    const std::string message = message_of<std::invalid_argument>(
        [&] { (void)TransferBudget::from_file(file.path()); });
    EXPECT_NE(message.find("rule file '" + file.path() +
                           "' defines no phases; a rule file holds "
                           "[phases.<name>] tables"),
              std::string::npos)
        << "for '" << text << "': " << message;
  }
  // One phase without limits is a rule (nothing may happen in it).
  TemporaryFile quiet("quiet.toml", "[phases.quiet]\n");
  EXPECT_TRUE(TransferBudget::from_file(quiet.path()).rule("quiet"));
}

} // namespace
