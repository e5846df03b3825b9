// The ranks of a job in one report: rank sets, statistics, and the merge
// of two reports.

#include "report/job.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "report/format.hpp"
#include "report/report.hpp"

namespace cunumpy::Impl {

using profiling::KindTable;
using profiling::KindTotals;

// Rank sets

void RankSet::insert(int rank) {
  insert(rank, rank);
}

void RankSet::insert(int first, int last) {
  if (first > last)
    return;
  if (ranges_.empty() || first > ranges_.back().second + 1) {
    ranges_.emplace_back(first, last); // the usual order: increasing
    return;
  }
  // The first range that ends at or after first - 1 (it may touch).
  auto it = std::lower_bound(
      ranges_.begin(), ranges_.end(), first, [](const Range& range, int rank) {
        return static_cast<long long>(range.second) + 1 < rank;
      });
  if (it == ranges_.end() || static_cast<long long>(last) + 1 < it->first) {
    ranges_.insert(it, Range(first, last));
    return;
  }
  it->first = std::min(it->first, first);
  it->second = std::max(it->second, last);
  auto next = it + 1;
  while (next != ranges_.end() && static_cast<long long>(next->first) <=
                                      static_cast<long long>(it->second) + 1) {
    it->second = std::max(it->second, next->second);
    ++next;
  }
  ranges_.erase(it + 1, next);
}

void RankSet::insert(const RankSet& other) {
  if (other.empty())
    return;
  if (ranges_.empty() ||
      other.ranges_.front().first > ranges_.back().second + 1) {
    ranges_.insert(ranges_.end(), other.ranges_.begin(), other.ranges_.end());
    return;
  }
  std::vector<Range> merged;
  merged.reserve(ranges_.size() + other.ranges_.size());
  std::merge(ranges_.begin(), ranges_.end(), other.ranges_.begin(),
             other.ranges_.end(), std::back_inserter(merged));
  ranges_.clear();
  for (const Range& range : merged)
    if (!ranges_.empty() &&
        static_cast<long long>(range.first) <=
            static_cast<long long>(ranges_.back().second) + 1)
      ranges_.back().second = std::max(ranges_.back().second, range.second);
    else
      ranges_.push_back(range);
}

bool RankSet::contains(int rank) const {
  auto it = std::upper_bound(
      ranges_.begin(), ranges_.end(), rank,
      [](int value, const Range& range) { return value < range.first; });
  return it != ranges_.begin() && (it - 1)->second >= rank;
}

int RankSet::common(const RankSet& other) const {
  std::size_t i = 0, j = 0;
  while (i < ranges_.size() && j < other.ranges_.size()) {
    const Range& a = ranges_[i];
    const Range& b = other.ranges_[j];
    const int first = std::max(a.first, b.first);
    if (first <= std::min(a.second, b.second))
      return first;
    (a.second < b.second ? i : j)++;
  }
  return -1;
}

std::uint64_t RankSet::size() const noexcept {
  std::uint64_t count = 0;
  for (const Range& range : ranges_)
    count += static_cast<std::uint64_t>(range.second - range.first) + 1;
  return count;
}

RankSet RankSet::missing(int size) const {
  RankSet gaps;
  int next = 0;
  for (const Range& range : ranges_) {
    if (range.first >= size)
      break;
    if (range.first > next)
      gaps.ranges_.emplace_back(next, range.first - 1);
    next = std::max(next, range.second + 1);
  }
  if (next < size)
    gaps.ranges_.emplace_back(next, size - 1);
  return gaps;
}

RankSet RankSet::minus(const RankSet& other) const {
  RankSet result;
  std::size_t j = 0;
  for (Range range : ranges_) {
    while (j < other.ranges_.size() && other.ranges_[j].second < range.first)
      ++j;
    std::size_t k = j;
    long long next = range.first;
    while (k < other.ranges_.size() && other.ranges_[k].first <= range.second) {
      if (other.ranges_[k].first > next)
        result.ranges_.emplace_back(static_cast<int>(next),
                                    other.ranges_[k].first - 1);
      next = std::max<long long>(
          next, static_cast<long long>(other.ranges_[k].second) + 1);
      ++k;
    }
    if (next <= range.second)
      result.ranges_.emplace_back(static_cast<int>(next), range.second);
  }
  return result;
}

std::string RankSet::text(std::size_t width) const {
  std::string text;
  std::uint64_t listed = 0;
  for (const Range& range : ranges_) {
    std::string part;
    if (range.second > range.first + 1)
      part = std::to_string(range.first) + "-" + std::to_string(range.second);
    else
      for (int rank = range.first; rank <= range.second; ++rank)
        part += (part.empty() ? "" : ", ") + std::to_string(rank);
    if (!text.empty() && text.size() + part.size() > width)
      break;
    text += (text.empty() ? "" : ", ") + part;
    listed += static_cast<std::uint64_t>(range.second - range.first) + 1;
  }
  if (const std::uint64_t left = size() - listed)
    text += ", … (" + std::to_string(left) + " more)";
  return text;
}

// Statistics

void Statistic::add(int rank, double value) {
  Statistic one;
  one.ranks = 1;
  one.sum = one.min = one.max = value;
  one.max_rank = rank;
  merge(one);
}

void Statistic::merge(const Statistic& other) {
  if (other.ranks == 0)
    return;
  if (ranks == 0) {
    *this = other;
    return;
  }
  ranks += other.ranks;
  sum += other.sum;
  min = std::min(min, other.min);
  if (other.max > max || (other.max == max && other.max_rank >= 0 &&
                          (max_rank < 0 || other.max_rank < max_rank))) {
    max = other.max;
    max_rank = other.max_rank;
  }
}

void SectionRanks::merge(const SectionRanks& other) {
  ranks += other.ranks;
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i].merge(other.values[i]);
}

