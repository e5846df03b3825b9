#ifndef CUNUMPY_TRANSFER_BUDGET_HPP
#define CUNUMPY_TRANSFER_BUDGET_HPP

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <cunumpy/event.hpp>
#include <cunumpy/transfer_counter.hpp>

namespace cunumpy {
namespace Impl {
struct BudgetState;
struct Report;
} // namespace Impl

namespace profiling {

/// Limits on the events of one kind in a phase. Unset limits do not apply.
///
///     Limits().max_nbytes(8).blocking(false)   // non-blocking scalar reads
class Limits {
public:
  /// No single event may move more than `bytes`.
  Limits& max_nbytes(std::uint64_t bytes) & {
    max_nbytes_ = bytes;
    return *this;
  }
  /// At most `count` events in the phase, over all its calls.
  Limits& max_count(std::uint64_t count) & {
    max_count_ = count;
    return *this;
  }
  /// At most `bytes` in all events of the phase together.
  Limits& max_total_bytes(std::uint64_t bytes) & {
    max_total_bytes_ = bytes;
    return *this;
  }
  /// Every event must have this `blocking` value (false: the host did not
  /// wait for the copy).
  Limits& blocking(bool value) & {
    blocking_ = value;
    return *this;
  }
  /// Every event must have this `implicit` value (false rejects waits the
  /// program did not ask for, such as scalar reads).
  Limits& implicit(bool value) & {
    implicit_ = value;
    return *this;
  }
  // Rvalue overloads, so `Limits().max_nbytes(8).blocking(false)` is a
  // Limits and not a reference to a temporary.
  Limits&& max_nbytes(std::uint64_t bytes) && {
    return std::move(max_nbytes(bytes));
  }
  Limits&& max_count(std::uint64_t count) && {
    return std::move(max_count(count));
  }
  Limits&& max_total_bytes(std::uint64_t bytes) && {
    return std::move(max_total_bytes(bytes));
  }
  Limits&& blocking(bool value) && { return std::move(blocking(value)); }
  Limits&& implicit(bool value) && { return std::move(implicit(value)); }

  std::optional<std::uint64_t> max_nbytes() const { return max_nbytes_; }
  std::optional<std::uint64_t> max_count() const { return max_count_; }
  std::optional<std::uint64_t> max_total_bytes() const {
    return max_total_bytes_;
  }
  std::optional<bool> blocking() const { return blocking_; }
  std::optional<bool> implicit() const { return implicit_; }

  /// "max_nbytes=8, blocking=false", or "no limits".
  std::string str() const;

private:
  std::optional<std::uint64_t> max_nbytes_;
  std::optional<std::uint64_t> max_count_;
  std::optional<std::uint64_t> max_total_bytes_;
  std::optional<bool> blocking_;
  std::optional<bool> implicit_;
};

/// The rule of a phase: the listed kinds are allowed within their limits;
/// every other kind is forbidden, except the ignored kinds (by default
/// device_copy and sync). `calls` is the number of calls the phase must have
/// had. A phase that never ran breaks its rule (a misspelt name would
/// otherwise pass whatever the real phase copies) unless the rule is
/// `optional`. A default Rule forbids every host/device copy and marker.
class Rule {
public:
  Rule& allow(EventKind kind, Limits limits = {}) & {
    allowed_[kind] = std::move(limits);
    return *this;
  }
  /// Replaces the ignored kinds (default: device_copy and sync).
  Rule& ignore(std::initializer_list<EventKind> kinds) & {
    ignored_ = std::set<EventKind>(kinds);
    return *this;
  }
  Rule& ignore(std::set<EventKind> kinds) & {
    ignored_ = std::move(kinds);
    return *this;
  }
  Rule& calls(std::uint64_t count) & {
    calls_ = count;
    return *this;
  }
  /// The phase may never run (a phase of some configurations only).
  Rule& optional(bool value = true) & {
    optional_ = value;
    return *this;
  }
  Rule&& allow(EventKind kind, Limits limits = {}) && {
    return std::move(allow(kind, std::move(limits)));
  }
  Rule&& ignore(std::initializer_list<EventKind> kinds) && {
    return std::move(ignore(kinds));
  }
  Rule&& ignore(std::set<EventKind> kinds) && {
    return std::move(ignore(std::move(kinds)));
  }
  Rule&& calls(std::uint64_t count) && { return std::move(calls(count)); }
  Rule&& optional(bool value = true) && { return std::move(optional(value)); }

