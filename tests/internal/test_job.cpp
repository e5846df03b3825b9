// The ranks of a job in one report (src/core/report/job.hpp): rank sets,
// the names of the numbers kept per region, and merge_reports, which must
// be associative and commutative and survive its own JSON, so that merges
// in any tree (MPI's) and one file at a time (cunumpy-report) agree.

#include <gtest/gtest.h>
#include <set>

#include "report/job.hpp"
#include "report/report.hpp"

namespace {

using cunumpy::EventKind;
using cunumpy::Impl::RankSet;
using cunumpy::Impl::Report;
namespace measure = cunumpy::Impl::measure;

TEST(RankSets, RangesInAnyOrderCoalesce) {
  RankSet ranks;
  for (int rank : {5, 3, 9, 4, 0, 6, 1, 8})
    ranks.insert(rank);
  EXPECT_EQ(ranks.ranges(),
            (std::vector<RankSet::Range>{{0, 1}, {3, 6}, {8, 9}}));
  EXPECT_EQ(ranks.size(), 8u);
  EXPECT_TRUE(ranks.contains(4));
  EXPECT_FALSE(ranks.contains(7));
  EXPECT_EQ(ranks.missing(12).ranges(),
            (std::vector<RankSet::Range>{{2, 2}, {7, 7}, {10, 11}}));
  RankSet some;
  some.insert(4, 8);
  EXPECT_EQ(ranks.minus(some).ranges(),
            (std::vector<RankSet::Range>{{0, 1}, {3, 3}, {9, 9}}));
  EXPECT_EQ(ranks.common(some), 4);
  EXPECT_EQ(RankSet(7).common(ranks), -1);
  EXPECT_EQ(ranks.text(), "0, 1, 3-6, 8, 9");
  RankSet huge;
  huge.insert(0, 2147483646);
  EXPECT_EQ(huge.minus(RankSet(0)).ranges(),
            (std::vector<RankSet::Range>{{1, 2147483646}}));
}

TEST(RankSets, ALongListIsCutWithHowManyMore) {
  RankSet ranks;
  for (int rank = 0; rank < 3000; rank += 7)
    ranks.insert(rank);
  const std::string text = ranks.text(100);
  EXPECT_LE(text.size(), 130u);
  EXPECT_NE(text.find(" more)"), std::string::npos) << text;
}

TEST(Measures, EachNumberHasItsOwnName) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < measure::size; ++i)
    EXPECT_TRUE(names.insert(measure::name(i)).second) << measure::name(i);
  for (EventKind kind : cunumpy::all_event_kinds) {
    const std::string name(cunumpy::to_string(kind));
    EXPECT_EQ(measure::name(measure::count(kind)), name + " count");
    EXPECT_EQ(measure::name(measure::bytes(kind)), name + " bytes");
    EXPECT_EQ(measure::name(measure::seconds(kind, true)),
              name + " seconds (inc)");
  }
}

/// Rank `rank`'s report of a job of 4: regions step and step/solve (and
/// output on even ranks), a phase step broken on rank 1, a finding on ranks
/// 0 and 2. Times are sums of halves, exact in any order.
Report rank_report(int rank) {
  Report report;
  report.program = "app";
  report.rank = rank;
  report.rank_known = true;
  report.size = 4;
  report.run_id = "slurm:1.0";
  report.has_budget = true;
  report.elapsed = 1.0 + 0.5 * rank;
  report.budget.device.present = true;
  auto& regions = report.budget.regions;
  regions.resize(3);
  regions[1].name = regions[1].path = "step";
  regions[1].depth = 1;
  regions[1].calls = 10;
  regions[1].seconds = 0.5;
  regions[2].name = "solve";
  regions[2].path = "step/solve";
  regions[2].parent = 1;
  regions[2].depth = 2;
  regions[2].calls = 10;
  regions[2].seconds = 0.25;
  auto& copies = regions[2].own[static_cast<std::size_t>(EventKind::to_host)];
  copies.count = static_cast<std::uint64_t>(rank);
  copies.nbytes = 8u * static_cast<std::uint64_t>(rank);
  copies.seconds = 0.125 * rank;
  regions[2].inclusive = regions[1].inclusive = regions[0].inclusive =
      regions[2].own;
  report.budget.total = regions[0].inclusive;
  if (rank % 2 == 0) {
    regions.emplace_back();
    regions[3].name = regions[3].path = "output";
    regions[3].depth = 1;
    regions[3].calls = 2;
  }
  cunumpy::profiling::PhaseSummary step;
  step.name = "step";
  step.calls = 10;
  step.entered = true;
  step.totals = regions[2].own;
  step.broken = rank == 1;
  report.budget.phases.push_back(step);
  if (rank == 1) {
    cunumpy::profiling::Violation violation;
    violation.phase = "step";
    violation.kind = EventKind::to_host;
    violation.actual = "1";
    report.budget.violations.push_back(violation);
  }
  if (rank % 2 == 0) {
    cunumpy::profiling::Finding finding;
    finding.region = finding.phase = "step";
    finding.count = 4;
    finding.calls = 2;
    finding.seconds = 0.5;
    finding.saving_seconds = 0.25 * (rank + 1);
    finding.fix = "fix it";
    cunumpy::profiling::FindingSite site;
    site.site.file = "app.cpp";
    site.site.line = 7;
    finding.sites.push_back(site);
    report.advice.push_back(finding);
  }
  return report;
}