void RankText::offer(int from, const std::string& candidate) {
  if (from >= 0 && (rank < 0 || from < rank)) {
    rank = from;
    text = candidate;
  }
}

std::string measure::name(std::size_t index) {
  if (index == calls)
    return "calls";
  if (index == copy_seconds)
    return "copy seconds";
  if (index == time)
    return "time";
  if (index == time_inclusive)
    return "time (inc)";
  const bool inclusive = index > copy_seconds;
  const std::size_t offset = index - (inclusive ? copy_seconds + 1 : 1);
  static const char* const fields[] = {"count", "bytes", "seconds"};
  return std::string(to_string(static_cast<EventKind>(offset / 3))) + " " +
         fields[offset % 3] + (inclusive ? " (inc)" : "");
}

namespace {

void add_kinds(SectionRanks& section, int rank, const KindTable& kinds,
               bool inclusive) {
  double copy = 0.0;
  for (EventKind kind : all_event_kinds) {
    const KindTotals& entry = kind_totals(kinds, kind);
    section.values[measure::count(kind, inclusive)].add(
        rank, static_cast<double>(entry.count));
    section.values[measure::bytes(kind, inclusive)].add(
        rank, static_cast<double>(entry.nbytes));
    section.values[measure::seconds(kind, inclusive)].add(rank, entry.seconds);
    if (is_copy(kind))
      copy += entry.seconds;
  }
  if (!inclusive)
    section.values[measure::copy_seconds].add(rank, copy);
}

/// The statistics of one rank's section: every measure, the region-only
/// ones zero.
SectionRanks one_section(int rank, std::uint64_t calls, const KindTable& own,
                         const KindTable* inclusive, double time,
                         double time_inclusive) {
  SectionRanks section;
  section.ranks = 1;
  section.values[measure::calls].add(rank, static_cast<double>(calls));
  add_kinds(section, rank, own, false);
  add_kinds(section, rank, inclusive != nullptr ? *inclusive : KindTable{},
            true);
  section.values[measure::time].add(rank, time);
  section.values[measure::time_inclusive].add(rank, time_inclusive);
  return section;
}

void add(KindTable& into, const KindTable& from) {
  for (std::size_t k = 0; k < into.size(); ++k) {
    into[k].count += from[k].count;
    into[k].nbytes += from[k].nbytes;
    into[k].async_count += from[k].async_count;
    into[k].implicit_count += from[k].implicit_count;
    into[k].seconds += from[k].seconds;
    into[k].device_seconds += from[k].device_seconds;
    into[k].device_timed_nbytes += from[k].device_timed_nbytes;
  }
}

template <class Text>
void add_unique(std::vector<std::string>& into, const Text& from,
                std::size_t limit = 64) {
  for (const std::string& item : from)
    if (into.size() < limit &&
        std::find(into.begin(), into.end(), item) == into.end())
      into.push_back(item);
}

std::string violation_key(const profiling::Violation& violation) {
  return violation.phase + '\0' +
         (violation.kind ? std::string(to_string(*violation.kind)) : "") +
         '\0' + std::string(to_string(violation.limit));
}

std::string finding_key(const profiling::Finding& finding) {
  std::string key = std::string(finding.name()) + '\0' + finding.region;
  for (const profiling::FindingSite& site : finding.sites)
    key += '\0' + site.site.str();
  return key;
}

/// The regions of `report` in depth-first order (children in the order of
/// their first appearance), the statistics with them.
void depth_first(Report& report) {
  auto& regions = report.budget.regions;
  auto& statistics = report.job.regions;
  const std::size_t n = regions.size();
  if (n <= 1)
    return;
  std::vector<std::vector<std::size_t>> children(n);
  for (std::size_t i = 1; i < n; ++i)
    children[regions[i].parent].push_back(i);
  std::vector<std::size_t> order;
  order.reserve(n);
  std::vector<std::pair<std::size_t, std::size_t>> stack{{0, 0}};
  order.push_back(0);
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next == children[node].size()) {
      stack.pop_back();
      continue;
    }
    const std::size_t child = children[node][next++];
    order.push_back(child);
    stack.emplace_back(child, 0);
  }
  bool same = true;
  for (std::size_t i = 0; i < n && same; ++i)
    same = order[i] == i;
  if (same)
    return;
  std::vector<std::size_t> position(n);
  for (std::size_t i = 0; i < n; ++i)
    position[order[i]] = i;
  std::vector<profiling::RegionNode> sorted(n);
  std::vector<SectionRanks> sorted_statistics(n);
  for (std::size_t i = 0; i < n; ++i) {
    sorted[i] = std::move(regions[order[i]]);
    sorted_statistics[i] = statistics[order[i]];
    sorted[i].parent = i == 0 ? 0 : position[sorted[i].parent];
  }
  regions = std::move(sorted);
  statistics = std::move(sorted_statistics);
}

