// JUnit XML, as GitLab and Jenkins show test results: one test suite (the
// process, or the job), a test case per rule of the budget (phase × kind,
// and the phase's calls) with a failure naming each breaking site, and two
// cases every run has: "all events seen" (INCOMPLETE fails it) and "copies
// checked" (NOT CHECKED fails it), so that a run that could not check
// never reads as a clean one.

#include <ctime>
#include <map>

#include <cunumpy/version.hpp>

#include "report/format.hpp"
#include "report/report.hpp"
#include "support/excerpt.hpp"

namespace cunumpy::Impl {
namespace {

using Category = CiResult::Category;

/// Sites a failure lists; the SARIF and text reports have every one.
constexpr std::size_t sites_per_failure = 1000;

/// `text` (printable: no control character, valid UTF-8) as XML
/// character data or an attribute's value.
std::string xml(const std::string& text) {
  const std::string shown = printable(text);
  std::string out;
  out.reserve(shown.size());
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const char c = shown[i];
    // U+FFFE and U+FFFF are valid UTF-8 but not XML characters.
    if (c == '\xEF' && i + 2 < shown.size() && shown[i + 1] == '\xBF' &&
        (shown[i + 2] == '\xBE' || shown[i + 2] == '\xBF')) {
      out += shown[i + 2] == '\xBE' ? "\\uFFFE" : "\\uFFFF";
      i += 2;
      continue;
    }
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&apos;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string seconds_text(double seconds) {
  return printf_text("%.6f", seconds > 0.0 ? seconds : 0.0);
}

struct Case {
  std::string name;
  double seconds = 0.0;
  std::vector<const CiResult*> failures;
  std::string skipped; ///< why it checked nothing and still passes
};

/// A failure: the first finding's title as its message, then a line per
/// finding (a site's "file:line: what (xN)").
std::string failure(const Case& test, const SourceRoot& root) {
  const CiResult& first = *test.failures.front();
  std::string body, title;
  std::size_t sites = 0, more = 0;
  for (const CiResult* result : test.failures) {
    if (result->title != title) {
      title = result->title;
      body += xml(title) + "\n";
    }
    if (!result->at_site) {
      if (result->message != result->title)
        body += "  " + xml(result->message) + "\n";
      continue;
    }
    if (sites++ >= sites_per_failure) {
      ++more;
      continue;
    }
    const CallSite& site = result->site;
    body +=
        "  " +
        xml(root.shown(site.file) +
            (site.line > 0 ? ":" + std::to_string(site.line) : "") + ": " +
            result->what + " (x" + std::to_string(result->count) +
            (is_copy(result->kind.value_or(EventKind::sync))
                 ? ", " + std::to_string(result->nbytes) + " bytes"
                 : std::string()) +
            ")" + (site.python.empty() ? "" : " from " + site.python) +
            (result->ranks.empty() ? "" : " [rank(s) " + result->ranks + "]")) +
        "\n";
  }
  if (more > 0)
    body += "  … and " + std::to_string(more) +
            " more site(s): the SARIF and text reports have them\n";
  return "      <failure type=\"" +
         xml(first.limit.empty() ? first.rule : first.limit) + "\" message=\"" +
         xml(first.title) + "\">" + body + "</failure>\n";
}

std::string timestamp(double seconds) {
  if (seconds <= 0.0)
    return {};
  const std::time_t time = static_cast<std::time_t>(seconds);
  std::tm parts{};
  if (gmtime_r(&time, &parts) == nullptr)
    return {};
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &parts);
  return text;
}

} // namespace

std::string format_junit(const Report& report) {
  const std::vector<CiResult> results = ci_results(report);
  const SourceRoot root = SourceRoot::find();
  const bool merged = report.job.merged;
  const double ranks = merged ? static_cast<double>(std::max<std::uint64_t>(
                                    report.job.ranks.size(), 1))
                              : 1.0;

  std::vector<Case> cases(2);
  cases[0].name = "all events seen";
  cases[1].name = "copies checked";
  // A case per rule of the budget: its phase's calls, and each kind that
  // happened in the phase or broke its rule.
  std::map<std::pair<std::string, std::string>, std::size_t> index;
  const auto add = [&](const std::string& phase, const std::string& what,
                       double seconds) -> Case& {
    const auto [at, added] =
        index.emplace(std::pair{phase, what}, cases.size());
    if (added)
      cases.push_back(
          {"phase '" + excerpt(phase, 256) + "': " + what, seconds, {}, {}});
    return cases[at->second];
  };
  const auto& phases = report.budget.phases;
  for (std::size_t i = 0; i < phases.size(); ++i) {
    const profiling::PhaseSummary& phase = phases[i];
    const bool has_rule = merged ? i < report.job.phase_rules.size() &&
                                       !report.job.phase_rules[i].empty()
                                 : phase.rule.has_value();
    if (!has_rule)
      continue;
    double seconds = 0.0; // in the phase's regions, not nested in itself
    for (const profiling::RegionNode& region : report.budget.regions)
      if (region.is_phase && region.name == phase.name &&
          report.budget.regions[region.parent].phase != phase.name)
        seconds += region.seconds;
    add(phase.name, "calls", seconds / ranks);
    for (EventKind kind : all_event_kinds)
      if (kind != EventKind::kokkos_own &&
          kind_totals(phase.totals, kind).count > 0)
        add(phase.name, std::string(to_string(kind)),
            kind_totals(phase.totals, kind).seconds / ranks);
  }
  std::size_t failures = 0, skipped = 0;
  for (const CiResult& result : results) {
    switch (result.category) {
    case Category::incomplete:
      cases[0].failures.push_back(&result);
      break;
    case Category::unchecked:
      if (result.level == CiResult::Level::error)
        cases[1].failures.push_back(&result);
      else
        cases[1].skipped = result.message;
      break;
    case Category::broken:
      add(result.phase,
          result.kind ? std::string(to_string(*result.kind)) : "calls", 0.0)
          .failures.push_back(&result);
      break;
    case Category::advice:
      break;
    }
  }
  for (const Case& test : cases) {
    failures += !test.failures.empty();
    skipped += test.failures.empty() && !test.skipped.empty();
  }

  std::string name = report.label.empty()
                         ? report.program.substr(report.program.rfind('/') + 1)
                         : report.label;
  const std::string classname = "cunumpy." + excerpt(name, 128);
  name = "cunumpy: " + excerpt(name, 128) +
         (merged ? " (job of " + std::to_string(report.job.ranks.size()) +
                       " rank(s): " + report.job.ranks.text() + ")"
                 : " (rank " + std::to_string(report.rank) + ")");
  const std::string counts = " tests=\"" + std::to_string(cases.size()) +
                             "\" failures=\"" + std::to_string(failures) +
                             "\" errors=\"0\" skipped=\"" +
                             std::to_string(skipped) + "\" time=\"" +
                             seconds_text(report.elapsed) + "\"";
  std::string text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  text += "<testsuites name=\"cunumpy\"" + counts + ">\n";
  text += "  <testsuite name=\"" + xml(name) + "\"" + counts;
  if (const std::string when = timestamp(report.started); !when.empty())
    text += " timestamp=\"" + when + "\"";
  text += ">\n    <properties>\n";
  const auto property = [&](const char* key, const std::string& value) {
    text += "      <property name=\"" + std::string(key) + "\" value=\"" +
            xml(value) + "\"/>\n";
  };
  property("program", report.program);
  property("run_id", report.run_id);
  if (!report.label.empty())
    property("label", report.label);
  property("verdict", std::string(report.verdict()));
  property("cunumpy_version", CUNUMPY_VERSION_STRING);
  text += "    </properties>\n";
  for (const Case& test : cases) {
    text += "    <testcase name=\"" + xml(test.name) + "\" classname=\"" +
            xml(classname) + "\" time=\"" + seconds_text(test.seconds) + "\"";
    if (test.failures.empty() && test.skipped.empty()) {
      text += "/>\n";
      continue;
    }
    text += ">\n";
    if (!test.failures.empty())
      text += failure(test, root);
    else
      text += "      <skipped message=\"" + xml(test.skipped) + "\"/>\n";
    text += "    </testcase>\n";
  }
  text += "  </testsuite>\n</testsuites>\n";
  return text;
}

} // namespace cunumpy::Impl
