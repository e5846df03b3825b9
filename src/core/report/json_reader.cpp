// The JSON report read back into the report model: a rank's report
// (version 2 or 3) or a merged job's (its "job" member), each member the
// merge reads checked for its type, so that damaged or hostile input is
// one line naming the member, never a crash nor a wrong number.

#include <cmath>
#include <cstring>

#include "report/format.hpp"
#include "report/json_document.hpp"
#include "report/report.hpp"
#include "support/excerpt.hpp"

namespace cunumpy::Impl {
namespace {

using json = JsonValue;

/// A report of the plugin nests a few levels; a region tree stops at 64.
constexpr std::size_t max_nesting = 64;

/// The byte where `text` stops being UTF-8, or npos.
std::size_t invalid_utf8(std::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = bytes[i];
    std::size_t length = c < 0x80         ? 1
                         : (c >> 5) == 6  ? 2
                         : (c >> 4) == 14 ? 3
                         : (c >> 3) == 30 ? 4
                                          : 0;
    if (length == 0 || i + length > text.size())
      return i;
    for (std::size_t k = 1; k < length; ++k)
      if ((bytes[i + k] & 0xC0) != 0x80)
        return i;
    i += length;
  }
  return std::string_view::npos;
}

const char* const damaged =
    ": the report is damaged or not written by cunumpy's plugin; rerun the "
    "program to write it again";

/// A value for a message: "missing", "an object", "-1", "\"yes\"".
std::string value_text(const json* value) {
  if (value == nullptr)
    return "missing";
  if (value->is_object())
    return "an object";
  if (value->is_array())
    return "a list";
  if (value->is_number() && !std::isfinite(value->number()))
    return value->number() > 0 ? "Infinity" : "-Infinity";
  return excerpt(printable(value->text()), 30);
}

const json* pointer(const std::optional<json>& value) {
  return value ? &*value : nullptr;
}

[[noreturn]] void mismatch(const std::string& place, const json* value,
                           const std::string& expected) {
  throw ReportError("'" + excerpt(printable(place), 60) + "' is " +
                    value_text(value) + ", expected " + expected + damaged);
}

[[noreturn]] void inconsistent(const std::string& what) {
  throw ReportError(what + ": the report is damaged; rerun the program");
}

/// An object of the report, its members read by name and type.
class Object {
public:
  Object(const json& value, std::string place)
      : value_(value), place_(std::move(place)) {
    if (!value.is_object())
      mismatch(place_, &value, "an object");
  }

  std::optional<json> find(const char* name) const {
    return value_.find(name, &hint_);
  }
  bool has(const char* name) const {
    const auto member = find(name);
    return member && !member->is_null();
  }
  std::string place(const char* name) const {
    return place_.empty() ? std::string(name) : place_ + "." + name;
  }
  json required(const char* name, const char* expected) const {
    const auto member = find(name);
    if (!member)
      mismatch(place(name), nullptr, expected);
    return *member;
  }