/// The region that `path` names in regions, by (parent, name).
struct RegionIndex {
  struct Hash {
    std::size_t
    operator()(const std::pair<std::size_t, std::string>& key) const noexcept {
      return std::hash<std::string>()(key.second) * 31 + key.first;
    }
  };
  std::unordered_map<std::pair<std::size_t, std::string>, std::size_t, Hash>
      index;
  explicit RegionIndex(const std::vector<profiling::RegionNode>& regions) {
    index.reserve(regions.size());
    for (std::size_t i = 1; i < regions.size(); ++i)
      index.emplace(std::make_pair(regions[i].parent, regions[i].name), i);
  }
};

void merge_regions(Report& into, Report& from) {
  auto& regions = into.budget.regions;
  auto& statistics = into.job.regions;
  auto& others = from.budget.regions;
  if (others.empty())
    return;
  if (regions.empty()) {
    regions.emplace_back();
    statistics.emplace_back();
  }
  RegionIndex index(regions);
  std::vector<std::size_t> mapped(others.size(), 0);
  for (std::size_t i = 0; i < others.size(); ++i) {
    profiling::RegionNode& node = others[i];
    std::size_t at = 0;
    if (i > 0) {
      const std::size_t parent = mapped[node.parent];
      const auto found = index.index.find(std::make_pair(parent, node.name));
      if (found == index.index.end()) {
        at = regions.size();
        profiling::RegionNode added;
        added.name = node.name;
        added.parent = parent;
        added.depth = regions[parent].depth + 1;
        added.path =
            parent == 0 ? node.name : regions[parent].path + "/" + node.name;
        added.phase = node.phase;
        regions.push_back(std::move(added));
        statistics.emplace_back();
        index.index.emplace(std::make_pair(parent, regions[at].name), at);
      } else {
        at = found->second;
      }
    }
    mapped[i] = at;
    profiling::RegionNode& target = regions[at];
    target.calls += node.calls;
    target.seconds += node.seconds;
    target.is_phase = target.is_phase || node.is_phase;
    if (target.phase.empty())
      target.phase = node.phase;
    add(target.own, node.own);
    add(target.inclusive, node.inclusive);
    target.own_sites.clear();
    if (i < from.job.regions.size())
      statistics[at].merge(from.job.regions[i]);
  }
  depth_first(into);
}

