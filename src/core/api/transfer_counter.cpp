// TransferCounter and count_transfers: the library's counters, over the
// consumer that counts (CounterState, consumers/counter_state.cpp). A
// counter keeps the recorder it was handed when made (the library's start,
// or its budget's) and reads through it.

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

#include <cunumpy/assert_no_transfers.hpp>
#include <cunumpy/impl/api_scope.hpp>
#include <cunumpy/transfer_counter.hpp>

#include "consumers/counter_state.hpp"
#include "recorder/recorder.hpp"
#include "report/report.hpp"

namespace cunumpy {
namespace Impl {
namespace {

/// Runs `read` on the counter's state under the recorder's lock
/// (lock_recorder): every event that ended before it is counted, the late
/// ones and the losses given now (and a view rebuilt first).
template <class Read>
auto read(const std::shared_ptr<CounterState>& state, Read read) {
  const RecorderLock lock = lock_recorder(*state->recorder);
  if (state->refresh)
    state->refresh(*state, lock);
  return read(*state, lock);
}

/// The report of a counter (Report::of_counter), read once.
Report describe(const std::shared_ptr<CounterState>& state) {
  return read(state, [](const CounterState& s, const RecorderLock& lock) {
    Report report;
    s.describe(report, lock);
    return report;
  });
}

} // namespace

std::string no_transfers_failure(const profiling::TransferCounter& counter,
                                 std::string_view function,
                                 SourceLocation where) {
  const Report report = describe(CounterAccess::state(counter));
  if (no_transfers(report))
    return {};
  return format_no_transfers_failure(report, function, where);
}

void throw_if_transfers(const profiling::TransferCounter& counter,
                        SourceLocation where) {
  std::string message = no_transfers_failure(
      counter, "cunumpy::profiling::assert_no_transfers", where);
  if (!message.empty())
    throw TransferError(std::move(message));
}

} // namespace Impl

namespace profiling {

using Impl::CounterState;
using Impl::index_of;
using Impl::read;
using Impl::RecorderLock;

TransferCounter::TransferCounter(std::size_t max_events, AdviceRecording advice)
    : state_(std::make_shared<Impl::CounterState>(max_events, advice)) {
  state_->recorder = &Impl::library_recorder();
}
TransferCounter::~TransferCounter() = default;
TransferCounter::TransferCounter(TransferCounter&&) noexcept = default;
TransferCounter&
TransferCounter::operator=(TransferCounter&&) noexcept = default;

std::uint64_t TransferCounter::total() const {
  return read(state_, [](const CounterState& s, const RecorderLock& lock) {
    return s.total(lock);
  });
}
std::uint64_t TransferCounter::count(EventKind kind) const {
  return read(state_, [&](const CounterState& s, const RecorderLock&) {
    return s.totals[index_of(kind)].count;
  });
}
std::uint64_t TransferCounter::to_host() const {
  return count(EventKind::to_host);
}
std::uint64_t TransferCounter::to_device() const {
  return count(EventKind::to_device);
}
std::uint64_t TransferCounter::device_copy() const {
  return count(EventKind::device_copy);
}
std::uint64_t TransferCounter::kernel_conversion() const {
  return count(EventKind::kernel_conversion);
}
std::uint64_t TransferCounter::fallback() const {
  return count(EventKind::fallback);
}
std::uint64_t TransferCounter::syncs() const {
  return count(EventKind::sync);
}
std::uint64_t TransferCounter::migrations() const {
  return count(EventKind::migration);
}
std::uint64_t TransferCounter::bytes(EventKind kind) const {
  return read(state_, [&](const CounterState& s, const RecorderLock&) {
    return s.totals[index_of(kind)].nbytes;
  });
}
std::uint64_t TransferCounter::bytes_to_host() const {
  return bytes(EventKind::to_host);
}
std::uint64_t TransferCounter::bytes_to_device() const {
  return bytes(EventKind::to_device);
}
std::uint64_t TransferCounter::bytes_migrated() const {
  return bytes(EventKind::migration);
}
double TransferCounter::seconds(EventKind kind) const {
  return read(state_, [&](const CounterState& s, const RecorderLock&) {
    return s.totals[index_of(kind)].seconds;
  });
}
std::uint64_t TransferCounter::async_count(EventKind kind) const {
  return read(state_, [&](const CounterState& s, const RecorderLock&) {
    return s.totals[index_of(kind)].async_count;
  });
}
std::vector<Event> TransferCounter::events() const {
  return read(state_, [](const CounterState& s, const RecorderLock& lock) {
    return s.events(lock);
  });
}
std::uint64_t TransferCounter::events_dropped() const {
  return read(state_, [](const CounterState& s, const RecorderLock&) {
    return s.dropped;
  });
}
std::vector<SiteSummary> TransferCounter::sites() const {
  return read(state_, [](const CounterState& s, const RecorderLock& lock) {
    return s.summaries(lock);
  });
}
std::string TransferCounter::report() const {
  return Impl::format_text(Impl::describe(state_));
}
std::uint64_t TransferCounter::events_lost() const {
  return read(state_, [](const CounterState& s, const RecorderLock&) {
    return s.losses.lost();
  });
}
bool TransferCounter::complete() const {
  return read(state_, [](const CounterState& s, const RecorderLock& lock) {
    return s.complete(lock);
  });
}
std::vector<std::string> TransferCounter::losses() const {
  return read(state_, [](const CounterState& s, const RecorderLock& lock) {
    return s.problems(lock);
  });
}
std::vector<Finding>
TransferCounter::advice(const AdviceOptions& options) const {
  return read(state_, [&](const CounterState& s, const RecorderLock& lock) {
    if (s.advise)
      return s.advise(options, lock);
    if (!s.advice)
      throw std::logic_error(
          "cunumpy::TransferCounter::advice: this counter records nothing for "
          "advice (it was made with AdviceRecording::off); make it with "
          "AdviceRecording::on");
    return s.advice->findings(options, lock);
  });
}
void TransferCounter::clear() {
  const RecorderLock lock = Impl::lock_recorder(*state_->recorder);
  if (state_->refresh)
    throw std::logic_error(
        "cunumpy::TransferCounter::clear: this counter is a phase of a "
        "TransferBudget and shows what the budget counted; it cannot be "
        "cleared on its own");
  state_->clear(lock);
}

namespace {

const std::shared_ptr<CounterState>& attachable(TransferCounter& counter) {
  const auto& state = Impl::CounterAccess::state(counter);
  if (state->refresh)
    throw std::logic_error(
        "cunumpy::profiling::count_transfers: the counter is a phase of a "
        "TransferBudget, which counts into it; pass a TransferCounter of "
        "your own");
  return state;
}

} // namespace

TransferCountScope::TransferCountScope()
    : owned_(std::make_unique<TransferCounter>()), counter_(owned_.get()) {
  Impl::Recorder& recorder = Impl::ensure_hooks();
  attached_ = attachable(*counter_);
  recorder.attach(attached_.get());
}

TransferCountScope::TransferCountScope(TransferCounter& counter)
    : counter_(&counter) {
  Impl::Recorder& recorder = Impl::ensure_hooks();
  attached_ = attachable(*counter_);
  recorder.attach(attached_.get());
}

TransferCountScope::TransferCountScope(TransferCountScope&& other) noexcept
    : owned_(std::move(other.owned_)), counter_(other.counter_),
      attached_(std::move(other.attached_)) {}

TransferCountScope::~TransferCountScope() {
  stop();
}

void TransferCountScope::stop() noexcept {
  if (attached_) {
    attached_->recorder->detach(attached_.get());
    attached_.reset();
  }
}

TransferCountScope count_transfers() {
  return TransferCountScope();
}

void set_backtrace_depth(int depth) {
  Impl::library_recorder().set_backtrace_depth(depth);
}

int backtrace_depth() {
  return Impl::library_recorder().backtrace_depth();
}

TransferCountScope count_transfers(TransferCounter& counter) {
  return TransferCountScope(counter);
}

} // namespace profiling
} // namespace cunumpy