  bool boolean(const char* name) const {
    const json member = required(name, "true or false");
    if (!member.is_boolean())
      mismatch(place(name), &member, "true or false");
    return member.boolean();
  }
  std::string text(const char* name) const {
    const json member = required(name, "a string");
    if (!member.is_string())
      mismatch(place(name), &member, "a string");
    return member.string();
  }
  /// A string or null ("" for null).
  std::string text_or_null(const char* name, bool optional = false) const {
    const auto member = find(name);
    if (!member && optional)
      return {};
    if (!member || !(member->is_string() || member->is_null()))
      mismatch(place(name), pointer(member), "a string or null");
    return member->is_null() ? std::string() : member->string();
  }
  std::uint64_t integer(const char* name) const {
    const json member = required(name, integer_expected);
    if (const auto integer = member.unsigned_integer())
      return *integer;
    mismatch(place(name), &member, integer_expected);
  }
  std::optional<std::uint64_t> integer_or_null(const char* name) const {
    const auto member = find(name);
    if (member && member->is_null())
      return std::nullopt;
    if (!member)
      mismatch(place(name), nullptr, "an integer from 0 to 2^64 or null");
    if (const auto integer = member->unsigned_integer())
      return *integer;
    mismatch(place(name), pointer(member), integer_expected);
  }
  double number(const char* name) const {
    const json member = required(name, "a number");
    if (member.is_number()) {
      const double value = member.number();
      if (std::isfinite(value))
        return value;
    }
    mismatch(place(name), &member, "a number");
  }
  std::optional<double> number_or_null(const char* name) const {
    const auto member = find(name);
    if (member && member->is_null())
      return std::nullopt;
    if (!member)
      mismatch(place(name), nullptr, "a number or null");
    if (member->is_number()) {
      const double value = member->number();
      if (std::isfinite(value))
        return value;
    }
    mismatch(place(name), pointer(member), "a number");
  }
  Object object(const char* name) const {
    const json member = required(name, "an object");
    if (!member.is_object())
      mismatch(place(name), &member, "an object");
    return Object(member, place(name));
  }
  std::vector<json> list(const char* name) const {
    const json member = required(name, "a list");
    if (!member.is_array())
      mismatch(place(name), &member, "a list");
    return member.elements();
  }
  std::vector<std::string> texts(const char* name) const {
    const std::vector<json> items = list(name);
    std::vector<std::string> result;
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (!items[i].is_string())
        mismatch(place(name) + "[" + std::to_string(i) + "]", &items[i],
                 "a string");
      result.push_back(items[i].string());
    }
    return result;
  }

  static constexpr const char* integer_expected = "an integer from 0 to 2^64";
  static std::uint64_t integer_value(const json& value,
                                     const std::string& place) {
    if (const auto integer = value.unsigned_integer())
      return *integer;
    mismatch(place, &value, integer_expected);
  }
  static double number_value(const json& value, const std::string& place) {
    if (value.is_number() && std::isfinite(value.number()))
      return value.number();
    mismatch(place, &value, "a number");
  }

private:
  json value_;
  mutable std::uint32_t hint_ = 0;
  std::string place_;
};

std::string item(const std::string& place, std::size_t index) {
  return place + "[" + std::to_string(index) + "]";
}

int rank_value(std::uint64_t value, const std::string& place) {
  if (value > 0x7fffffff)
    inconsistent("'" + place + "' is " + std::to_string(value) +
                 ", beyond any MPI rank");
  return static_cast<int>(value);
}

profiling::KindTable read_kinds(const Object& object, const char* name) {
  const Object kinds = object.object(name);
  profiling::KindTable table{};
  for (EventKind kind : all_event_kinds) {
    const std::string kind_name(to_string(kind));
    if (!kinds.has(kind_name.c_str()))
      continue;
    const Object entry = kinds.object(kind_name.c_str());
    profiling::KindTotals& totals = table[index_of(kind)];
    // In the order the plugin writes them (found at once).
    if (entry.has("async"))
      totals.async_count = entry.integer("async");
    totals.nbytes = entry.integer("bytes");
    totals.count = entry.integer("count");
    if (entry.has("device_seconds"))
      totals.device_seconds = entry.number("device_seconds");
    if (entry.has("device_timed_bytes"))
      totals.device_timed_nbytes = entry.integer("device_timed_bytes");
    if (entry.has("implicit"))
      totals.implicit_count = entry.integer("implicit");
    totals.seconds = entry.number("seconds");
  }
  return table;
}

/// "[[0, 3], [5, 5]]": sorted, disjoint ranges of ranks.
RankSet read_ranks(const Object& object, const char* name) {
  const std::vector<json> ranges = object.list(name);
  RankSet ranks;
  long long previous = -2;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const std::string place = item(object.place(name), i);
    const json& range = ranges[i];
    if (!range.is_array() || range.size() != 2)
      mismatch(place, &range, "a range of ranks [first, last]");
    const std::vector<json> bounds = range.elements();
    const int first =
        rank_value(Object::integer_value(bounds[0], place), place);
    const int last = rank_value(Object::integer_value(bounds[1], place), place);
    if (first > last || first <= previous + 1)
      inconsistent("'" + place + "' is not a range after the previous one");
    ranks.insert(first, last);
    previous = last;
  }
  return ranks;
}