void merge_phases(Report& into, Report& from) {
  auto& phases = into.budget.phases;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < phases.size(); ++i)
    index.emplace(phases[i].name, i);
  for (std::size_t i = 0; i < from.budget.phases.size(); ++i) {
    profiling::PhaseSummary& phase = from.budget.phases[i];
    const auto found = index.find(phase.name);
    std::size_t at;
    if (found == index.end()) {
      at = phases.size();
      index.emplace(phase.name, at);
      phases.push_back(phase);
      phases.back().sites.clear();
      into.job.phases.emplace_back();
      into.job.phase_broken.emplace_back();
      into.job.phase_rules.push_back(from.job.phase_rules[i]);
      into.job.phases[at].merge(from.job.phases[i]);
      into.job.phase_broken[at].insert(from.job.phase_broken[i]);
      continue;
    }
    at = found->second;
    profiling::PhaseSummary& target = phases[at];
    target.calls += phase.calls;
    target.entered = target.entered || phase.entered;
    target.broken = target.broken || phase.broken;
    if (!target.rule && phase.rule)
      target.rule = phase.rule;
    if (into.job.phase_rules[at].empty())
      into.job.phase_rules[at] = from.job.phase_rules[i];
    add(target.totals, phase.totals);
    into.job.phases[at].merge(from.job.phases[i]);
    into.job.phase_broken[at].insert(from.job.phase_broken[i]);
  }
}

void merge_violations(Report& into, Report& from) {
  auto& violations = into.budget.violations;
  auto& ranks = into.job.violations;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < violations.size(); ++i)
    index.emplace(violation_key(violations[i]), i);
  for (std::size_t i = 0; i < from.budget.violations.size(); ++i) {
    const auto found = index.find(violation_key(from.budget.violations[i]));
    ViolationRanks& other = from.job.violations[i];
    if (found == index.end()) {
      index.emplace(violation_key(from.budget.violations[i]),
                    violations.size());
      violations.push_back(std::move(from.budget.violations[i]));
      ranks.push_back(std::move(other));
      continue;
    }
    ViolationRanks& entry = ranks[found->second];
    entry.ranks.insert(other.ranks);
    if (other.rank < entry.rank) {
      entry.rank = other.rank;
      entry.message = std::move(other.message);
      violations[found->second] = std::move(from.budget.violations[i]);
    }
  }
  // The lowest rank's first.
  std::vector<std::size_t> order(violations.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) {
    return ranks[a].rank < ranks[b].rank;
  });
  std::vector<profiling::Violation> sorted;
  std::vector<ViolationRanks> sorted_ranks;
  for (std::size_t i : order) {
    sorted.push_back(std::move(violations[i]));
    sorted_ranks.push_back(std::move(ranks[i]));
  }
  violations = std::move(sorted);
  ranks = std::move(sorted_ranks);
}

