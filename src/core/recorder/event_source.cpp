#include "recorder/event_source.hpp"

#include <algorithm>
#include <limits>

namespace cunumpy::Impl {

EventSources::EventSources() : table_(std::make_unique<Table>()) {
  register_name("kokkos"); // kokkos_source
}

EventSources::~EventSources() = default;

std::uint8_t EventSources::register_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > max_name || name == "other")
    return other;
  const std::lock_guard lock(table_->mutex);
  const std::uint32_t count = table_->count.load(std::memory_order_relaxed);
  for (std::uint32_t id = 0; id < count; ++id)
    if (name == table_->names[id].data())
      return static_cast<std::uint8_t>(id);
  if (count >= other)
    return other;
  name.copy(table_->names[count].data(), name.size());
  table_->count.store(count + 1, std::memory_order_release);
  return static_cast<std::uint8_t>(count);
}

std::string_view EventSources::name(std::uint8_t id) const noexcept {
  if (id < table_->count.load(std::memory_order_acquire))
    return table_->names[id].data();
  return "other";
}

bool EventSources::add(EventSource& source) noexcept {
  const std::uint8_t id = register_name(source.name());
  // With the names' mutex, as the fork handler reads the mask.
  const std::lock_guard lock(table_->mutex);
  EventSource* none = nullptr;
  if (!table_->added[id].compare_exchange_strong(none, &source,
                                                 std::memory_order_acq_rel))
    return none == &source;
  mask_.fetch_or(1u << id, std::memory_order_acq_rel);
  return true;
}

double EventSources::horizon() const noexcept {
  double horizon = std::numeric_limits<double>::infinity();
  for_each([&horizon](const EventSource& source) {
    horizon = std::min(horizon, source.horizon());
  });
  return horizon;
}

void EventSources::collect() noexcept {
  for_each([](EventSource& source) { source.collect(); });
}

EventSource& EventSources::cuda_state(std::unique_ptr<EventSource> (*make)()) {
  if (EventSource* const made =
          table_->cuda_state.load(std::memory_order_acquire))
    return *made;
  const std::lock_guard lock(table_->mutex);
  if (table_->cuda_state_owner == nullptr) {
    table_->cuda_state_owner = make();
    table_->cuda_state.store(table_->cuda_state_owner.get(),
                             std::memory_order_release);
  }
  return *table_->cuda_state_owner;
}

void EventSources::lock_for_fork() noexcept {
  table_->mutex.lock();
  table_->forked = mask_.load(std::memory_order_acquire);
  for_each([](EventSource& source) { source.lock_for_fork(); });
}

void EventSources::unlock_after_fork() noexcept {
  for (std::uint32_t id = max; id-- > 0;)
    if ((table_->forked >> id & 1u) != 0)
      added(static_cast<std::uint8_t>(id))->unlock_after_fork();
  table_->mutex.unlock();
}

} // namespace cunumpy::Impl
