#include <stdexcept>

#include <cunumpy/budget_snapshot.hpp>
#include <cunumpy/impl/api_scope.hpp>
#include <cunumpy/transfer_budget.hpp>
#include <cunumpy/transfer_error.hpp>

#include "consumers/advice.hpp"
#include "consumers/budget_state.hpp"
#include "consumers/rule_file_input.hpp"
#include "recorder/record_events.hpp"
#include "recorder/recorder.hpp"
#include "report/report.hpp"
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
  const RecorderLock lock = lock_recorder(*state_->recorder);
  if (!state_->violations(lock).empty())
    throw TransferError(state_->report(lock));
}

std::string TransferBudget::report() const {
  const RecorderLock lock = lock_recorder(*state_->recorder);
  return state_->report(lock);
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

std::string TransferBudget::report(std::string_view format) const {
  const Impl::ReportFormat* chosen = Impl::find_report_format(format);
  if (chosen == nullptr)
    throw std::invalid_argument("TransferBudget::report: no report format '" +
                                Impl::printable(std::string(format)) +
                                "'; the formats are " +
                                Impl::report_format_names());
  Impl::Report report;
  report.from_plugin = false;
  const Impl::RunIdentity& run = Impl::run_identity();
  report.rank = run.rank;
  report.rank_known = run.rank_known;
  report.size = run.size;
  report.run_id = run.id;
  report.run_id_unique = run.id_unique;
  report.label = run.label;
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
  return chosen->write(report);
}

} // namespace cunumpy::profiling
