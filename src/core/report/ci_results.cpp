// What CI systems show of a run (SARIF results, JUnit failures, GitHub
// annotations): its findings, most serious first, and the paths of their
// files as the repository names them.

#include <algorithm>
#include <filesystem>
#include <map>
#include <system_error>

#include "report/format.hpp"
#include "report/report.hpp"
#include "support/excerpt.hpp"
#include "support/variables.hpp"

namespace cunumpy::Impl {
namespace {

using profiling::Limit;
using profiling::Violation;
using Category = CiResult::Category;
using Level = CiResult::Level;

/// `path` with "." and ".." resolved as written and no repeated '/'.
std::string normal(const std::string& path) {
  const bool absolute = !path.empty() && path[0] == '/';
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos)
      end = path.size();
    const std::string part = path.substr(start, end - start);
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..")
        parts.pop_back();
      else if (!absolute)
        parts.push_back(part);
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = end + 1;
  }
  std::string text = absolute ? "/" : "";
  for (std::size_t i = 0; i < parts.size(); ++i)
    text += (i == 0 ? "" : "/") + parts[i];
  return text.empty() ? "." : text;
}

bool starts_below(const std::string& file, const std::string& root) {
  return !root.empty() && file.size() > root.size() + 1 &&
         file.compare(0, root.size(), root) == 0 && file[root.size()] == '/';
}

/// The first line of a violation's paragraph.
std::string headline(const Violation& violation) {
  std::string text = violation.str();
  text.resize(std::min(text.size(), text.find('\n')));
  return text;
}

bool is_unchecked(Limit limit) {
  return limit == Limit::no_device || limit == Limit::migrations_unseen;
}

/// "here: deep_copy("x", nbytes=800) (x3, 2400 bytes)".
std::string what_here(const profiling::SiteSummary& site) {
  std::string text =
      "here: " + printable(site.what) + " (x" + std::to_string(site.count);
  if (is_copy(site.kind))
    text += ", " + std::to_string(site.nbytes) + " bytes";
  return text + ")";
}

} // namespace

SourceRoot SourceRoot::find() {
  namespace fs = std::filesystem;
  SourceRoot result;
  std::error_code error;
  const fs::path cwd = fs::current_path(error);
  if (!error)
    result.cwd_ = cwd.string();
  if (const auto root = read_text("CUNUMPY_SOURCE_ROOT")) {
    result.root_ =
        normal(!root->empty() && (*root)[0] != '/' && !result.cwd_.empty()
                   ? result.cwd_ + "/" + *root
                   : *root);
  } else if (!result.cwd_.empty()) {
    // The innermost directory holding a `.git` (a directory, or the file
    // of a worktree), as `git rev-parse --show-toplevel` finds it.
    for (fs::path dir = cwd; !dir.empty(); dir = dir.parent_path()) {
      if (fs::exists(fs::symlink_status(dir / ".git", error))) {
        result.root_ = normal(dir.string());
        break;
      }
      if (dir == dir.parent_path())
        break;
    }
  }
  if (result.root_ == "/" || result.root_ == ".")
    result.root_.clear();
  return result;
}

std::string SourceRoot::shown(const std::string& file) const {
  std::string path = normal(file);
  if (starts_below(path, root_))
    return path.substr(root_.size() + 1);
  return path;
}

bool SourceRoot::below(const std::string& file) const {
  const std::string path = shown(file);
  return !path.empty() && path[0] != '/';
}

