#include <algorithm>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include <cunumpy/impl/recorder.hpp>
#include <cunumpy/transfer_budget.hpp>
#include <cunumpy/transfer_error.hpp>

#include "budget_state.hpp"
#include "rule_file_input.hpp"

namespace cunumpy {
namespace Impl {
namespace {

std::size_t index_of(EventKind kind) {
  return static_cast<std::size_t>(kind);
}

std::string join_kinds(const std::set<EventKind>& kinds) {
  std::string text;
  for (EventKind kind : all_event_kinds) {
    if (kinds.count(kind) == 0)
      continue;
    if (!text.empty())
      text += ", ";
    text += to_string(kind);
  }
  return text.empty() ? "nothing" : text;
}

std::string bool_text(bool value) {
  return value ? "true" : "false";
}

} // namespace

void BudgetState::on_event(const RawEvent& event) {
  if (!started)
    return;
  if (counting_total)
    total.state()->add(event);
  if (const OpenPhase* open = innermost())
    open->phase->counter->state()->add(event);
  else
    outside.state()->add(event);
}

CounterState BudgetState::total_counter() const {
  if (counting_total)
    return *total.state();
  // Each event is in one phase, its innermost, or outside them all.
  CounterState sum(0);
  sum.merge(*outside.state());
  for (const std::string& name : order)
    sum.merge(*phases.at(name).counter->state());
  return sum;
}

const BudgetState::OpenPhase* BudgetState::innermost() const {
  for (auto it = open_phases.rbegin(); it != open_phases.rend(); ++it)
    if (!it->transparent)
      return &*it;
  return nullptr;
}

namespace {
/// Regions Kokkos and Kokkos Kernels push inside their own functions
/// ("KokkosBlas::dot[ETI]"): were they phases, the copies a solver makes
/// through them would escape the rule of the caller's phase.
bool is_library_region(std::string_view name) {
  return name.substr(0, 6) == "Kokkos";
}
} // namespace

void BudgetState::on_region_push(std::uint32_t name, double) {
  auto [known, inserted] = region_phases.try_emplace(name, nullptr);
  if (inserted) {
    const std::string_view region = Recorder::instance().strings().view(name);
    if (!is_library_region(region))
      known->second = &phase(std::string(region));
  }
  if (known->second == nullptr)
    open_phases.push_back({0, true, nullptr});
  else
    open(*known->second, true);
}

void BudgetState::on_region_pop(double) {
  // Kokkos regions nest among themselves; explicit phases opened inside a
  // region and still open stay open.
  for (auto it = open_phases.rbegin(); it != open_phases.rend(); ++it) {
    if (it->token == 0) {
      open_phases.erase(std::next(it).base());
      return;
    }
  }
}

BudgetState::Phase& BudgetState::phase(const std::string& name) {
  auto found = phases.find(name);
  if (found != phases.end())
    return found->second;
  order.push_back(name);
  Phase& entered = phases[name];
  entered.counter->state()->max_events = events_kept;
  return entered;
}

void BudgetState::keep_events(std::size_t max_events) {
  events_kept = max_events;
  for (profiling::TransferCounter* counter : {&total, &outside})
    counter->state()->max_events = max_events;
  for (auto& [name, phase] : phases)
    phase.counter->state()->max_events = max_events;
}

const BudgetState::Phase* BudgetState::find(const std::string& name) const {
  auto found = phases.find(name);
  return found == phases.end() ? nullptr : &found->second;
}

std::uint64_t BudgetState::open(Phase& entered, bool region) {
  // A region inside an explicit phase of the same name (or the reverse) is
  // the same call of the same phase.
  const OpenPhase* current = innermost();
  const bool same_call = current != nullptr && current->phase == &entered;
  if (started && !same_call)
    ++entered.calls;
  const std::uint64_t token = region ? 0 : next_token++;
  open_phases.push_back({token, false, &entered});
  return token;
}

void BudgetState::set_rule(const std::string& name, profiling::Rule rule) {
  auto existing =
      std::find_if(rules.begin(), rules.end(),
                   [&](const auto& entry) { return entry.first == name; });
  if (existing != rules.end())
    existing->second = std::move(rule);
  else
    rules.emplace_back(name, std::move(rule));
}

void BudgetState::close(std::uint64_t token) {
  for (auto it = open_phases.rbegin(); it != open_phases.rend(); ++it) {
    if (it->token == token) {
      open_phases.erase(std::next(it).base());
      return;
    }
  }
}

std::vector<profiling::Violation> BudgetState::violations() const {
  std::vector<profiling::Violation> result;
  for (const auto& [name, rule] : rules) {
    const Phase* entered = find(name);
    const std::uint64_t calls = entered != nullptr ? entered->calls : 0;
    if (rule.calls() && *rule.calls() != calls)
      result.push_back({name,
                        std::nullopt,
                        "calls",
                        std::to_string(*rule.calls()),
                        std::to_string(calls),
                        {}});
    if (entered == nullptr)
      continue;
    const CounterState& counter = *entered->counter->state();
    const auto summaries = counter.summaries();
    for (EventKind kind : all_event_kinds) {
      const KindTotals& totals = counter.totals[index_of(kind)];
      if (totals.count == 0 || rule.ignored().count(kind) != 0)
        continue;
      std::vector<profiling::SiteSummary> of_kind;
      for (const auto& summary : summaries)
        if (summary.kind == kind)
          of_kind.push_back(summary);
      const auto allowed = rule.allowed().find(kind);
      if (allowed == rule.allowed().end()) {
        result.push_back({name, kind, "forbidden", "0",
                          std::to_string(totals.count), of_kind});
        continue;
      }
      const profiling::Limits& limits = allowed->second;
      if (limits.max_count() && totals.count > *limits.max_count())
        result.push_back({name, kind, "max_count",
                          std::to_string(*limits.max_count()),
                          std::to_string(totals.count), of_kind});
      if (limits.max_total_bytes() && totals.nbytes > *limits.max_total_bytes())
        result.push_back({name, kind, "max_total_bytes",
                          std::to_string(*limits.max_total_bytes()),
                          std::to_string(totals.nbytes), of_kind});
      const auto offending = [&](auto breaks) {
        std::vector<profiling::SiteSummary> selected;
        for (const auto& summary : of_kind)
          if (breaks(summary))
            selected.push_back(summary);
        return selected;
      };
      if (const auto limit = limits.max_nbytes()) {
        auto events = offending([&](const profiling::SiteSummary& summary) {
          return summary.max_nbytes > *limit;
        });
        if (!events.empty()) {
          std::uint64_t largest = 0;
          for (const auto& summary : events)
            largest = std::max(largest, summary.max_nbytes);
          result.push_back({name, kind, "max_nbytes", std::to_string(*limit),
                            std::to_string(largest), std::move(events)});
        }
      }
      if (const auto value = limits.blocking()) {
        auto events = offending([&](const profiling::SiteSummary& summary) {
          return summary.blocking != *value;
        });
        if (!events.empty())
          result.push_back({name, kind, "blocking", bool_text(*value),
                            bool_text(!*value), std::move(events)});
      }
      if (const auto value = limits.implicit()) {
        auto events = offending([&](const profiling::SiteSummary& summary) {
          return summary.implicit != *value;
        });
        if (!events.empty())
          result.push_back({name, kind, "implicit", bool_text(*value),
                            bool_text(!*value), std::move(events)});
      }
    }
  }
  return result;
}

std::string BudgetState::report() const {
  const auto broken = violations();
  std::vector<std::string> names = order;
  for (const auto& entry : rules)
    if (std::find(names.begin(), names.end(), entry.first) == names.end())
      names.push_back(entry.first);
  std::string text = "TransferBudget: " + std::to_string(names.size()) +
                     " phase(s), " + std::to_string(broken.size()) +
                     " broken rule(s)\n";
  for (const auto& name : names) {
    const Phase* entered = find(name);
    const std::uint64_t calls = entered != nullptr ? entered->calls : 0;
    auto rule =
        std::find_if(rules.begin(), rules.end(),
                     [&](const auto& entry) { return entry.first == name; });
    text += "phase '" + name + "' (" + std::to_string(calls) + " call(s)); " +
            (rule != rules.end() ? "rule: " + rule->second.str() : "no rule") +
            "\n";
    if (entered != nullptr) {
      const CounterState& counter = *entered->counter->state();
      text += format_report(counter.totals, counter.summaries(), "  ");
    } else {
      text += "  never entered\n";
    }
  }
  const CounterState& outside_state = *outside.state();
  if (outside_state.total() +
          outside_state.totals[index_of(EventKind::sync)].count >
      0) {
    text += "outside any phase:\n";
    text +=
        format_report(outside_state.totals, outside_state.summaries(), "  ");
  }
  if (!broken.empty()) {
    text += "broken rules (" + std::to_string(broken.size()) + "):\n";
    for (const auto& violation : broken) {
      std::istringstream lines(violation.str());
      for (std::string line; std::getline(lines, line);)
        text += "  " + line + "\n";
    }
  }
  return text;
}

void validate_rule(const std::string& phase, const profiling::Rule& rule,
                   const std::string& where) {
  for (const auto& [kind, limits] : rule.allowed()) {
    if (rule.ignored().count(kind) != 0)
      throw std::invalid_argument(
          where + "phase '" + phase + "': '" + std::string(to_string(kind)) +
          "' is both allowed and ignored, so its limits would not be "
          "checked; remove it from ignore (the default ignores device_copy "
          "and sync)");
  }
}

} // namespace Impl

namespace profiling {

std::string Limits::str() const {
  std::string text;
  const auto add = [&](const char* name, const std::string& value) {
    if (!text.empty())
      text += ", ";
    text += std::string(name) + "=" + value;
  };
  if (max_nbytes_)
    add("max_nbytes", std::to_string(*max_nbytes_));
  if (max_count_)
    add("max_count", std::to_string(*max_count_));
  if (max_total_bytes_)
    add("max_total_bytes", std::to_string(*max_total_bytes_));
  if (blocking_)
    add("blocking", Impl::bool_text(*blocking_));
  if (implicit_)
    add("implicit", Impl::bool_text(*implicit_));
  return text.empty() ? "no limits" : text;
}

std::string Rule::str() const {
  std::string text = "allow ";
  if (allowed_.empty()) {
    text += "nothing";
  } else {
    bool first = true;
    for (const auto& [kind, limits] : allowed_) {
      text += (first ? "" : ", ") + std::string(to_string(kind)) + " (" +
              limits.str() + ")";
      first = false;
    }
  }
  text += "; ignore " + Impl::join_kinds(ignored_);
  if (calls_)
    text += "; calls=" + std::to_string(*calls_);
  return text;
}

std::string Violation::str() const {
  const std::string what = kind ? std::string(to_string(*kind)) : "";
  std::string text = "phase '" + phase + "': ";
  if (limit == "calls") {
    text += "calls=" + allowed + " required, got " + actual;
  } else if (limit == "forbidden") {
    text += what + " is not allowed, got " + actual + " event(s)";
  } else if (limit == "max_count") {
    text +=
        what + " max_count=" + allowed + " exceeded: " + actual + " event(s)";
  } else if (limit == "max_total_bytes") {
    text += what + " max_total_bytes=" + allowed + " exceeded: " + actual +
            " bytes";
  } else if (limit == "max_nbytes") {
    text += what + " max_nbytes=" + allowed + " exceeded: an event of " +
            actual + " bytes";
  } else {
    text += what + " must have " + limit + "=" + allowed;
  }
  text += "\n";
  for (const auto& summary : events)
    text += "  " + Impl::format_site_line(summary) + "\n";
  return text;
}

PhaseScope::PhaseScope(std::shared_ptr<Impl::BudgetState> state,
                       std::string name)
    : state_(std::move(state)), name_(std::move(name)) {
  auto lock = Impl::lock_recorder();
  token_ = state_->open(state_->phase(name_), false);
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
  auto lock = Impl::lock_recorder();
  state_->close(token_);
  state_.reset();
}

TransferCounter& PhaseScope::counter() {
  if (!state_)
    throw std::logic_error("cunumpy::PhaseScope::counter: phase '" + name_ +
                           "' was closed");
  auto lock = Impl::lock_recorder();
  return *state_->phase(name_).counter;
}

TransferBudget::TransferBudget(bool started)
    : state_(std::make_shared<Impl::BudgetState>(started)) {
  Impl::ensure_hooks();
  Impl::Recorder::instance().attach(state_.get());
}

TransferBudget::~TransferBudget() {
  if (state_)
    Impl::Recorder::instance().detach(state_.get());
}

TransferBudget::TransferBudget(TransferBudget&& other) noexcept = default;

TransferBudget& TransferBudget::operator=(TransferBudget&& other) noexcept {
  if (this != &other) {
    if (state_)
      Impl::Recorder::instance().detach(state_.get());
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
  auto lock = Impl::lock_recorder();
  for (auto& [name, rule] : rules)
    state.set_rule(name, std::move(rule));
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
  auto lock = Impl::lock_recorder();
  state_->started = true;
}

void TransferBudget::stop() {
  auto lock = Impl::lock_recorder();
  state_->started = false;
}

bool TransferBudget::started() const {
  auto lock = Impl::lock_recorder();
  return state_->started;
}

PhaseScope TransferBudget::phase(std::string name) {
  return PhaseScope(state_, std::move(name));
}

TransferCounter& TransferBudget::operator[](const std::string& name) {
  auto lock = Impl::lock_recorder();
  return *state_->phase(name).counter;
}

std::uint64_t TransferBudget::calls(const std::string& name) const {
  auto lock = Impl::lock_recorder();
  const auto* entered = state_->find(name);
  return entered != nullptr ? entered->calls : 0;
}

std::vector<std::string> TransferBudget::phases() const {
  auto lock = Impl::lock_recorder();
  std::vector<std::string> names = state_->order;
  for (const auto& entry : state_->rules)
    if (std::find(names.begin(), names.end(), entry.first) == names.end())
      names.push_back(entry.first);
  return names;
}

TransferBudget& TransferBudget::require(const std::string& name, Rule rule) {
  Impl::validate_rule(name, rule, "cunumpy::TransferBudget::require: ");
  auto lock = Impl::lock_recorder();
  state_->set_rule(name, std::move(rule));
  return *this;
}

std::optional<Rule> TransferBudget::rule(const std::string& name) const {
  auto lock = Impl::lock_recorder();
  for (const auto& entry : state_->rules)
    if (entry.first == name)
      return entry.second;
  return std::nullopt;
}

std::vector<Violation> TransferBudget::violations() const {
  auto lock = Impl::lock_recorder();
  return state_->violations();
}

void TransferBudget::check() const {
  auto lock = Impl::lock_recorder();
  if (!state_->violations().empty())
    throw TransferError(state_->report());
}

std::string TransferBudget::report() const {
  auto lock = Impl::lock_recorder();
  return state_->report();
}

TransferCounter& TransferBudget::total() {
  return state_->total;
}

} // namespace profiling
} // namespace cunumpy