Statistic read_statistic(const json& value, const std::string& place,
                         std::uint64_t ranks) {
  const Object object(value, place);
  Statistic statistic;
  statistic.ranks = ranks;
  statistic.min = object.number("min");
  statistic.max = object.number("max");
  statistic.sum = object.number("sum");
  if (const auto rank = object.integer_or_null("max_rank"))
    statistic.max_rank = rank_value(*rank, object.place("max_rank"));
  return statistic;
}

/// A section's "over_ranks": {"ranks": n, "rows": {measure: statistic}};
/// rows not written are zero on each of the n ranks.
SectionRanks read_section_ranks(const Object& object) {
  const Object over = object.object("over_ranks");
  SectionRanks section;
  section.ranks = over.integer("ranks");
  for (Statistic& statistic : section.values)
    statistic.ranks = section.ranks;
  const Object rows = over.object("rows");
  for (std::size_t i = 0; i < measure::size; ++i) {
    const std::string name = measure::name(i);
    if (const auto row = rows.find(name.c_str()))
      section.values[i] =
          read_statistic(*row, rows.place(name.c_str()), section.ranks);
  }
  return section;
}

CallSite read_call_site(const Object& object) {
  CallSite site;
  if (object.has("file") && object.find("file")->is_string()) {
    site.file = object.text("file");
    if (object.has("line"))
      site.line = static_cast<int>(
          std::min<std::uint64_t>(object.integer("line"), 0x7fffffff));
    if (object.has("function"))
      site.function = object.text("function");
    site.python = object.text_or_null("python", true);
    site.native = object.text_or_null("native", true);
    if (site.str() == object.text("site"))
      return site;
  }
  // A site known by its text alone.
  CallSite text;
  text.file = object.text("site");
  if (text.file == "<unknown>")
    text.file.clear();
  return text;
}

profiling::SiteSummary read_site_summary(const Object& object) {
  profiling::SiteSummary summary;
  summary.site = read_call_site(object);
  if (object.has("kind")) {
    const std::string kind = object.text("kind");
    if (const auto parsed = parse_event_kind(kind))
      summary.kind = *parsed;
  }
  if (object.has("what"))
    summary.what = object.text("what");
  if (object.has("count"))
    summary.count = object.integer("count");
  if (object.has("bytes"))
    summary.nbytes = object.integer("bytes");
  if (object.has("max_bytes"))
    summary.max_nbytes = object.integer("max_bytes");
  if (object.has("seconds"))
    summary.seconds = object.number("seconds");
  if (object.has("async"))
    summary.async = object.boolean("async");
  if (object.has("implicit"))
    summary.implicit = object.boolean("implicit");
  if (object.has("blocking"))
    summary.blocking = object.boolean("blocking");
  if (object.has("source"))
    summary.source = object.text("source");
  return summary;
}

profiling::PhaseSummary read_phase(const Object& object) {
  profiling::PhaseSummary phase;
  phase.name = object.text("name");
  phase.calls = object.integer("calls");
  phase.broken = object.boolean("broken");
  object.integer("transfers");
  phase.totals = read_kinds(object, "kinds");
  phase.entered = object.has("entered") ? object.boolean("entered") : true;
  return phase;
}

