// SARIF 2.1.0, as GitHub code scanning takes it: a result on the file and
// line of each broken rule's site, the causes of an INCOMPLETE or NOT
// CHECKED verdict placed at the rule file (a run that could not check is
// not a clean run), advice as warnings and notes; paths relative to the
// source root; fingerprints that do not move with the line.

#include <map>

#include <cunumpy/version.hpp>

#include "report/json_writer.hpp"
#include "report/report.hpp"
#include "support/excerpt.hpp"

namespace cunumpy::Impl {
namespace {

using Level = CiResult::Level;

/// `path` as a URI reference: unreserved characters and '/' as they are,
/// every other byte percent-encoded.
std::string uri_path(const std::string& path) {
  static const char digits[] = "0123456789ABCDEF";
  std::string uri;
  for (unsigned char c : path) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
        (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
        c == '~' || c == '/') {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += digits[c >> 4];
      uri += digits[c & 15];
    }
  }
  return uri;
}

const char* level_name(Level level) {
  switch (level) {
  case Level::warning:
    return "warning";
  case Level::note:
    return "note";
  case Level::error:
    break;
  }
  return "error";
}

void write_text(JsonWriter& json, std::string_view name,
                const std::string& text) {
  json.key(name);
  json.begin_object();
  json.member("text", text);
  json.end_object();
}

void write_location(JsonWriter& json, const CallSite& site,
                    const SourceRoot& root) {
  json.begin_object();
  if (!site.function.empty()) {
    json.key("logicalLocations");
    json.begin_array();
    json.begin_object();
    json.member("fullyQualifiedName", printable(site.function));
    json.member("kind", "function");
    json.end_object();
    json.end_array();
  }
  json.key("physicalLocation");
  json.begin_object();
  json.key("artifactLocation");
  json.begin_object();
  const std::string shown = root.shown(site.file);
  if (root.below(site.file)) {
    json.member("uri", uri_path(shown));
    json.member("uriBaseId", "SRCROOT");
  } else {
    json.member("uri", shown[0] == '/' ? "file://" + uri_path(shown)
                                       : uri_path(shown));
  }
  json.end_object();
  json.key("region");
  json.begin_object();
  json.member("startLine", site.line > 0 ? site.line : 1);
  json.end_object();
  json.end_object();
  json.end_object();
}

/// The call chain of a site: the native frame, then the Python line that
/// called it (or the module and offset under a Python line).
void write_stacks(JsonWriter& json, const CallSite& site,
                  const SourceRoot& root) {
  if (site.python.empty() && site.native.empty())
    return;
  json.key("stacks");
  json.begin_array();
  json.begin_object();
  json.key("frames");
  json.begin_array();
  json.begin_object();
  json.key("location");
  write_location(json, site, root);
  json.end_object();
  json.begin_object();
  json.key("location");
  json.begin_object();
  write_text(json, "message",
             site.python.empty() ? "in " + printable(site.native)
                                 : "from " + printable(site.python));
  json.end_object();
  json.end_object();
  json.end_array();
  write_text(json, "message", "call chain");
  json.end_object();
  json.end_array();
}

std::string category(const Report& report) {
  std::string name = report.label;
  if (name.empty()) {
    name = report.program.substr(report.program.rfind('/') + 1);
    if (name.empty())
      name = "program";
  }
  return excerpt(name, 128);
}

} // namespace

std::string format_sarif(const Report& report) {
  const std::vector<CiResult> results = ci_results(report);
  const std::size_t shown = std::min(results.size(), sarif_results_limit);
  const SourceRoot root = SourceRoot::find();
  // The rules of the results shown, in order of first use.
  std::map<std::string, std::size_t> rule_index;
  std::vector<const CiResult*> rules;
  for (std::size_t i = 0; i < shown; ++i)
    if (rule_index.emplace(results[i].rule, rules.size()).second)
      rules.push_back(&results[i]);

  JsonWriter json(2);
  json.begin_object();
  json.member("$schema", "https://json.schemastore.org/sarif-2.1.0.json");
  json.key("runs");
  json.begin_array();
  json.begin_object();
  json.key("automationDetails");
  json.begin_object();
  // The category of code scanning (everything up to the last '/'): a run
  // of another label does not close this one's alerts.
  json.member("id", "cunumpy/" + category(report) + "/");
  json.end_object();
  if (!root.path().empty()) {
    json.key("originalUriBaseIds");
    json.begin_object();
    json.key("SRCROOT");
    json.begin_object();
    json.member("uri", "file://" + uri_path(root.path()) + "/");
    json.end_object();
    json.end_object();
  }
  json.key("properties");
  json.begin_object();
  if (!report.label.empty())
    json.member("label", printable(report.label));
  json.member("omittedResults", results.size() - shown);
  json.member("program", printable(report.program));
  json.member("ranks", report.job.merged ? report.job.ranks.text()
                                         : std::to_string(report.rank));
  json.member("results", results.size());
  json.member("runId", printable(report.run_id));
  json.member("verdict", report.verdict());
  json.end_object();
  json.key("results");
  json.begin_array();
  for (std::size_t i = 0; i < shown; ++i) {
    const CiResult& result = results[i];
    json.begin_object();
    json.member("level", level_name(result.level));
    json.key("locations");
    json.begin_array();
    write_location(json, result.site, root);
    json.end_array();
    write_text(json, "message", result.message);
    json.key("partialFingerprints");
    json.begin_object();
    json.member("cunumpy/v1", ci_fingerprint(result, root));
    json.end_object();
    json.key("properties");
    json.begin_object();
    if (result.at_site)
      json.member("bytes", result.nbytes);
    if (result.at_site)
      json.member("count", result.count);
    if (result.kind)
      json.member("kind", to_string(*result.kind));
    if (!result.limit.empty())
      json.member("limit", result.limit);
    if (!result.phase.empty())
      json.member("phase", printable(result.phase));
    if (!result.ranks.empty())
      json.member("ranks", result.ranks);
    if (!result.what.empty())
      json.member("what", printable(result.what));
    json.end_object();
    json.member("ruleId", result.rule);
    json.member("ruleIndex", rule_index.at(result.rule));
    if (result.at_site)
      write_stacks(json, result.site, root);
    json.end_object();
  }
  json.end_array();
  json.key("tool");
  json.begin_object();
  json.key("driver");
  json.begin_object();
  json.member("name", "cunumpy");
  json.key("rules");
  json.begin_array();
  for (const CiResult* rule : rules) {
    json.begin_object();
    json.key("defaultConfiguration");
    json.begin_object();
    json.member("level", level_name(rule->category == CiResult::Category::advice
                                        ? Level::warning
                                        : Level::error));
    json.end_object();
    write_text(json, "fullDescription", rule->rule_text);
    write_text(json, "help", rule->rule_text);
    json.member("id", rule->rule);
    write_text(json, "shortDescription", rule->rule_title);
    json.end_object();
  }
  json.end_array();
  json.member("semanticVersion", CUNUMPY_VERSION_STRING);
  json.member("version", CUNUMPY_VERSION_STRING);
  json.end_object();
  json.end_object();
  json.end_object();
  json.end_array();
  json.member("version", "2.1.0");
  json.end_object();
  return json.take() + "\n";
}

} // namespace cunumpy::Impl