  const std::map<EventKind, Limits>& allowed() const { return allowed_; }
  const std::set<EventKind>& ignored() const { return ignored_; }
  std::optional<std::uint64_t> calls() const { return calls_; }
  bool is_optional() const { return optional_; }

  /// "allow to_host (max_nbytes=8); ignore device_copy, sync; calls=100".
  std::string str() const;

private:
  std::map<EventKind, Limits> allowed_;
  std::set<EventKind> ignored_{EventKind::device_copy, EventKind::sync};
  std::optional<std::uint64_t> calls_;
  bool optional_ = false;
};

/// What a broken rule broke.
enum class Limit : std::uint8_t {
  forbidden,       ///< a kind the rule does not allow happened
  max_nbytes,      ///< an event moved more bytes than allowed
  max_count,       ///< more events of a kind than allowed
  max_total_bytes, ///< more bytes of a kind than allowed
  blocking,        ///< an event had the wrong `blocking` value
  implicit,        ///< an event had the wrong `implicit` value
  calls,           ///< the phase ran another number of times
  never_entered,   ///< the phase never ran (and the rule is not optional)
  events_lost,     ///< events may be missing: the budget cannot be checked
  /// The program has no device memory space: no copy could be a transfer,
  /// so the rules checked nothing (unless CUNUMPY_ALLOW_NO_DEVICE=1).
  no_device,
  /// The program allocated managed memory and CUDA gives no unified-memory
  /// counters here: no migration could be seen, so a rule on migrations
  /// checked nothing.
  migrations_unseen,
};

/// What a budget's violations say, most serious first: a rule broken,
/// the budget not checkable (events may be missing), nothing to check (no
/// device memory space), or kept.
enum class Verdict : std::uint8_t { broken, incomplete, unchecked, ok };
/// The verdict of `violations`.
Verdict verdict(const std::vector<struct Violation>& violations) noexcept;
/// The formats of TransferBudget::report(format) and CUNUMPY_REPORT_FORMAT:
/// "text", "summary", "json", "hatchet", "sarif", "junit".
std::vector<std::string> report_formats();

/// "ok", "broken", "incomplete", "unchecked": as reports and the JSON spell
/// it.
std::string_view to_string(Verdict verdict) noexcept;

/// The name of a limit as rule files, reports and the JSON spell it:
/// "max_nbytes", "never_entered", ...
std::string_view to_string(Limit limit) noexcept;
/// The limit named `name`, or nothing.
std::optional<Limit> parse_limit(std::string_view name) noexcept;

/// One broken rule: its phase, the limit that was exceeded and the events
/// that did it, with the file and line where they happened.
struct Violation {
  /// The phase; empty for events_lost, which concerns every phase.
  std::string phase;
  /// The kind the limit is about; empty for calls, never_entered and
  /// events_lost.
  std::optional<EventKind> kind;
  Limit limit = Limit::forbidden;
  /// The limit's value and what happened: "8" and "800000".
  std::string allowed;
  std::string actual;
  /// The offending events, aggregated by call site.
  std::vector<SiteSummary> events;
  /// More of what happened: the phases that ran (never_entered), why
  /// events may be missing (events_lost).
  std::vector<std::string> details;

  /// A readable paragraph: the rule, then one line per offending site.
  std::string str() const;
};

class TransferBudget;
struct BudgetSnapshot;

/// Scope of a phase: events recorded while it is the innermost open phase
/// count in it. Returned by TransferBudget::phase.
class PhaseScope {
public:
  PhaseScope(PhaseScope&& other) noexcept;
  PhaseScope& operator=(PhaseScope&&) = delete;
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;
  ~PhaseScope();