profiling::Violation read_violation(const Object& object) {
  profiling::Violation violation;
  object.text("message");
  violation.phase = object.text_or_null("phase", true);
  const std::string kind = object.text_or_null("kind", true);
  if (!kind.empty()) {
    violation.kind = parse_event_kind(kind);
    if (!violation.kind)
      mismatch(object.place("kind"), pointer(object.find("kind")),
               "a kind of event");
  }
  const std::string limit = object.text_or_null("limit", true);
  if (!limit.empty()) {
    const auto parsed = profiling::parse_limit(limit);
    if (!parsed)
      mismatch(object.place("limit"), pointer(object.find("limit")), "a limit");
    violation.limit = *parsed;
  }
  if (object.has("allowed"))
    violation.allowed = object.text("allowed");
  if (object.has("actual"))
    violation.actual = object.text("actual");
  if (object.has("details"))
    violation.details = object.texts("details");
  if (object.has("events")) {
    const std::vector<json> events = object.list("events");
    for (std::size_t i = 0; i < events.size(); ++i)
      violation.events.push_back(read_site_summary(
          Object(events[i], item(object.place("events"), i))));
  }
  return violation;
}

profiling::Finding read_finding(const Object& object) {
  profiling::Finding finding;
  const std::string rule = object.text("rule");
  const auto parsed = profiling::parse_advice_rule(rule);
  if (!parsed)
    mismatch(object.place("rule"), pointer(object.find("rule")),
             "a rule of advice");
  finding.rule = *parsed;
  finding.region = object.text("region");
  finding.phase = object.text("phase");
  finding.fix = object.text("fix");
  object.text("message");
  finding.saving_seconds = object.number_or_null("saving_seconds");
  finding.seconds = object.number("seconds");
  finding.count = object.integer("count");
  finding.calls = object.integer("calls");
  if (object.has("region_calls"))
    finding.region_calls = object.integer("region_calls");
  if (object.has("bytes"))
    finding.bytes = object.integer("bytes");
  if (object.has("saving_per_call"))
    finding.saving_per_call = object.number("saving_per_call");
  if (object.has("evidence"))
    finding.evidence = object.text("evidence");
  if (object.has("estimate"))
    finding.estimate = object.text("estimate");
  const std::vector<json> sites = object.list("sites");
  for (std::size_t i = 0; i < sites.size(); ++i) {
    const Object site(sites[i], item(object.place("sites"), i));
    profiling::FindingSite entry;
    entry.site = read_call_site(site);
    if (site.has("what"))
      entry.what = site.text("what");
    if (site.has("kind"))
      if (const auto kind = parse_event_kind(site.text("kind")))
        entry.kind = *kind;
    finding.sites.push_back(std::move(entry));
  }
  return finding;
}

/// What a rank's report says of its budget, as the merge counts it: the
/// verdict it wrote, whatever its violations.
void rank_verdict(Report& report, const Object& budget, int version) {
  JobRanks& job = report.job;
  const int rank = report.rank;
  const bool ok = budget.boolean("ok");
  const bool checked = budget.boolean("checked");
  const std::string error = budget.text_or_null("error");
  std::string verdict;
  if (version >= 3) {
    verdict = budget.text("verdict");
    if (verdict != "ok" && verdict != "broken" && verdict != "incomplete" &&
        verdict != "unchecked" && verdict != "none")
      mismatch(budget.place("verdict"), pointer(budget.find("verdict")),
               "one of \"broken\", \"incomplete\", \"none\", \"ok\", "
               "\"unchecked\"");
  }
  job.broken = job.unchecked = job.incomplete = job.without_budget =
      job.without_device = RankSet();
  if (!report.budget.device.present) {
    job.without_device.insert(rank);
    job.without_device_reason.offer(rank, report.budget.device.reason);
  }
  // A budget that could not check the copies broke no rule.
  if (verdict == "broken" || (verdict != "unchecked" && !ok))
    job.broken.insert(rank);
  if (!error.empty() || verdict == "unchecked") {
    job.unchecked.insert(rank);
    job.unchecked_reason.offer(rank, !error.empty() ? error
                                     : !report.budget.device.reason.empty()
                                         ? report.budget.device.reason
                                         : "the budget was not checked");
  }
  // A rule file that could not be used is NOT CHECKED above, not a loss.
  if (!report.budget.losses.empty() ||
      (verdict == "incomplete" && error.empty())) {
    job.incomplete.insert(rank);
    std::string losses;
    for (const std::string& loss : report.budget.losses)
      losses += (losses.empty() ? "" : "; ") + loss;
    job.incomplete_reason.offer(rank, losses.empty() ? "the plugin lost events"
                                                     : losses);
  }
  if ((!checked && error.empty()) || verdict == "none")
    job.without_budget.insert(rank);
  report.has_budget = !job.without_budget.contains(rank);
  report.budget_error = error;
}