std::string json_of(const Report& report) {
  return cunumpy::Impl::format_json(report);
}

Report merged(std::initializer_list<int> ranks) {
  Report job;
  bool first = true;
  for (int rank : ranks) {
    if (first)
      job = rank_report(rank);
    else
      cunumpy::Impl::merge_reports(job, rank_report(rank));
    first = false;
  }
  cunumpy::Impl::start_job(job);
  return job;
}

TEST(MergeReports, InAnyTreeTheSameJob) {
  const Report sequential = merged({0, 1, 2, 3});
  // MPI's tree: (0 1) (2 3); and the ranks in another order.
  Report low = merged({0, 1}), high = merged({2, 3});
  cunumpy::Impl::merge_reports(low, high);
  EXPECT_EQ(json_of(low), json_of(sequential));
  Report reversed = merged({3, 2});
  cunumpy::Impl::merge_reports(reversed, merged({1, 0}));
  EXPECT_EQ(json_of(reversed), json_of(sequential));
  // Through its JSON, as the ranks send it.
  Report read = cunumpy::Impl::read_json_report(json_of(merged({0, 1})));
  cunumpy::Impl::merge_reports(
      read, cunumpy::Impl::read_json_report(json_of(merged({2, 3}))));
  EXPECT_EQ(json_of(read), json_of(sequential));
}

TEST(MergeReports, StatisticsOverTheRanks) {
  const Report job = merged({0, 1, 2, 3});
  EXPECT_EQ(job.verdict(), "broken");
  EXPECT_EQ(job.job.broken.text(), "1");
  ASSERT_EQ(job.budget.regions.size(), 4u);
  EXPECT_EQ(job.budget.regions[3].path, "output");
  const auto& solve = job.job.regions[2];
  const auto& count = solve.values[measure::count(EventKind::to_host)];
  EXPECT_EQ(count.min, 0.0);
  EXPECT_EQ(count.max, 3.0);
  EXPECT_EQ(count.max_rank, 3);
  EXPECT_EQ(count.sum, 6.0);
  // output: on ranks 0 and 2 only; the others count 0 there.
  EXPECT_EQ(job.job.regions[3].ranks, 2u);
  ASSERT_EQ(job.advice.size(), 1u);
  EXPECT_EQ(job.job.findings[0].ranks.text(), "0, 2");
  EXPECT_EQ(job.job.findings[0].saving.max, 0.75);
  EXPECT_EQ(job.job.findings[0].saving.max_rank, 2);
  // Rank 3 missing: not ok, and named.
  const Report partial = merged({0, 2, 1});
  EXPECT_EQ(cunumpy::Impl::missing_ranks(partial).text(), "3");
  Report kept = merged({0, 2});
  EXPECT_EQ(kept.verdict(), "incomplete");
  EXPECT_TRUE(kept.failed());
}

TEST(MergeReports, ARankTwiceIsRefused) {
  Report job = merged({0, 1});
  EXPECT_THROW(cunumpy::Impl::merge_reports(job, rank_report(1)),
               cunumpy::Impl::ReportError);
}

} // namespace