void merge_findings(Report& into, Report& from) {
  auto& findings = into.advice;
  auto& ranks = into.job.findings;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < findings.size(); ++i)
    index.emplace(finding_key(findings[i]), i);
  for (std::size_t i = 0; i < from.advice.size(); ++i) {
    const std::string key = finding_key(from.advice[i]);
    const auto found = index.find(key);
    FindingRanks& other = from.job.findings[i];
    if (found == index.end()) {
      index.emplace(key, findings.size());
      findings.push_back(std::move(from.advice[i]));
      ranks.push_back(std::move(other));
      continue;
    }
    FindingRanks& entry = ranks[found->second];
    entry.ranks.insert(other.ranks);
    entry.estimated.insert(other.estimated);
    entry.saving.merge(other.saving);
    entry.seconds.merge(other.seconds);
    entry.events.merge(other.events);
    entry.calls.merge(other.calls);
    if (other.rank < entry.rank) {
      entry.rank = other.rank;
      entry.message = std::move(other.message);
      findings[found->second] = std::move(from.advice[i]);
    }
  }
  // Largest estimated saving first (the most over the ranks), then those
  // without an estimate by their time.
  std::vector<std::size_t> order(findings.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) {
    const FindingRanks& x = ranks[a];
    const FindingRanks& y = ranks[b];
    const bool x_saving = x.saving.ranks > 0, y_saving = y.saving.ranks > 0;
    if (x_saving != y_saving)
      return x_saving;
    return (x_saving ? x.saving.max : x.seconds.max) >
           (y_saving ? y.saving.max : y.seconds.max);
  });
  std::vector<profiling::Finding> sorted;
  std::vector<FindingRanks> sorted_ranks;
  for (std::size_t i : order) {
    sorted.push_back(std::move(findings[i]));
    sorted_ranks.push_back(std::move(ranks[i]));
  }
  findings = std::move(sorted);
  ranks = std::move(sorted_ranks);
}

void merge_dual_views(Report& into, const Report& from) {
  for (const DualViewSync& sync : from.dual_view_syncs) {
    auto same =
        std::find_if(into.dual_view_syncs.begin(), into.dual_view_syncs.end(),
                     [&](const DualViewSync& other) {
                       return other.label == sync.label &&
                              other.to_device == sync.to_device &&
                              other.copied == sync.copied &&
                              other.site.str() == sync.site.str();
                     });
    if (same == into.dual_view_syncs.end()) {
      into.dual_view_syncs.push_back(sync);
    } else {
      same->count += sync.count;
      same->nbytes += sync.nbytes;
    }
  }
  for (const DualViewModify& modify : from.unsynced_modifies) {
    auto same = std::find_if(into.unsynced_modifies.begin(),
                             into.unsynced_modifies.end(),
                             [&](const DualViewModify& other) {
                               return other.label == modify.label &&
                                      other.on_device == modify.on_device &&
                                      other.site.str() == modify.site.str();
                             });
    if (same == into.unsynced_modifies.end())
      into.unsynced_modifies.push_back(modify);
    else
      same->count += modify.count;
  }
}

/// A note's text of the lowest rank: `into`'s, else `from`'s.
void keep_text(std::string& into, const std::string& from) {
  if (into.empty())
    into = from;
}

} // namespace