void read_job(Report& report, const Object& top, const Object& budget_object) {
  const Object object = top.object("job");
  JobRanks& job = report.job;
  job.ranks = read_ranks(object, "ranks");
  if (job.ranks.empty() || job.ranks.lowest() != report.rank)
    inconsistent("'job.ranks' does not start at 'rank' (" +
                 std::to_string(report.rank) + ")");
  if (report.size > 0 && job.ranks.ranges().back().second >= report.size)
    inconsistent("'job.ranks' holds ranks beyond the job's " +
                 std::to_string(report.size) + " ('run.size')");
  for (auto [set, name] : {std::pair{&job.broken, "broken"},
                           {&job.unchecked, "unchecked"},
                           {&job.incomplete, "incomplete"},
                           {&job.without_budget, "without_budget"},
                           {&job.without_device, "without_device"},
                           {&job.without_advice, "without_advice"},
                           {&job.unknown_spaces, "unknown_spaces"},
                           {&job.open_regions, "open_regions"},
                           {&job.unbalanced_pops, "unbalanced_pops"},
                           {&job.region_tree_cut, "region_tree_cut"},
                           {&job.unwatched, "callbacks_unwatched"}}) {
    *set = read_ranks(object, name);
    if (const int outside = set->common(job.ranks.missing(
            set->empty() ? 0 : set->ranges().back().second + 1));
        outside >= 0)
      inconsistent("'job." + std::string(name) + "' holds rank " +
                   std::to_string(outside) + ", which 'job.ranks' does not");
  }
  const Object reasons = object.object("reasons");
  for (auto [reason, name] : {std::pair{&job.unchecked_reason, "unchecked"},
                              {&job.incomplete_reason, "incomplete"},
                              {&job.without_device_reason, "without_device"}})
    if (reasons.has(name)) {
      const Object entry = reasons.object(name);
      reason->rank = rank_value(entry.integer("rank"), entry.place("rank"));
      reason->text = entry.text("text");
    }
  report.has_budget = job.without_budget.size() < job.ranks.size();
  (void)budget_object;
}

} // namespace