std::vector<CiResult> ci_results(const Report& report) {
  // One process is a job of one rank: one way to read both.
  Report job = report;
  start_job(job);
  const bool merged = report.job.merged;
  const JobRanks& ranks = job.job;
  const auto on_ranks = [&](const RankSet& set) {
    return merged ? " on rank(s) " + set.text() : std::string();
  };
  // A finding of the whole run is placed at the rule file, else the program.
  CallSite whole_run;
  whole_run.file =
      report.budget_path.empty() ? report.program : report.budget_path;
  if (!whole_run.file.empty() && whole_run.file[0] != '/') {
    std::error_code error;
    const auto absolute = std::filesystem::absolute(whole_run.file, error);
    if (!error)
      whole_run.file = absolute.string();
  }
  std::map<std::string, std::string> rules; // phase -> its rule's text
  for (std::size_t i = 0; i < job.budget.phases.size(); ++i)
    if (i < ranks.phase_rules.size() && !ranks.phase_rules[i].empty())
      rules.emplace(job.budget.phases[i].name, ranks.phase_rules[i]);

  std::vector<CiResult> incomplete, unchecked, phases, sites, notes, advice;
  const auto verdict_result = [&](Category category, std::string title,
                                  const std::string& more) {
    CiResult result;
    result.category = category;
    const bool lost = category == Category::incomplete;
    result.rule = lost ? "cunumpy/incomplete" : "cunumpy/not-checked";
    result.rule_title = lost ? "INCOMPLETE: events may be missing, so the "
                               "budget cannot pass"
                             : "NOT CHECKED: the budget checked nothing";
    result.rule_text =
        lost ? "A budget passes only when cunumpy saw every event of every "
               "rank: events the plugin lost, a rank without a report or a "
               "job of unknown size fail it (docs/budgets.md)."
             : "A run passes only when its budget checked its copies: a run "
               "without a budget, with a rule file that could not be used or "
               "without a device memory space fails (docs/budgets.md).";
    result.title = printable(title);
    result.message = printable(title + more);
    result.site = whole_run;
    return result;
  };
  // The ranks each violation's finding already names.
  RankSet lost_ranks, unchecked_ranks;
  for (std::size_t i = 0; i < job.budget.violations.size(); ++i) {
    const Violation& violation = job.budget.violations[i];
    if (violation.limit == Limit::events_lost)
      lost_ranks.insert(ranks.violations[i].ranks);
    else if (is_unchecked(violation.limit))
      unchecked_ranks.insert(ranks.violations[i].ranks);
  }

  if (merged) {
    const RankSet missing = missing_ranks(job);
    if (!missing.empty())
      incomplete.push_back(
          verdict_result(Category::incomplete,
                         "no report from rank(s) " + missing.text() + " of " +
                             std::to_string(job_size(job)),
                         ": the job cannot pass (each rank writes its own with "
                         "CUNUMPY_REPORT=<dir>/report-%r.json)"));
    else if (job_size(job) == 0)
      incomplete.push_back(verdict_result(
          Category::incomplete, "the job's size is unknown",
          ", so ranks may be missing (run it under a launcher that sets "
          "the job's size)"));
  }
  if (const RankSet lost = ranks.incomplete.minus(lost_ranks); !lost.empty())
    incomplete.push_back(verdict_result(
        Category::incomplete, "events may be missing" + on_ranks(lost),
        ": " + ranks.incomplete_reason.text));
  if (!ranks.without_budget.empty())
    unchecked.push_back(verdict_result(
        Category::unchecked, "no budget" + on_ranks(ranks.without_budget),
        report.from_plugin ? ": set CUNUMPY_BUDGET to a rule file (with "
                             "mpirun, pass it with -x CUNUMPY_BUDGET)"
                           : ": the TransferBudget has no rule"));
  if (const RankSet others = ranks.unchecked.minus(unchecked_ranks);
      !others.empty())
    unchecked.push_back(verdict_result(Category::unchecked,
                                       "budget not checked" + on_ranks(others),
                                       ": " + ranks.unchecked_reason.text));
  if (job.budget.unchecked_allowed && job.budget.violations.empty()) {
    CiResult note =
        verdict_result(Category::unchecked, "no copy was checked",
                       ": " + job.budget.device.reason +
                           " (it passes because CUNUMPY_ALLOW_NO_DEVICE=1)");
    note.level = Level::note;
    notes.push_back(std::move(note));
  }

  for (std::size_t i = 0; i < job.budget.violations.size(); ++i) {
    const Violation& violation = job.budget.violations[i];
    const ViolationRanks& entry = ranks.violations[i];
    const std::string rank_text =
        merged
            ? " (on rank(s) " + entry.ranks.text() +
                  (violation.events.empty()
                       ? std::string()
                       : "; rank " + std::to_string(entry.rank) + "'s sites") +
                  ")"
            : std::string();
    std::string details;
    for (const std::string& detail : violation.details)
      details += "; " + detail;
    const profiling::Verdict verdict = profiling::verdict({violation});
    if (verdict != profiling::Verdict::broken) {
      CiResult result = verdict_result(
          verdict == profiling::Verdict::incomplete ? Category::incomplete
                                                    : Category::unchecked,
          headline(violation), details + rank_text);
      result.limit = std::string(to_string(violation.limit));
      result.ranks = merged ? entry.ranks.text() : std::string();
      (result.category == Category::incomplete ? incomplete : unchecked)
          .push_back(std::move(result));
      continue;
    }
    CiResult rule;
    rule.category = Category::broken;
    rule.phase = violation.phase;
    rule.kind = violation.kind;
    rule.limit = std::string(to_string(violation.limit));
    const std::string phase = excerpt(violation.phase, 256);
    const std::string kind =
        violation.kind ? std::string(to_string(*violation.kind)) : "calls";
    rule.rule = phase + "/" + kind;
    rule.rule_title = "phase '" + phase + "': " + kind;
    const auto found = rules.find(violation.phase);
    rule.rule_text =
        "The rule of phase '" + phase + "': " +
        printable(found == rules.end() ? std::string("-") : found->second) +
        " (docs/budgets.md).";
    rule.title = headline(violation);
    rule.ranks = merged ? entry.ranks.text() : std::string();
    const std::string allows =
        found == rules.end() ? std::string()
                             : "; the rule allows: " + printable(found->second);
    if (violation.events.empty()) {
      rule.site = whole_run;
      rule.message = rule.title + printable(details) + allows + rank_text;
      phases.push_back(std::move(rule));
      continue;
    }
    for (const profiling::SiteSummary& site :
         top_sites(violation.events, violation.events.size())) {
      CiResult result = rule;
      result.site = site.site.known() ? site.site : whole_run;
      result.at_site = site.site.known();
      result.what = site.what;
      result.count = site.count;
      result.nbytes = site.nbytes;
      result.message =
          rule.title + "; " + what_here(site) +
          (site.site.known() ? std::string() : " at a call site not known") +
          allows + rank_text;
      sites.push_back(std::move(result));
    }
  }

  for (std::size_t i = 0; i < job.advice.size(); ++i) {
    const profiling::Finding& finding = job.advice[i];
    CiResult result;
    result.category = Category::advice;
    result.level = finding.saving_seconds ? Level::warning : Level::note;
    result.rule = "advice/" + std::string(finding.name());
    result.rule_title = "advice: " + std::string(finding.name());
    result.rule_text = "A copy worth changing, with the change that removes "
                       "it (docs/advice.md). Advice never fails a budget.";
    result.phase = finding.phase;
    result.title = printable(finding.str());
    result.message = result.title;
    if (merged && i < ranks.findings.size())
      result.message += " (on rank(s) " + ranks.findings[i].ranks.text() + ")";
    result.site = whole_run;
    if (!finding.sites.empty() && finding.sites.front().site.known()) {
      result.site = finding.sites.front().site;
      result.at_site = true;
      result.what = finding.sites.front().what;
      result.kind = finding.sites.front().kind;
    }
    result.count = finding.count;
    result.nbytes = finding.bytes;
    advice.push_back(std::move(result));
  }
  std::stable_partition(advice.begin(), advice.end(), [](const CiResult& r) {
    return r.level == Level::warning;
  });

  std::vector<CiResult> results;
  for (auto* list : {&incomplete, &unchecked, &sites, &phases, &notes, &advice})
    for (CiResult& result : *list)
      results.push_back(std::move(result));
  return results;
}