void start_job(Report& report) {
  if (report.job.merged)
    return;
  JobRanks& job = report.job;
  const int rank = report.rank;
  const std::string verdict(report.verdict()); // of the process
  job.merged = true;
  job.ranks = RankSet(rank);
  if (!report.budget.device.present) {
    job.without_device.insert(rank);
    job.without_device_reason.offer(rank, report.budget.device.reason);
  }
  if (verdict == "broken")
    job.broken.insert(rank);
  if (verdict == "unchecked" || !report.budget_error.empty()) {
    job.unchecked.insert(rank);
    job.unchecked_reason.offer(rank, !report.budget_error.empty()
                                         ? report.budget_error
                                         : report.budget.device.reason);
  }
  // A rule file that could not be used is NOT CHECKED above, not a loss.
  if ((verdict == "incomplete" && report.budget_error.empty()) ||
      !report.budget.losses.empty()) {
    job.incomplete.insert(rank);
    std::string losses;
    for (const std::string& loss : report.budget.losses)
      losses += (losses.empty() ? "" : "; ") + loss;
    job.incomplete_reason.offer(
        rank, losses.empty() ? std::string("the plugin lost events") : losses);
  }
  if (!report.has_budget)
    job.without_budget.insert(rank);
  if (report.advice_recording == profiling::AdviceRecording::off)
    job.without_advice.insert(rank);
  if (report.unknown_spaces.copies > 0 && !report.unknown_spaces.names.empty())
    job.unknown_spaces.insert(rank);
  if (!report.open_regions.empty())
    job.open_regions.insert(rank);
  if (!report.unbalanced_pops.empty())
    job.unbalanced_pops.insert(rank);
  if (!report.region_tree_cut.empty())
    job.region_tree_cut.insert(rank);
  if (!report.unwatched.empty())
    job.unwatched.insert(rank);
  job.latest_start = report.started;
  job.earliest_end = report.ended;
  job.latest_start_rank = job.earliest_end_rank = rank;

  const auto& budget = report.budget;
  job.total = one_section(rank, 1, budget.total, nullptr, 0.0, 0.0);
  job.outside = one_section(rank, budget.outside.calls, budget.outside.totals,
                            nullptr, 0.0, 0.0);
  for (const profiling::PhaseSummary& phase : budget.phases) {
    job.phases.push_back(
        one_section(rank, phase.calls, phase.totals, nullptr, 0.0, 0.0));
    job.phase_broken.push_back(phase.broken ? RankSet(rank) : RankSet());
    job.phase_rules.push_back(phase.rule ? phase.rule->str() : std::string());
  }
  const auto& regions = budget.regions;
  std::vector<double> children(regions.size(), 0.0);
  for (std::size_t i = 1; i < regions.size(); ++i)
    children[regions[i].parent] += regions[i].seconds;
  for (std::size_t i = 0; i < regions.size(); ++i) {
    double seconds = regions[i].seconds;
    if (i == 0 && seconds == 0.0)
      seconds = report.elapsed;
    job.regions.push_back(one_section(
        rank, regions[i].calls, regions[i].own, &regions[i].inclusive,
        std::max(seconds - children[i], 0.0), seconds));
  }
  for (const profiling::Violation& violation : budget.violations)
    job.violations.push_back({violation.str(), rank, RankSet(rank)});
  for (const profiling::Finding& finding : report.advice) {
    FindingRanks entry;
    entry.message = finding.str();
    entry.rank = rank;
    entry.ranks = RankSet(rank);
    if (finding.saving_seconds) {
      entry.estimated = RankSet(rank);
      entry.saving.add(rank, *finding.saving_seconds);
    }
    entry.seconds.add(rank, finding.seconds);
    entry.events.add(rank, static_cast<double>(finding.count));
    entry.calls.add(rank, static_cast<double>(finding.calls));
    job.findings.push_back(std::move(entry));
  }
  // A job's sections name no call sites: each rank's report keeps its own
  // top sites, and the sum of several ranks' top sites would undercount.
  report.budget.total_sites.clear();
  report.budget.outside.sites.clear();
  for (auto& phase : report.budget.phases)
    phase.sites.clear();
  for (auto& region : report.budget.regions)
    region.own_sites.clear();
  report.trace_path.clear();
  report.trace_dropped = 0;
}