Report read_json_report(std::string_view text) {
  std::optional<JsonDocument> parsed;
  try {
    parsed.emplace(text, max_nesting);
  } catch (const JsonSyntaxError& error) {
    if (error.nested)
      throw ReportError("JSON nested deeper than " +
                        std::to_string(max_nesting) +
                        " levels, which no report of the plugin is: is it a "
                        "report?");
    const std::size_t bad = invalid_utf8(text);
    if (bad != std::string_view::npos)
      throw ReportError("not UTF-8 text (byte " + std::to_string(bad) +
                        "): not a JSON report; write the reports again: "
                        "rerun the program with CUNUMPY_REPORT=<file>.json");
    const std::size_t at = error.byte;
    for (const char* constant : {"NaN", "Infinity", "-Infinity"})
      if (text.substr(at, std::strlen(constant)) == constant)
        throw ReportError(std::string("not JSON (") + constant +
                          " is not a JSON number)");
    throw ReportError("not JSON (" + excerpt(printable(error.what()), 60) +
                      "); a text report cannot be merged: write the reports "
                      "with CUNUMPY_REPORT=<file>.json");
  }
  const json document = parsed->root();
  const auto format = document.find("format");
  if (!document.is_object() || !format || !format->is_string() ||
      format->string() != "cunumpy-report")
    throw ReportError("not a cunumpy plugin report (written with "
                      "CUNUMPY_REPORT=<file>.json)");
  const Object top(document, "");
  const auto version_value = top.find("version");
  const auto version_number =
      version_value ? version_value->unsigned_integer() : std::nullopt;
  const int version =
      version_number && (*version_number == 2 || *version_number == 3)
          ? static_cast<int>(*version_number)
          : 0;
  if (version == 0)
    throw ReportError("a report of version " +
                      value_text(pointer(version_value)) +
                      "; this cunumpy-report reads versions 2 to 3: merge "
                      "it with the cunumpy-report installed with the plugin "
                      "that wrote it");

  Report report;
  report.from_plugin = true;
  report.program = top.text("program");
  report.rank = rank_value(top.integer("rank"), "rank");
  report.rank_known = top.has("rank_known") ? top.boolean("rank_known") : true;
  if (top.has("pid"))
    report.pid = static_cast<long>(
        std::min<std::uint64_t>(top.integer("pid"), 0x7fffffff));
  if (top.has("losses"))
    report.budget.losses = top.texts("losses");
  const bool complete = top.boolean("complete");
  if (!complete && report.budget.losses.empty())
    report.budget.losses.push_back("the plugin lost events");
  if (top.find("elapsed_seconds"))
    report.elapsed = top.number("elapsed_seconds");
  if (top.find("site_problems"))
    report.site_problems = top.texts("site_problems");
  if (top.has("open_regions"))
    report.open_regions = top.texts("open_regions");
  report.region_tree_cut = top.text_or_null("region_tree_cut", true);
  report.unwatched = top.text_or_null("callbacks_unwatched_reason", true);
  if (top.has("backtrace_depth"))
    report.backtrace_depth = static_cast<int>(
        std::min<std::uint64_t>(top.integer("backtrace_depth"), 64));
  if (top.find("metadata")) {
    const Object metadata = top.object("metadata");
    const json values = *top.find("metadata");
    const std::vector<json> members = values.elements();
    for (std::size_t i = 0; i < members.size(); ++i)
      if (members[i].is_string())
        report.metadata.emplace_back(values.key(i), members[i].string());
    if (metadata.find("Kokkos Version"))
      metadata.text("Kokkos Version");
  }

  const Object budget = top.object("budget");
  report.budget_path = budget.text_or_null("file");
  const std::vector<json> violations = budget.list("violations");
  std::vector<std::string> messages;
  for (std::size_t i = 0; i < violations.size(); ++i) {
    const Object violation(violations[i], item("budget.violations", i));
    report.budget.violations.push_back(read_violation(violation));
    messages.push_back(violation.text("message"));
  }
  if (budget.has("rules"))
    report.budget.rule_count = budget.integer("rules");

  // Version 3: which run, which Kokkos, which device.
  if (version >= 3) {
    // The notes say what the report model keeps apart.
    const std::string popped = "regions were popped where none was open, by ";
    const std::string allowed =
        " (it passes because CUNUMPY_ALLOW_NO_DEVICE=1)";
    for (const std::string& note : budget.texts("notes")) {
      if (note.compare(0, popped.size(), popped) == 0)
        report.unbalanced_pops = note.substr(popped.size());
      else if (note.size() > allowed.size() &&
               note.compare(note.size() - allowed.size(), allowed.size(),
                            allowed) == 0)
        report.budget.unchecked_allowed = true;
    }
    const Object run = top.object("run");
    report.run_id = run.text("id");
    if (report.run_id.empty())
      inconsistent("'run.id' is empty");
    const int run_rank = rank_value(run.integer("rank"), "run.rank");
    if (run_rank != report.rank)
      inconsistent("'run.rank' (" + std::to_string(run_rank) +
                   ") differs from 'rank' (" + std::to_string(report.rank) +
                   ")");
    if (const auto size = run.integer_or_null("size")) {
      if (*size > 0x7fffffff ||
          static_cast<std::uint64_t>(report.rank) >= *size)
        inconsistent("rank " + std::to_string(report.rank) + " of a job of " +
                     std::to_string(*size) + " rank(s) ('run.size')");
      report.size = static_cast<int>(*size);
    }
    report.label = run.text_or_null("label");
    if (run.find("id_unique"))
      report.run_id_unique = run.boolean("id_unique");
    if (run.find("started"))
      report.started = run.number("started");
    if (run.find("ended"))
      report.ended = run.number("ended");
    if (!report.run_id_unique && (!run.find("started") || !run.find("ended")))
      inconsistent("'run.id_unique' is false but 'run.started' or "
                   "'run.ended' is missing");
    top.text("cunumpy_version");
    const Object kokkos = top.object("kokkos");
    report.kokkos_interface = kokkos.integer("interface");
    kokkos.boolean("interface_known");
    const std::string kokkos_version = kokkos.text_or_null("version");
    if (kokkos.has("versions"))
      report.kokkos_versions = kokkos.texts("versions");
    else if (!kokkos_version.empty())
      report.kokkos_versions.push_back(kokkos_version);
    report.budget.device.backends = kokkos.texts("backends");
    report.kokkos_sessions = static_cast<int>(
        std::min<std::uint64_t>(kokkos.integer("sessions"), 1 << 20));
    const Object device = top.object("device");
    report.budget.device.present = device.boolean("present");
    report.budget.device.reason = device.text("reason");
    if (top.find("device_spaces"))
      report.device_spaces = top.texts("device_spaces");
    if (top.find("unknown_spaces")) {
      const Object unknown = top.object("unknown_spaces");
      report.unknown_spaces.names = unknown.texts("names");
      report.unknown_spaces.copies = unknown.integer("uncounted_copies");
    }
  } else {
    report.budget.device.present = true;
    for (const auto& [key, value] : report.metadata)
      if (key == "Kokkos Version")
        report.kokkos_versions.push_back(value);
  }

  if (top.has("cuda_view")) {
    const Object cuda = top.object("cuda_view");
    profiling::CudaView& view = report.cuda_view;
    view.built = cuda.boolean("built");
    const std::string state = cuda.text("state");
    for (auto known :
         {profiling::CudaViewState::not_built,
          profiling::CudaViewState::not_started, profiling::CudaViewState::off,
          profiling::CudaViewState::unavailable, profiling::CudaViewState::on})
      if (state == profiling::to_string(known))
        view.state = known;
    view.on = view.state == profiling::CudaViewState::on;
    view.reason = cuda.text("reason");
    view.unified_memory = cuda.boolean("unified_memory");
    view.unified_memory_reason = cuda.text("unified_memory_reason");
    view.migrations_unseen = cuda.text("migrations_unseen");
    view.copy_records = cuda.integer("copy_records");
    view.described = cuda.integer("described");
    view.dropped_records = cuda.integer("dropped_records");
    view.migrated_bytes = cuda.integer("migrated_bytes");
    view.migration_records = cuda.integer("migration_records");
    view.too_late = cuda.integer("too_late");
    view.unmatched = cuda.integer("unmatched");
    view.without_record = cuda.integer("without_record");
  }

  // The sections and the region tree.
  const Object total = top.object("total");
  const profiling::PhaseSummary total_phase = read_phase(total);
  report.budget.total = total_phase.totals;
  const Object outside = top.object("outside");
  report.budget.outside = read_phase(outside);
  const std::vector<json> phases = top.list("phases");
  std::vector<std::string> rules;
  for (std::size_t i = 0; i < phases.size(); ++i) {
    const Object phase(phases[i], item("phases", i));
    report.budget.phases.push_back(read_phase(phase));
    rules.push_back(phase.text_or_null("rule", true));
  }
  const std::vector<json> regions = top.list("regions");
  for (std::size_t i = 0; i < regions.size(); ++i) {
    const Object region(regions[i], item("regions", i));
    profiling::RegionNode node;
    node.name = region.text("name");
    node.path = region.text("path");
    node.parent = region.integer("parent");
    node.calls = region.integer("calls");
    node.seconds = region.number("seconds");
    region.integer("transfers");
    node.own = read_kinds(region, "own");
    node.inclusive = read_kinds(region, "inclusive");
    if (i > 0 && node.parent >= i)
      inconsistent("'regions[" + std::to_string(i) + "].parent' is " +
                   std::to_string(node.parent) + ", not an earlier region");
    node.depth = i == 0 ? 0 : report.budget.regions[node.parent].depth + 1;
    if (region.has("is_phase"))
      node.is_phase = region.boolean("is_phase");
    node.phase = region.text_or_null("phase", true);
    report.budget.regions.push_back(std::move(node));
  }

  // Advice.
  std::vector<std::string> finding_messages;
  if (top.find("advice")) {
    const Object advice = top.object("advice");
    const std::string recording = advice.text("recording");
    report.advice_recording =
        recording == "off"        ? profiling::AdviceRecording::off
        : recording == "contents" ? profiling::AdviceRecording::contents
                                  : profiling::AdviceRecording::on;
    const std::vector<json> findings = advice.list("findings");
    for (std::size_t i = 0; i < findings.size(); ++i) {
      const Object finding(findings[i], item("advice.findings", i));
      report.advice.push_back(read_finding(finding));
      finding_messages.push_back(finding.text("message"));
    }
  } else {
    report.advice_recording = profiling::AdviceRecording::off;
  }

  if (!top.find("job")) {
    // One rank: its job from its numbers, its verdict as it wrote it.
    start_job(report);
    report.job.phase_rules = rules;
    for (std::size_t i = 0; i < messages.size(); ++i)
      report.job.violations[i].message = messages[i];
    for (std::size_t i = 0; i < finding_messages.size(); ++i)
      report.job.findings[i].message = finding_messages[i];
    rank_verdict(report, budget, version);
    return report;
  }

  // A merged job: its ranks and the statistics over them.
  if (version < 3)
    inconsistent("a merged job's report of version 2");
  read_job(report, top, budget);
  JobRanks& job = report.job;
  job.merged = true;
  job.latest_start = report.started;
  job.earliest_end = report.ended;
  job.total = read_section_ranks(total);
  job.outside = read_section_ranks(outside);
  job.phase_rules = rules;
  for (std::size_t i = 0; i < phases.size(); ++i) {
    const Object phase(phases[i], item("phases", i));
    job.phases.push_back(read_section_ranks(phase));
    job.phase_broken.push_back(read_ranks(phase, "broken_ranks"));
  }
  for (std::size_t i = 0; i < regions.size(); ++i)
    job.regions.push_back(
        read_section_ranks(Object(regions[i], item("regions", i))));
  for (std::size_t i = 0; i < violations.size(); ++i) {
    const Object violation(violations[i], item("budget.violations", i));
    job.violations.push_back(
        {messages[i],
         rank_value(violation.integer("rank"), violation.place("rank")),
         read_ranks(violation, "ranks")});
  }
  if (!finding_messages.empty()) {
    const std::vector<json> findings = top.object("advice").list("findings");
    for (std::size_t i = 0; i < findings.size(); ++i) {
      const Object finding(findings[i], item("advice.findings", i));
      FindingRanks entry;
      entry.message = finding_messages[i];
      entry.rank = rank_value(finding.integer("rank"), finding.place("rank"));
      entry.ranks = read_ranks(finding, "ranks");
      entry.estimated = read_ranks(finding, "estimated_on_ranks");
      const Object over = finding.object("over_ranks");
      const std::uint64_t ranks = entry.ranks.size();
      entry.saving =
          read_statistic(over.required("saving", "an object"),
                         over.place("saving"), entry.estimated.size());
      entry.seconds = read_statistic(over.required("seconds", "an object"),
                                     over.place("seconds"), ranks);
      entry.events = read_statistic(over.required("events", "an object"),
                                    over.place("events"), ranks);
      entry.calls = read_statistic(over.required("calls", "an object"),
                                   over.place("calls"), ranks);
      job.findings.push_back(std::move(entry));
    }
  }
  return report;
}

} // namespace cunumpy::Impl