  /// The phase's counter (all its calls so far).
  TransferCounter& counter();
  /// Closes the phase before the scope ends.
  void close() noexcept;

private:
  friend class TransferBudget;
  PhaseScope(std::shared_ptr<Impl::BudgetState> state, std::string name);

  std::shared_ptr<Impl::BudgetState> state_;
  std::string name_;
  std::uint64_t token_ = 0;
};

/// How a TransferBudget counts.
struct BudgetOptions {
  /// With `started == false` phases run uncounted until start().
  bool started = true;
  /// Raw events each phase's counter keeps (TransferCounter::events); 0
  /// keeps none, as the plugin, which reports aggregates only.
  std::size_t events_kept = TransferCounter::default_max_events;
  /// What is recorded for advice() (see TransferCounter): nothing by
  /// default.
  AdviceRecording advice = AdviceRecording::off;
};

/// Counts transfers per named phase and checks a rule for each, so that a
/// test or a CI job fails when a copy sneaks into a phase that must not
/// copy. A phase is a name the user made one: a rule names it (require,
/// require_file), or it was opened explicitly (phase(), count()). A Kokkos
/// profiling region (pushRegion/popRegion, ScopedRegion) of a phase's name
/// is that phase; every other region (Tpetra's, Belos', Kokkos Kernels')
/// is transparent: its events count in the innermost enclosing phase.
/// Phases nest: an event counts in the innermost phase only. Since rules
/// may be set after the run, the budget records the tree of region paths
/// and decides which phase an event belongs to when it is read. The open
/// phases and regions are shared by all host threads (as Kokkos regions
/// are).
///
///     TransferBudget budget(false);
///     auto integrate = budget.count("integrate", [&](double dt) { ... });
///     budget.start();
///     for (int step = 0; step < n; ++step) integrate(dt);
///     budget.require("integrate", Rule().calls(n));   // no transfers
///     budget.check();                                 // throws TransferError
class TransferBudget {
public:
  /// With `started == false` phases run uncounted until start().
  explicit TransferBudget(bool started = true);
  explicit TransferBudget(BudgetOptions options);
  ~TransferBudget();
  TransferBudget(TransferBudget&&) noexcept;
  TransferBudget& operator=(TransferBudget&&) noexcept;
  TransferBudget(const TransferBudget&) = delete;
  TransferBudget& operator=(const TransferBudget&) = delete;

  /// A budget with the rules of the TOML file at `path` (see require_file).
  static TransferBudget from_file(const std::string& path, bool started = true);
  /// Adds the rules of a TOML rule file:
  ///
  ///     [phases.integrate]
  ///     calls = 100
  ///     allow.to_host = { max_nbytes = 8, blocking = false }
  ///     ignore = ["device_copy", "sync"]
  ///
  /// Throws std::invalid_argument naming the file, the line and the key for
  /// syntax errors, unknown keys and kinds, and bad limits; and, before
  /// reading or parsing, for a path that is not a regular file (a
  /// directory, a FIFO, a device), a file over 32 MiB, text that is not
  /// UTF-8 or not ASCII outside comments, and nesting over 32 levels
  /// (docs/budgets.md).
  TransferBudget& require_file(const std::string& path);
  /// The same from TOML text (the same checks of the text); `source` names
  /// it in errors.
  TransferBudget& require_toml(std::string_view toml,
                               const std::string& source = "<string>");

  /// Counting starts (again); phases entered before are not counted.
  void start();
  /// Counting stops; phases keep what they counted.
  void stop();
  bool started() const;

  /// Opens phase `name` until the returned scope ends. A phase entered inside
  /// an open region or phase of the same name (an explicit phase and a
  /// region of its name, a recursive region) is the same call, not a new
  /// one.
  [[nodiscard]] PhaseScope phase(std::string name);