void merge_reports(Report& into, Report other) {
  start_job(into);
  start_job(other);
  if (const int both = into.job.ranks.common(other.job.ranks); both >= 0)
    throw ReportError("rank " + std::to_string(both) +
                      " has two reports: merge the reports of one run, each "
                      "rank with its own file (%r in CUNUMPY_REPORT)");
  if (into.size > 0 && other.size > 0 && into.size != other.size)
    throw ReportError("reports of jobs of " + std::to_string(into.size) +
                      " and " + std::to_string(other.size) +
                      " ranks: merge the reports of one run at a time");
  // The lower ranks' report leads: its program, run, lists first.
  if (other.job.ranks.lowest() < into.job.ranks.lowest())
    std::swap(into, other);
  JobRanks& job = into.job;
  JobRanks& from = other.job;
  job.ranks.insert(from.ranks);
  for (auto [mine, theirs] : {std::pair{&job.broken, &from.broken},
                              {&job.unchecked, &from.unchecked},
                              {&job.incomplete, &from.incomplete},
                              {&job.without_budget, &from.without_budget},
                              {&job.without_device, &from.without_device},
                              {&job.without_advice, &from.without_advice},
                              {&job.unknown_spaces, &from.unknown_spaces},
                              {&job.open_regions, &from.open_regions},
                              {&job.unbalanced_pops, &from.unbalanced_pops},
                              {&job.region_tree_cut, &from.region_tree_cut},
                              {&job.unwatched, &from.unwatched}})
    mine->insert(*theirs);
  job.unchecked_reason.offer(from.unchecked_reason.rank,
                             from.unchecked_reason.text);
  job.incomplete_reason.offer(from.incomplete_reason.rank,
                              from.incomplete_reason.text);
  job.without_device_reason.offer(from.without_device_reason.rank,
                                  from.without_device_reason.text);
  if (from.latest_start > job.latest_start) {
    job.latest_start = from.latest_start;
    job.latest_start_rank = from.latest_start_rank;
  }
  if (from.earliest_end < job.earliest_end) {
    job.earliest_end = from.earliest_end;
    job.earliest_end_rank = from.earliest_end_rank;
  }
  into.started = job.latest_start;
  into.ended = job.earliest_end;

  if (into.size == 0)
    into.size = other.size;
  into.run_id_unique = into.run_id_unique && other.run_id_unique;
  into.elapsed = std::max(into.elapsed, other.elapsed);
  into.kokkos_sessions = std::max(into.kokkos_sessions, other.kokkos_sessions);
  add_unique(into.device_spaces, other.device_spaces);
  add_unique(into.unknown_spaces.names, other.unknown_spaces.names);
  into.unknown_spaces.copies += other.unknown_spaces.copies;
  into.has_budget = into.has_budget || other.has_budget;
  keep_text(into.budget_path, other.budget_path);
  keep_text(into.budget_error, other.budget_error);
  keep_text(into.unwatched, other.unwatched);
  keep_text(into.unbalanced_pops, other.unbalanced_pops);
  keep_text(into.region_tree_cut, other.region_tree_cut);
  if (into.open_regions.empty())
    into.open_regions = std::move(other.open_regions);
  add_unique(into.site_problems, other.site_problems);
  if (into.advice_recording == profiling::AdviceRecording::off)
    into.advice_recording = other.advice_recording;

  auto& budget = into.budget;
  const auto& theirs = other.budget;
  budget.started = budget.started || theirs.started;
  budget.rule_count = std::max(budget.rule_count, theirs.rule_count);
  budget.unchecked_allowed =
      budget.unchecked_allowed || theirs.unchecked_allowed;
  budget.device.present = budget.device.present && theirs.device.present;
  add_unique(budget.device.backends, theirs.device.backends);
  add_unique(budget.device.unknown_spaces, theirs.device.unknown_spaces);
  keep_text(budget.device.reason, theirs.device.reason);
  keep_text(budget.device.fix, theirs.device.fix);
  budget.device.unchecked = budget.device.unchecked || theirs.device.unchecked;
  if (budget.losses.empty())
    budget.losses = theirs.losses;
  add(budget.total, theirs.total);
  job.total.merge(from.total);
  budget.outside.calls += theirs.outside.calls;
  budget.outside.entered = budget.outside.entered || theirs.outside.entered;
  add(budget.outside.totals, theirs.outside.totals);
  job.outside.merge(from.outside);
  merge_phases(into, other);
  merge_regions(into, other);
  merge_violations(into, other);
  merge_findings(into, other);
  merge_dual_views(into, other);
}

int job_size(const Report& report) {
  if (report.size > 0)
    return report.size;
  if (report.run_id.rfind("local:", 0) == 0)
    return 1;
  return 0;
}

RankSet missing_ranks(const Report& report) {
  const int size = job_size(report);
  if (size == 0 || !report.job.merged)
    return {};
  return report.job.ranks.missing(size);
}

std::vector<std::string> job_problems(const Report& report) {
  std::vector<std::string> problems;
  const JobRanks& job = report.job;
  for (const auto& [ranks, what] :
       {std::pair{&job.broken, "broke the budget"},
        {&job.unchecked, "could not check the budget"},
        {&job.without_budget, "ran without a budget (CUNUMPY_BUDGET not set)"},
        {&job.incomplete, "may have missed events"}})
    if (!ranks->empty())
      problems.push_back(std::to_string(ranks->size()) + " rank(s) " + what);
  const RankSet missing = missing_ranks(report);
  if (!missing.empty())
    problems.push_back(std::to_string(missing.size()) + " rank(s) of " +
                       std::to_string(job_size(report)) + " have no report");
  else if (job_size(report) == 0)
    problems.push_back("the job's size is unknown ('run.size' is null), so "
                       "ranks may be missing");
  return problems;
}

} // namespace cunumpy::Impl
