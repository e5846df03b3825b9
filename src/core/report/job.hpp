#ifndef CUNUMPY_SRC_REPORT_JOB_HPP
#define CUNUMPY_SRC_REPORT_JOB_HPP

// The ranks of a job in one report. A report of several ranks is a plain
// Report whose numbers are the ranks' sums, and whose `job` says which
// ranks it holds, which of them failed how, and per region, phase and
// finding the minimum, mean and maximum over the ranks. Merging two such
// reports (merge_reports) is associative and commutative in everything but
// the order in which phases and regions are listed (the lower ranks'
// first), so partial merges merge again: cunumpy-report merges files one at
// a time, the plugin merges over MPI in a tree.

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <cunumpy/event.hpp>

namespace cunumpy::Impl {

/// Sorted, disjoint ranges of ranks.
class RankSet {
public:
  using Range = std::pair<int, int>; ///< first and last, inclusive

  RankSet() = default;
  explicit RankSet(int rank) { ranges_.emplace_back(rank, rank); }

  /// Adds `rank`; quick when the ranks come in increasing order.
  void insert(int rank);
  /// Adds the ranges `first` to `last` (inclusive).
  void insert(int first, int last);
  void insert(const RankSet& other);
  bool contains(int rank) const;
  /// A rank both sets hold, or -1.
  int common(const RankSet& other) const;
  bool empty() const noexcept { return ranges_.empty(); }
  std::uint64_t size() const noexcept;
  /// The lowest rank (-1 when empty).
  int lowest() const noexcept {
    return ranges_.empty() ? -1 : ranges_.front().first;
  }
  const std::vector<Range>& ranges() const noexcept { return ranges_; }
  /// The ranks of [0, size) not in the set.
  RankSet missing(int size) const;
  /// The ranks of the set not in `other`.
  RankSet minus(const RankSet& other) const;
  /// "0, 1, 3-6, 9-4095", cut after about `width` characters with
  /// ", … (N more)".
  std::string text(std::size_t width = 100) const;

private:
  std::vector<Range> ranges_;
};

/// One number over the ranks that have it: its minimum, sum and maximum,
/// and the lowest rank with the maximum.
struct Statistic {
  std::uint64_t ranks = 0;
  double sum = 0.0;
  double min = 0.0;
  double max = 0.0;
  int max_rank = -1;

  void add(int rank, double value);
  void merge(const Statistic& other);
  bool all_zero() const noexcept { return min == 0.0 && max == 0.0; }
};

/// The numbers kept per region, phase or section, over the ranks: calls,
/// the count, bytes and seconds of each kind (own, then with the subregions:
/// " (inc)"), the seconds of copies ("copy seconds"), and the time in the
/// region without and with its subregions ("time", "time (inc)").
namespace measure {
inline constexpr std::size_t calls = 0;
constexpr std::size_t count(EventKind kind, bool inclusive = false) {
  return 1 + (inclusive ? 3 * event_kind_count + 1 : 0) +
         3 * static_cast<std::size_t>(kind);
}
constexpr std::size_t bytes(EventKind kind, bool inclusive = false) {
  return count(kind, inclusive) + 1;
}
constexpr std::size_t seconds(EventKind kind, bool inclusive = false) {
  return count(kind, inclusive) + 2;
}
inline constexpr std::size_t copy_seconds = 3 * event_kind_count + 1;
inline constexpr std::size_t time = 6 * event_kind_count + 2;
inline constexpr std::size_t time_inclusive = time + 1;
inline constexpr std::size_t size = time + 2;
/// "calls", "to_host bytes", "sync seconds (inc)", "time (inc)".
std::string name(std::size_t index);
} // namespace measure

/// A region, phase or section over the ranks that have it.
struct SectionRanks {
  std::uint64_t ranks = 0;
  std::array<Statistic, measure::size> values{};
  void merge(const SectionRanks& other);
};

/// A text of the lowest rank that had one (a reason, a note's example).
struct RankText {
  int rank = -1;
  std::string text;
  void offer(int from, const std::string& candidate);
};

/// What the ranks say of one broken rule (a violation of one phase, kind
/// and limit): the message of the lowest rank, and every rank that broke it.
struct ViolationRanks {
  std::string message;
  int rank = -1;
  RankSet ranks;
};

/// One finding of advice (a rule at a region and its sites) over the ranks
/// that found it: the lowest rank's message, its ranks, those that
/// estimated a saving, and the statistics of the saving, the time, the
/// events and the calls.
struct FindingRanks {
  std::string message;
  int rank = -1;
  RankSet ranks;
  RankSet estimated;
  Statistic saving, seconds, events, calls;
};

/// Which ranks a merged report holds and what they say; `merged` false in
/// the report of one process.
struct JobRanks {
  bool merged = false;
  RankSet ranks;
  /// The ranks whose budget broke a rule, could not be checked, may have
  /// missed events, had no budget, had no device; without advice in their
  /// report; with copies to memory spaces cunumpy does not know.
  RankSet broken, unchecked, incomplete, without_budget, without_device,
      without_advice, unknown_spaces;
  /// Why, for the lowest rank of each.
  RankText unchecked_reason, incomplete_reason, without_device_reason;
  /// The ranks whose report had each note (report_notes).
  RankSet open_regions, unbalanced_pops, region_tree_cut, unwatched;
  /// Of a run id that is not unique: the latest start of a rank's process
  /// and the earliest end, with the rank of each (launches told apart).
  double latest_start = 0.0, earliest_end = 0.0;
  int latest_start_rank = -1, earliest_end_rank = -1;
  /// Parallel to the report's budget.phases, budget.regions,
  /// budget.violations and advice.
  SectionRanks total, outside;
  std::vector<SectionRanks> phases, regions;
  std::vector<RankSet> phase_broken;
  /// The rule of each phase as text (a report read from JSON has no Rule).
  std::vector<std::string> phase_rules;
  std::vector<ViolationRanks> violations;
  std::vector<FindingRanks> findings;
};

struct Report;

/// The job of `report`'s process alone: `job` filled from its numbers.
void start_job(Report& report);
/// Merges `other` into `into` (each a job, or one process, which start_job
/// makes one). Throws ReportError when they cannot be one job: a rank in
/// both, another job size, another run id.
void merge_reports(Report& into, Report other);

/// The ranks of the job without a report ([0, size) less the ranks); empty
/// when the size is not known.
RankSet missing_ranks(const Report& report);
/// The job's size, 0 when unknown (a run without a launcher is one
/// process).
int job_size(const Report& report);
/// What keeps a merged job from passing cunumpy-report --check, one
/// sentence each; empty when every rank kept its budget.
std::vector<std::string> job_problems(const Report& report);

/// Input that cannot be read or trusted, or reports that are not of one job:
/// one line saying what and what to do.
struct ReportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

} // namespace cunumpy::Impl

#endif
