#ifndef CUNUMPY_SRC_REPORT_REPORT_HPP
#define CUNUMPY_SRC_REPORT_REPORT_HPP

// The report of a run: one model, made once from what the recorder and a
// budget know (describe_run), and each format a function over it
// (report_formats). The plugin, the library (TransferBudget::report,
// TransferCounter::report, assert_no_transfers' message) and the Python
// module all write their texts through it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <cunumpy/advice.hpp>
#include <cunumpy/budget_snapshot.hpp>
#include <cunumpy/cuda_view.hpp>
#include <cunumpy/source_location.hpp>

#include "recorder/lock.hpp"
#include "report/job.hpp"

namespace cunumpy::profiling {
class TransferBudget;
}

namespace cunumpy::Impl {

class Recorder;

/// The syncs of one DualView at one call site, in one direction.
struct DualViewSync {
  std::string label;
  bool to_device = true;
  bool copied = false; ///< the sync made a copy (else it copied nothing)
  EventKind copy_kind = EventKind::to_device;
  CallSite site;
  std::uint64_t count = 0;
  std::uint64_t nbytes = 0;
};

/// Modifies of one DualView that no sync followed.
struct DualViewModify {
  std::string label;
  bool on_device = true;
  CallSite site;           ///< the last modify
  std::uint64_t count = 0; ///< modifies since the last sync
};

/// Copies taken for host-to-host because a space's name is unknown: the
/// names, in the order seen, and how many copies that left uncounted.
struct UnknownSpaces {
  std::vector<std::string> names;
  std::uint64_t copies = 0;
};

/// Everything a report says of a run: plain data, made under the
/// recorder's lock and formatted after it.
struct Report {
  std::string program;
  int rank = 0;
  bool rank_known = false;
  int size = 0; ///< the job's ranks; 0: unknown
  std::string run_id;
  bool run_id_unique = true; ///< RunId::unique
  /// When the process started and when the report was made (seconds since
  /// the epoch): launches of one run id that is not unique are told apart
  /// by them.
  double started = 0.0;
  double ended = 0.0;
  std::string label; ///< CUNUMPY_LABEL
  /// The Kokkos that called the plugin: its tools interface, its version
  /// when it declared one, and how many of its sessions (or Kokkos
  /// libraries of the process) initialized the plugin.
  std::uint64_t kokkos_interface = 0;
  /// The version of every Kokkos the process initialized, in order.
  std::vector<std::string> kokkos_versions;
  int kokkos_sessions = 0;
  long pid = 0;
  double elapsed = 0.0;
  int backtrace_depth = 0;
  std::vector<std::string> device_spaces;
  UnknownSpaces unknown_spaces;

  /// A budget was asked for (CUNUMPY_BUDGET; a library budget with
  /// rules): without one the verdict is "none".
  bool has_budget = false;
  /// Made by the plugin (else by a TransferBudget of the library): the
  /// text says which setting changes what it shows.
  bool from_plugin = true;
  std::string budget_path;  ///< its rule file, if any
  std::string budget_error; ///< why the budget file was not used
  /// The region tree, the phases, the violations and the losses.
  profiling::BudgetSnapshot budget;
  /// Why Kokkos' table of callbacks was not watched ("" when it was).
  std::string unwatched;
  /// Regions still open at the end, as "'path' (thread N)".
  std::vector<std::string> open_regions;
  /// Who popped regions where none was open, in one line ("" when no one
  /// did): "libtpetra.so.13.2 4 times, cg once".
  std::string unbalanced_pops;
  /// The path below which regions were not made (RegionTree::max_depth),
  /// "" when the tree was not cut.
  std::string region_tree_cut;
  /// Why call sites lack a line, once per module (SiteTable::problems).
  std::vector<std::string> site_problems;
  /// List every region, not only those with transfers
  /// (CUNUMPY_REPORT_ALL_REGIONS).
  bool all_regions = false;

  /// What advice recorded (CUNUMPY_ADVISE), with which thresholds, what
  /// it found (largest estimated saving first), and how many findings the
  /// stderr summary shows.
  profiling::AdviceRecording advice_recording = profiling::AdviceRecording::on;
  profiling::AdviceOptions advice_options;
  std::vector<profiling::Finding> advice;
  std::size_t advice_top = 3;

  std::vector<DualViewSync> dual_view_syncs;
  std::vector<DualViewModify> unsynced_modifies;

  std::string trace_path;
  std::uint64_t trace_dropped = 0;
  /// What CUDA's own record of the process (CUPTI) added, or why not.
  profiling::CudaView cuda_view;
  std::vector<std::pair<std::string, std::string>> metadata;

  /// The ranks of a job merged into this report (report/job.hpp); of one
  /// process, `job.merged` is false.
  JobRanks job;