  /// Wraps `f`: the returned callable forwards its arguments to `f` inside
  /// phase `name` and returns what `f` returns (a decorator, in Python). It
  /// shares the budget's state, so it stays valid if the budget is moved.
  template <class F> auto count(std::string name, F f) {
    return [state = state_, name = std::move(name),
            f = std::move(f)](auto&&... args) mutable -> decltype(auto) {
      PhaseScope scope(state, name);
      return std::invoke(f, std::forward<decltype(args)>(args)...);
    };
  }

  /// The counter of phase `name`: the events that count in it. For a name
  /// that is not a phase (a library's region), what would count in it if it
  /// were one. The counter follows the budget: read it any time.
  TransferCounter& operator[](const std::string& name);
  /// How many times phase `name` was entered while counting (for any name,
  /// as for operator[]).
  std::uint64_t calls(const std::string& name) const;
  /// The phases that ran, in first-seen order, then those only a rule
  /// names.
  std::vector<std::string> phases() const;

  /// Sets the rule of phase `name` (replacing an earlier one). Throws
  /// std::invalid_argument when a kind is both allowed and ignored.
  TransferBudget& require(const std::string& name, Rule rule);
  /// The rule of phase `name`, if any.
  std::optional<Rule> rule(const std::string& name) const;

  /// Every broken rule, with the offending events and their call sites;
  /// an events_lost violation when events may be missing.
  std::vector<Violation> violations() const;
  /// Throws cunumpy::TransferError whose message is report() when a rule is
  /// broken or events may be missing.
  void check() const;
  /// The report of the run in `format`, as the plugin writes it: "text"
  /// (the default; everything, for people: the verdict, the totals, the
  /// regions, every phase's events and rule, the broken rules, advice),
  /// "summary" (a few lines), "json" (every
  /// number; cunumpy-report merges these across MPI ranks), "hatchet" (the
  /// region tree in Hatchet's literal format), "sarif" (SARIF 2.1.0, for
  /// code scanning), "junit" (JUnit XML test results); see report_formats. A
  /// budget without rules has the verdict "none". Throws
  /// std::invalid_argument for another format, naming the formats.
  std::string report(std::string_view format = "text") const;
  /// The job's report in `format` (as report(format)), under MPI: every
  /// rank's report merged over MPI_COMM_WORLD, as the plugin merges them
  /// (docs/plugin.md#mpi). Collective: every rank calls it (each rank's
  /// job_report and job_check calls in the same order). Returns the job's
  /// report on rank 0 and "" on the other ranks. A rank whose report does
  /// not reach rank 0 within CUNUMPY_MPI_DEADLINE seconds is named missing
  /// in the job's report, whose verdict then fails; it never waits longer.
  /// Outside MPI (no MPI initialized in the process), report(format).
  /// Throws std::invalid_argument for another format, and
  /// std::runtime_error, saying why, when MPI is initialized but the
  /// reports cannot be merged (an MPI cunumpy's MPI part was not built
  /// for, MPI finalized, CUNUMPY_MPI_DEADLINE=0).
  std::string job_report(std::string_view format = "text") const;
  /// check() of the job, on every rank: throws cunumpy::TransferError on
  /// every rank when the job's verdict fails (a rule broken on any rank,
  /// a rank missing, events that may be missing), or when this rank did
  /// not hear the verdict in time, or check() fails here. The message is
  /// the job's text report on rank 0, one line and this rank's report()
  /// elsewhere. Collective, like job_report; outside MPI, check().
  void job_check() const;
  /// Everything the budget knows, as plain data: the tree of region paths,
  /// the phases, the violations (see BudgetSnapshot).
  BudgetSnapshot snapshot() const;

  /// What the events counted say is worth changing (see
  /// TransferCounter::advice), each finding with the phase its region
  /// counts in. Never changes the verdict of a rule. Throws
  /// std::logic_error for a budget made with AdviceRecording::off.
  std::vector<Finding> advice(const AdviceOptions& options = {}) const;

  /// Every event counted while counting, whatever its phase.
  TransferCounter& total();

private:
  /// The report model of the run and the budget.
  Impl::Report describe() const;

  std::shared_ptr<Impl::BudgetState> state_;
};

} // namespace profiling
} // namespace cunumpy

#endif
