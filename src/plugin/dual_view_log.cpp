#include "dual_view_log.hpp"

#include <algorithm>

namespace cunumpy::plugin {
namespace {

// Kokkos reports a DualView side by an address up to a view header before
// its data.
constexpr std::uintptr_t header_slack = 256;

} // namespace

void DualViewLog::on_dual_view(const Impl::DualViewEvent& event,
                               const Impl::RecorderLock&) {
  const auto address = reinterpret_cast<std::uintptr_t>(event.pointer);
  if (!event.sync) {
    Pending& pending = pending_[address];
    if (pending.count == 0)
      pending.order = next_order_++;
    pending.label = event.label;
    pending.on_device = event.device;
    pending.site = event.site;
    ++pending.count;
    return;
  }
  SyncTotals& totals =
      syncs_[SyncKey{event.label, event.device, event.copied, event.site}];
  if (totals.count == 0)
    totals.order = next_order_++;
  ++totals.count;
  totals.nbytes += event.nbytes;
  totals.copy_kind = event.copy_kind;
  if (!event.copied)
    return;
  // The copy read the other side: the modify made there is now synced.
  const auto source = reinterpret_cast<std::uintptr_t>(event.source);
  auto it =
      pending_.lower_bound(source > header_slack ? source - header_slack : 0);
  if (it != pending_.end() && it->first <= source &&
      it->second.on_device != event.device)
    pending_.erase(it);
}

std::vector<DualViewLog::Sync>
DualViewLog::syncs(const Impl::RecorderLock& lock) const {
  std::vector<std::pair<std::uint64_t, Sync>> ordered;
  for (const auto& [key, totals] : syncs_) {
    Sync sync;
    sync.label = std::string(lock.strings().view(key.label));
    sync.to_device = key.to_device;
    sync.copied = key.copied;
    sync.copy_kind = totals.copy_kind;
    sync.site = lock.sites().resolve(key.site);
    sync.count = totals.count;
    sync.nbytes = totals.nbytes;
    ordered.emplace_back(totals.order, std::move(sync));
  }
  std::sort(ordered.begin(), ordered.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Sync> result;
  for (auto& entry : ordered)
    result.push_back(std::move(entry.second));
  return result;
}

std::vector<DualViewLog::Modify>
DualViewLog::unsynced_modifies(const Impl::RecorderLock& lock) const {
  std::vector<std::pair<std::uint64_t, Modify>> ordered;
  for (const auto& [address, pending] : pending_) {
    Modify modify;
    modify.label = std::string(lock.strings().view(pending.label));
    modify.on_device = pending.on_device;
    modify.site = lock.sites().resolve(pending.site);
    modify.count = pending.count;
    ordered.emplace_back(pending.order, std::move(modify));
  }
  std::sort(ordered.begin(), ordered.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Modify> result;
  for (auto& entry : ordered)
    result.push_back(std::move(entry.second));
  return result;
}

} // namespace cunumpy::plugin