  /// The report of one TransferCounter (CounterState::describe), not of a
  /// run: its counts are `budget.total` and `budget.total_sites`, why they
  /// may be short `budget.losses` (and `budget.device`, when nothing was
  /// checked), and `counter_complete` is TransferCounter::complete(). Its
  /// text is the counts by kind and call site (docs/counting.md).
  bool of_counter = false;
  bool counter_complete = true;

  /// The budget asked for is broken, could not be checked, may have
  /// missed events, or checked nothing (no device memory space); of a job,
  /// a budget was asked for and the job's verdict is not ok.
  bool failed() const {
    if (job.merged)
      return has_budget && verdict() != "ok";
    return has_budget && (!budget.violations.empty() || !budget_error.empty());
  }
  /// "none", "ok", "broken", "incomplete" (events may be missing, or the
  /// rule file could not be used), "unchecked" (no device memory space).
  /// Of a job: "broken" when a rank broke a rule; else "incomplete" when a
  /// rank may have missed events or ranks have no report (or the job's size
  /// is unknown); else "unchecked" when a rank could not check its budget
  /// or ran without one; "none" when no rank had one; else "ok".
  std::string_view verdict() const;
};

/// What the recorder knows of the run, read under its lock: which process
/// of which run (rank, job size, run id, label: RecorderSettings::run, the one
/// reader every report uses), the program, its pid, when it started, the
/// seconds since `start` (the recorder's clock), the backtrace depth, the
/// regions still open and the region tree's cut, why call sites lack a line,
/// the device and unknown memory spaces, CUDA's view.
void describe_run(Report& report, double start, const RecorderLock& lock);
/// What `budget` knows: its snapshot (regions, phases, violations,
/// losses) and, unless `report.advice_recording` is off, its findings.
/// Takes `recorder`'s lock.
void describe_budget(Report& report, const profiling::TransferBudget& budget,
                     Recorder& recorder);

/// A region still open at the end, once per thread and path however many
/// times it was pushed below the tree's cut.
struct OpenRegionText {
  std::string path;
  std::string where; ///< "main thread", "thread 3"
  std::size_t times = 1;
};
std::vector<OpenRegionText> open_region_texts(const RecorderLock& lock);

/// A way to write a report: its name (CUNUMPY_REPORT_FORMAT,
/// TransferBudget::report(format)) and the function writing it.
struct ReportFormat {
  std::string_view name;
  std::string (*write)(const Report&);
};
/// Every format, in the order the documentation lists them.
const std::vector<ReportFormat>& report_formats();
/// The format named `name`, or null.
const ReportFormat* find_report_format(std::string_view name);
/// "'text', 'summary', 'json', 'hatchet', 'sarif', 'junit'": for messages.
std::string report_format_names();

/// Lines (without "cunumpy: note: ") on what the report may hide: events
/// that may be missing (without a budget, whose verdict says so), copies
/// taken as host-to-host because a memory space's name is unknown; and, in
/// the report file only (not the `summary`), a table of callbacks cunumpy
/// cannot watch.
std::vector<std::string> report_notes(const Report& report, bool summary);

// The formats (report_formats lists them).

/// The full text report (text_report.cpp); of a counter (`of_counter`),
/// its counts by kind and call site, then why they may be short.
std::string format_text(const Report& report);
/// A few lines for stderr: totals, phases, verdict and broken rules
/// (text_report.cpp).
std::string format_summary(const Report& report);
/// The JSON report, which cunumpy-report reads and merges
/// (json_report.cpp).
std::string format_json(const Report& report);
/// The region tree in Hatchet's literal format (hatchet_report.cpp).
std::string format_hatchet(const Report& report);

/// SARIF 2.1.0, for code scanning: a result per broken rule and site, per
/// cause of an INCOMPLETE or NOT CHECKED verdict, per finding of advice
/// (sarif_report.cpp).
std::string format_sarif(const Report& report);
/// JUnit XML: a test suite of the run (or the job), a test case per rule
/// (phase × kind) and per cause the verdict could fail for
/// (junit_report.cpp).
std::string format_junit(const Report& report);

/// Paths of source files as CI systems place them: relative to the source
/// root (CUNUMPY_SOURCE_ROOT, else the git top level of the working
/// directory), else absolute (ci_results.cpp).
class SourceRoot {
public:
  /// Reads CUNUMPY_SOURCE_ROOT, else looks for the working directory's git
  /// top level (a `.git` in it or a directory above).
  static SourceRoot find();
  /// The root, absolute, without a trailing '/'; "" when there is none.
  const std::string& path() const noexcept { return root_; }
  /// `file` relative to the root when below it ("src/step.cpp"), else
  /// absolute; '.' and '..' resolved as written (no link is followed).
  std::string shown(const std::string& file) const;
  /// `shown(file)` is relative to the root.
  bool below(const std::string& file) const;

private:
  std::string root_, cwd_;
};

/// One finding of a run as CI systems show it: a SARIF result, a JUnit
/// failure, a GitHub annotation.
struct CiResult {
  /// What kind of finding: a broken rule's site (or its phase, for
  /// `calls` and `never_entered`), a cause of an INCOMPLETE verdict, of a
  /// NOT CHECKED one, a finding of advice.
  enum class Category { broken, incomplete, unchecked, advice };
  enum class Level { error, warning, note };
  Category category = Category::broken;
  Level level = Level::error;
  /// "integrate/to_host", "integrate/calls", "cunumpy/incomplete",
  /// "cunumpy/not-checked", "advice/pageable_memory".
  std::string rule;
  /// The rule's one-line description and, for a budget's, the phase's rule
  /// ("allow to_host (max_nbytes=8); ignore device_copy, sync").
  std::string rule_title, rule_text;
  std::string phase;             ///< a budget's rule's phase
  std::optional<EventKind> kind; ///< its kind (none: calls, the verdict's)
  std::string limit;             ///< "forbidden", "max_count", ...
  std::string title;             ///< one line, printable
  std::string message;           ///< the title, then what and where, printable
  /// Where: the site, or, for a finding of the whole run, the rule file
  /// (else the program) with line 0.
  CallSite site;
  bool at_site = false;
  std::string what; ///< what was copied there
  std::uint64_t count = 0;
  std::uint64_t nbytes = 0;
  std::string ranks; ///< of a job: "0-3"
};
/// The findings of `report` (of one process or a merged job), most serious
/// first: the causes of an INCOMPLETE or NOT CHECKED verdict, the broken
/// rules' sites (each violation's largest copies first), the broken rules
/// of phases that never ran or ran another number of times, then advice
/// (warnings where a saving was estimated, else notes). A report whose
/// budget was kept, and checked every event, has no error.
std::vector<CiResult> ci_results(const Report& report);
/// A stable identity of `result` that does not change when lines are
/// added above it: its rule, limit, file (as `root` shows it), function
/// and what was copied (its numbers left out), hashed.
std::string ci_fingerprint(const CiResult& result, const SourceRoot& root);
/// GitHub Actions' workflow commands for the errors of `report`
/// ("::error file=src/step.cpp,line=42,title=...::..."), at most
/// `annotations_per_step` of them, most serious first, then a "::notice"
/// saying how many more and that `full_report` has them.
std::string github_annotations(const Report& report,
                               const std::string& full_report);
inline constexpr std::size_t annotations_per_step = 10;
/// GitHub code scanning takes at most 25,000 results a run.
inline constexpr std::size_t sarif_results_limit = 25000;

/// The report of a JSON report's text (json_reader.cpp), as a job of the
/// ranks it holds (JobRanks::merged). Throws ReportError, one line saying
/// what is wrong (a member missing or of the wrong type: "'budget.ok' is
/// missing, expected true or false"), for text that is not a JSON report of
/// version 2 or 3.
Report read_json_report(std::string_view text);

/// assert_no_transfers' verdict over a counter's report: it passes when
/// the counter holds no host/device transfer (is_host_device_transfer) and
/// nothing may be missing or unchecked (report.cpp).
bool no_transfers(const Report& counter);
/// The message assert_no_transfers fails with, in C++, GoogleTest and
/// Python alike: "<function>: N host/device transfer(s) where none are
/// allowed (checked at <where>)", then the counter's text (text_report.cpp).
std::string format_no_transfers_failure(const Report& counter,
                                        std::string_view function,
                                        SourceLocation where);

// What more than one format writes (report.cpp).

/// `line` with each path of more than three components shown from its last
/// three, "…/tests/programs/advice_events.cpp:88": the file's name and
/// line stay whole however deep the checkout is (text_report.cpp).
std::string short_paths(const std::string& line);

/// Copies first, then by bytes, then by count; at most `limit`.
std::vector<profiling::SiteSummary>
top_sites(std::vector<profiling::SiteSummary> sites, std::size_t limit);
inline constexpr std::size_t top_sites_total = 10;
inline constexpr std::size_t top_sites_phase = 5;
inline constexpr std::size_t top_sites_region = 3;
/// Bytes per second of a kind's copies, 0 when not timed.
double bandwidth(const profiling::KindTotals& totals);
/// "device" or "host".
std::string side_text(bool device);
/// "on", "contents" or "off".
std::string recording_name(profiling::AdviceRecording recording);
/// The phases a rule names that were never entered.
std::vector<std::string> never_entered(const Report& report);

} // namespace cunumpy::Impl

#endif
