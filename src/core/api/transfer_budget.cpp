#include <stdexcept>

#include <cunumpy/budget_snapshot.hpp>
#include <cunumpy/impl/api_scope.hpp>
#include <cunumpy/transfer_budget.hpp>
#include <cunumpy/transfer_error.hpp>

#include "consumers/advice.hpp"
#include "consumers/budget_state.hpp"
#include "consumers/rule_file_input.hpp"
#include "mpi/mpi_merge.hpp"
#include "recorder/record_events.hpp"
#include "recorder/recorder.hpp"
#include "report/report.hpp"
#include "support/environment.hpp"
#include "support/excerpt.hpp"
#include "support/variables.hpp"

namespace cunumpy::profiling {

using Impl::lock_recorder;
using Impl::RecorderLock;

PhaseScope::PhaseScope(std::shared_ptr<Impl::BudgetState> state,
                       std::string name)
    : state_(std::move(state)), name_(std::move(name)) {
  {
    const RecorderLock lock = lock_recorder(*state_->recorder);
    state_->add_explicit_phase(name_, lock);
  }
  token_ = Impl::record::open_phase(*state_->recorder, name_);
}

PhaseScope::PhaseScope(PhaseScope&& other) noexcept
    : state_(std::move(other.state_)), name_(std::move(other.name_)),
      token_(other.token_) {}

PhaseScope::~PhaseScope() {
  close();
}

void PhaseScope::close() noexcept {
  if (!state_)
    return;
  Impl::record::close_phase(*state_->recorder, token_);
  state_.reset();
}

TransferCounter& PhaseScope::counter() {
  if (!state_)
    throw std::logic_error("cunumpy::PhaseScope::counter: phase '" + name_ +
                           "' was closed");
  const RecorderLock lock = lock_recorder(*state_->recorder);
  return state_->view(name_, lock);
}

TransferBudget::TransferBudget(bool started)
    : TransferBudget(BudgetOptions{started}) {}

TransferBudget::TransferBudget(BudgetOptions options)
    : state_(std::make_shared<Impl::BudgetState>(options)) {
  Impl::Recorder& recorder = Impl::ensure_hooks();
  state_->recorder = &recorder;
  recorder.attach(state_.get());
}

TransferBudget::~TransferBudget() {
  if (state_)
    state_->recorder->detach(state_.get());
}

TransferBudget::TransferBudget(TransferBudget&& other) noexcept = default;

TransferBudget& TransferBudget::operator=(TransferBudget&& other) noexcept {
  if (this != &other) {
    if (state_)
      state_->recorder->detach(state_.get());
    state_ = std::move(other.state_);
  }
  return *this;
}

TransferBudget TransferBudget::from_file(const std::string& path,
                                         bool started) {
  TransferBudget budget(started);
  budget.require_file(path);
  return budget;
}

namespace {
void set_rules(Impl::BudgetState& state,
               std::vector<std::pair<std::string, Rule>> rules) {
  const RecorderLock lock = lock_recorder(*state.recorder);
  for (auto& [name, rule] : rules)
    state.set_rule(name, std::move(rule), lock);
}
} // namespace

TransferBudget& TransferBudget::require_file(const std::string& path) {
  auto rules = Impl::parse_rules(Impl::read_rule_file(path), path);
  // An empty file (or one of comments) is a file that is not the budget:
  // checked, it would pass whatever the program copies.
  if (rules.empty())
    throw std::invalid_argument(
        "cunumpy::TransferBudget: rule file '" + path +
        "' defines no phases; a rule file holds [phases.<name>] tables, e.g. "
        "[phases.integrate] with calls = 1");
  set_rules(*state_, std::move(rules));
  return *this;
}

TransferBudget& TransferBudget::require_toml(std::string_view toml,
                                             const std::string& source) {
  set_rules(*state_, Impl::parse_rules(toml, source));
  return *this;
}

void TransferBudget::start() {
  const RecorderLock lock = lock_recorder(*state_->recorder);
  state_->set_started(true);
}

void TransferBudget::stop() {
  const RecorderLock lock = lock_recorder(*state_->recorder);
  state_->set_started(false);
}

bool TransferBudget::started() const {
  const RecorderLock lock = lock_recorder(*state_->recorder);
  return state_->started;
}

PhaseScope TransferBudget::phase(std::string name) {
  return PhaseScope(state_, std::move(name));
}

TransferCounter& TransferBudget::operator[](const std::string& name) {
  const RecorderLock lock = lock_recorder(*state_->recorder);
  return state_->view(name, lock);
}

std::uint64_t TransferBudget::calls(const std::string& name) const {
  const RecorderLock lock = lock_recorder(*state_->recorder);
  return state_->calls(name, lock);
}

std::vector<std::string> TransferBudget::phases() const {
  const RecorderLock lock = lock_recorder(*state_->recorder);
  return state_->phase_names(lock);
}

TransferBudget& TransferBudget::require(const std::string& name, Rule rule) {
  Impl::validate_rule(name, rule, "cunumpy::TransferBudget::require: ");
  const RecorderLock lock = lock_recorder(*state_->recorder);
  state_->set_rule(name, std::move(rule), lock);
  return *this;
}

std::optional<Rule> TransferBudget::rule(const std::string& name) const {
  const RecorderLock lock = lock_recorder(*state_->recorder);
  if (const Rule* found = state_->rule(name, lock))
    return *found;
  return std::nullopt;
}

std::vector<Violation> TransferBudget::violations() const {
  const RecorderLock lock = lock_recorder(*state_->recorder);
  return state_->violations(lock);
}

void TransferBudget::check() const {
  bool broken = false;
  {
    const RecorderLock lock = lock_recorder(*state_->recorder);
    broken = !state_->violations(lock).empty();
  }
  // The report only of a failure: it costs the whole report model.
  if (broken)
    throw TransferError(report());
}

BudgetSnapshot TransferBudget::snapshot() const {
  const RecorderLock lock = lock_recorder(*state_->recorder);
  return state_->snapshot(lock);
}

std::vector<Finding>
TransferBudget::advice(const AdviceOptions& options) const {
  const RecorderLock lock = lock_recorder(*state_->recorder);
  return state_->findings(options, lock);
}

TransferCounter& TransferBudget::total() {
  const RecorderLock lock = lock_recorder(*state_->recorder);
  return state_->total_view(lock);
}

namespace {

/// The format `name`, or std::invalid_argument from `function`.
const Impl::ReportFormat& report_format(const char* function,
                                        std::string_view name) {
  const Impl::ReportFormat* chosen = Impl::find_report_format(name);
  if (chosen == nullptr)
    throw std::invalid_argument(std::string(function) + ": no report format '" +
                                Impl::printable(std::string(name)) +
                                "'; the formats are " +
                                Impl::report_format_names());
  return *chosen;
}

/// The ranks' reports merged over MPI (mpi/mpi_merge.hpp). Outside MPI
/// (`mpi` false), nothing merged; in MPI, an error from `function` when the
/// reports cannot be merged, which would make a rank's report pass for the
/// job's.
Impl::JobMerge merge_job(const Impl::Report& report, const char* function) {
  Impl::JobMerge merge =
      Impl::merge_over_mpi(report, Impl::read_integer("CUNUMPY_MPI_DEADLINE"));
  if (merge.mpi && !merge.ran)
    throw std::runtime_error(std::string(function) + ": " + merge.message +
                             "; each rank's report(\"json\") can be merged "
                             "with cunumpy-report");
  if (!merge.message.empty())
    Impl::warn("rank " + std::to_string(merge.rank) + ": " + merge.message);
  if (merge.ran && !merge.job && !merge.included)
    Impl::warn("rank " + std::to_string(merge.rank) +
               ": this rank's report is not in the job's report");
  return merge;
}

} // namespace

Impl::Report TransferBudget::describe() const {
  Impl::Report report;
  report.from_plugin = false;
  Impl::Recorder& recorder = *state_->recorder;
  {
    const Impl::RecorderLock lock = Impl::lock_recorder(recorder);
    Impl::describe_run(report, 0.0, lock);
    report.advice_recording = !state_->advice ? AdviceRecording::off
                              : state_->advice->contents()
                                  ? AdviceRecording::contents
                                  : AdviceRecording::on;
  }
  Impl::describe_budget(report, *this, recorder);
  report.has_budget = report.budget.rule_count > 0;
  return report;
}

std::string TransferBudget::report(std::string_view format) const {
  return report_format("TransferBudget::report", format).write(describe());
}

std::string TransferBudget::job_report(std::string_view format) const {
  const char* function = "cunumpy::TransferBudget::job_report";
  const Impl::ReportFormat& chosen = report_format(function, format);
  const Impl::Report report = describe();
  const Impl::JobMerge merge = merge_job(report, function);
  if (!merge.mpi)
    return chosen.write(report);
  return merge.job ? chosen.write(*merge.job) : std::string();
}

void TransferBudget::job_check() const {
  const char* function = "cunumpy::TransferBudget::job_check";
  const Impl::Report report = describe();
  const Impl::JobMerge merge = merge_job(report, function);
  if (!merge.mpi)
    return check();
  const std::string own = report.budget.violations.empty()
                              ? std::string()
                              : Impl::format_text(report);
  // A verdict not heard in time may have been a failure.
  if (!merge.failed.value_or(true) && own.empty())
    return;
  if (merge.job && merge.failed.value_or(true))
    throw TransferError(Impl::format_text(*merge.job));
  std::string message = std::string(function) + ": ";
  if (!merge.failed)
    message += "rank " + std::to_string(merge.rank) +
               " did not hear the job's verdict in time (" + merge.message +
               ")";
  else if (*merge.failed)
    message += "the job's budget failed (rank 0's job_report names the ranks)";
  else
    message += "the job's budget passed, this rank's check() did not";
  if (!own.empty())
    message += "; this rank's budget:\n" + own;
  throw TransferError(message);
}

} // namespace cunumpy::profiling
