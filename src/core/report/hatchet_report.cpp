// The region tree in Hatchet's literal format (GraphFrame.from_literal), of
// one process or of a merged job (each metric the mean over the ranks, and
// its minimum and maximum), so that a single run and a job load alike.

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>

#include <cunumpy/version.hpp>

#include "report/format.hpp"
#include "report/json_writer.hpp"
#include "report/report.hpp"

namespace cunumpy::Impl {
namespace {

/// A metric's value: a count or bytes stay integers; means and times are
/// numbers.
struct Metric {
  bool integer = false;
  std::uint64_t count = 0;
  double number = 0.0;
};

/// What cunumpy-report writes per node for one rank: each metric as the
/// mean over the ranks ("name"), and its minimum and maximum
/// ("name min", "name max (inc)").
void add_metric(std::map<std::string, Metric>& metrics, std::string name,
                Metric value) {
  constexpr std::string_view inclusive = " (inc)";
  std::string base = name, suffix;
  if (name.size() > inclusive.size() &&
      name.compare(name.size() - inclusive.size(), inclusive.size(),
                   inclusive) == 0) {
    base = name.substr(0, name.size() - inclusive.size());
    suffix = inclusive;
  }
  const double mean =
      value.integer ? static_cast<double>(value.count) : value.number;
  metrics[base + " min" + suffix] = value;
  metrics[base + " max" + suffix] = value;
  metrics[std::move(name)] = Metric{false, 0, mean};
}

std::map<std::string, Metric> node_metrics(const profiling::RegionNode& region,
                                           double inclusive_seconds,
                                           double own_seconds) {
  std::map<std::string, Metric> metrics;
  add_metric(metrics, "calls", {true, region.calls, 0.0});
  add_metric(metrics, "time", {false, 0, own_seconds});
  add_metric(metrics, "time (inc)", {false, 0, inclusive_seconds});
  for (const auto& [kinds, suffix] :
       {std::pair{&region.own, ""}, std::pair{&region.inclusive, " (inc)"}})
    for (EventKind kind : all_event_kinds) {
      const profiling::KindTotals& entry = kind_totals(*kinds, kind);
      const std::string name(to_string(kind));
      add_metric(metrics, name + " count" + suffix, {true, entry.count, 0.0});
      add_metric(metrics, name + " bytes" + suffix, {true, entry.nbytes, 0.0});
      add_metric(metrics, name + " seconds" + suffix,
                 {false, 0, entry.seconds});
    }
  return metrics;
}

/// A node of a merged job: each measure's mean over the `ranks` ranks (a
/// rank that never entered the region counts 0), minimum and maximum.
std::map<std::string, Metric> job_metrics(const SectionRanks& section,
                                          std::uint64_t ranks) {
  std::map<std::string, Metric> metrics;
  for (std::size_t i = 0; i < measure::size; ++i) {
    if (i == measure::copy_seconds)
      continue;
    const std::string name = measure::name(i);
    const Statistic& statistic = section.values[i];
    const bool whole =
        name.find("seconds") == std::string::npos && name.rfind("time", 0) != 0;
    const double low = statistic.ranks == 0      ? 0.0
                       : statistic.ranks < ranks ? std::min(statistic.min, 0.0)
                                                 : statistic.min;
    const double high = statistic.ranks == 0 ? 0.0 : statistic.max;
    const auto metric = [whole](double value) {
      return whole ? Metric{true, static_cast<std::uint64_t>(value), 0.0}
                   : Metric{false, 0, value};
    };
    add_metric(metrics, name, metric(0.0));
    constexpr std::string_view inclusive = " (inc)";
    const bool inc = name.size() > inclusive.size() &&
                     name.compare(name.size() - inclusive.size(),
                                  inclusive.size(), inclusive) == 0;
    const std::string base =
        inc ? name.substr(0, name.size() - inclusive.size()) : name;
    const std::string suffix = inc ? std::string(inclusive) : std::string();
    metrics[base + " min" + suffix] = metric(low);
    metrics[base + " max" + suffix] = metric(high);
    metrics[name] =
        Metric{false, 0,
               ranks == 0 ? 0.0 : statistic.sum / static_cast<double>(ranks)};
  }
  return metrics;
}

void write_metadata(JsonWriter& json, const Report& report) {
  std::string versions, backends;
  for (const std::string& version : report.kokkos_versions)
    versions += (versions.empty() ? "" : ", ") + version;
  for (const std::string& backend : report.budget.device.backends)
    backends += (backends.empty() ? "" : ",") + backend;
  const auto unless_empty =
      [](const std::string& text) -> std::optional<std::string_view> {
    if (text.empty())
      return std::nullopt;
    return text;
  };
  std::optional<int> job_size;
  if (report.size > 0)
    job_size = report.size;
  else if (report.run_id.rfind("local:", 0) == 0)
    job_size = 1;
  json.begin_object();
  json.member("cunumpy_version", CUNUMPY_VERSION_STRING);
  json.member("device", report.budget.device.present);
  json.member("device_reason", unless_empty(report.budget.device.reason));
  json.member("job_size", job_size);
  json.member("kokkos_backends", unless_empty(backends));
  json.member("kokkos_version", unless_empty(versions));
  json.member("label", unless_empty(report.label));
  json.member("program", report.program);
  json.member("rank_merge", "mean over the ranks; ' min' and ' max' "
                            "metrics: minimum and maximum");
  json.member("ranks", report.job.merged
                           ? static_cast<std::uint64_t>(report.job.ranks.size())
                           : std::uint64_t{1});
  json.member("run_id", report.run_id);
  json.end_object();
}

} // namespace

std::string format_hatchet(const Report& report) {
  const auto& regions = report.budget.regions;
  // Indented as every report, unless deeper than the plugin's trees
  // (RegionTree::max_depth): a merged file's tree may be, and its
  // indentation would grow with the square of its depth.
  std::size_t deepest = 0;
  for (const auto& region : regions)
    deepest = std::max(deepest, region.depth);
  JsonWriter json(deepest > 64 ? 0 : 2);
  json.begin_array();
  if (regions.empty()) {
    json.end_array();
    return json.take() + "\n";
  }
  std::vector<double> children_seconds(regions.size(), 0.0);
  std::vector<std::vector<std::size_t>> children(regions.size());
  for (std::size_t i = 1; i < regions.size(); ++i) {
    children_seconds[regions[i].parent] += regions[i].seconds;
    children[regions[i].parent].push_back(i);
  }
  // Depth first without recursion: each level's next child to write.
  std::vector<std::pair<std::size_t, std::size_t>> stack;
  const auto open = [&](std::size_t index) {
    json.begin_object();
    json.key("children");
    json.begin_array();
    stack.emplace_back(index, 0);
  };
  // Members come in name order (children, frame, metadata, metrics): the
  // children are written first, the node's own members when it closes.
  const auto close = [&](std::size_t index) {
    const profiling::RegionNode& region = regions[index];
    double seconds = region.seconds;
    if (index == 0 && seconds == 0.0)
      seconds = report.elapsed;
    json.end_array();
    json.key("frame");
    json.begin_object();
    json.member("name", index == 0 ? std::string("program") : region.name);
    json.member("type", "region");
    json.end_object();
    if (index == 0) {
      json.key("metadata");
      write_metadata(json, report);
    }
    json.key("metrics");
    json.begin_object();
    const auto metrics =
        report.job.merged && index < report.job.regions.size()
            ? job_metrics(report.job.regions[index], report.job.ranks.size())
            : node_metrics(region, seconds,
                           std::max(seconds - children_seconds[index], 0.0));
    for (const auto& [name, metric] : metrics) {
      if (metric.integer)
        json.member(name, metric.count);
      else
        json.member(name, metric.number);
    }
    json.end_object();
    json.end_object();
  };
  open(0);
  while (!stack.empty()) {
    auto& [index, next] = stack.back();
    if (next < children[index].size()) {
      const std::size_t child = children[index][next++];
      open(child);
      continue;
    }
    const std::size_t done = index;
    stack.pop_back();
    close(done);
  }
  json.end_array();
  std::string text = json.take();
  text += '\n';
  return text;
}

} // namespace cunumpy::Impl