std::string ci_fingerprint(const CiResult& result, const SourceRoot& root) {
  // What was copied, without its numbers: a size that changes with the
  // input is the same copy.
  std::string what;
  for (std::size_t i = 0; i < result.what.size(); ++i) {
    const bool digit = result.what[i] >= '0' && result.what[i] <= '9';
    if (!digit)
      what += result.what[i];
    else if (what.empty() || what.back() != '#')
      what += '#';
  }
  const std::string identity = result.rule + '\0' + result.limit + '\0' +
                               root.shown(result.site.file) + '\0' +
                               result.site.function + '\0' + what;
  std::uint64_t hash = 14695981039346656037ull; // FNV-1a
  for (unsigned char c : identity) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  static const char digits[] = "0123456789abcdef";
  std::string text(16, '0');
  for (int i = 15; i >= 0; --i, hash >>= 4)
    text[static_cast<std::size_t>(i)] = digits[hash & 15];
  return text;
}

namespace {

/// A workflow command's message: '%', CR and LF escaped.
std::string command_data(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '%')
      out += "%25";
    else if (c == '\r')
      out += "%0D";
    else if (c == '\n')
      out += "%0A";
    else
      out += c;
  }
  return out;
}

/// A workflow command's property: also ':' and ','.
std::string command_property(const std::string& text) {
  std::string out;
  for (char c : command_data(text)) {
    if (c == ':')
      out += "%3A";
    else if (c == ',')
      out += "%2C";
    else
      out += c;
  }
  return out;
}

} // namespace

std::string github_annotations(const Report& report,
                               const std::string& full_report) {
  std::vector<CiResult> errors = ci_results(report);
  errors.erase(std::remove_if(errors.begin(), errors.end(),
                              [](const CiResult& result) {
                                return result.level != Level::error;
                              }),
               errors.end());
  if (errors.empty())
    return {};
  const SourceRoot root = SourceRoot::find();
  std::string text;
  const std::size_t shown = std::min(errors.size(), annotations_per_step);
  for (std::size_t i = 0; i < shown; ++i) {
    const CiResult& error = errors[i];
    std::string properties;
    if (!error.site.file.empty()) {
      properties =
          "file=" + command_property(printable(root.shown(error.site.file)));
      if (error.site.line > 0)
        properties += ",line=" + std::to_string(error.site.line);
      properties += ",";
    }
    properties += "title=" + command_property("cunumpy: " + error.rule_title);
    text += "::error " + properties + "::" + command_data(error.message) + "\n";
  }
  if (errors.size() > shown)
    text += "::notice title=cunumpy::" +
            command_data(std::to_string(errors.size() - shown) +
                         " more error(s) of cunumpy not annotated (GitHub "
                         "shows " +
                         std::to_string(annotations_per_step) +
                         " a step): the full report is " + full_report) +
            "\n";
  return text;
}

} // namespace cunumpy::Impl
