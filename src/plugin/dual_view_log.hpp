#ifndef CUNUMPY_PLUGIN_DUAL_VIEW_LOG_HPP
#define CUNUMPY_PLUGIN_DUAL_VIEW_LOG_HPP

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <cunumpy/event.hpp>

#include "recorder/recorder.hpp"
#include "report/report.hpp"

namespace cunumpy::plugin {

/// DualView syncs and modifies, aggregated per view and call site. A sync is
/// linked to the deep copy it caused (the recorder pairs them); a sync that
/// copied nothing and a modify that no sync followed are listed apart.
class DualViewLog final : public Impl::EventSink {
public:
  using Sync = Impl::DualViewSync;
  using Modify = Impl::DualViewModify;

  void on_event(const Impl::RawEvent&, const Impl::RecorderLock&) override {}
  void on_dual_view(const Impl::DualViewEvent& event,
                    const Impl::RecorderLock&) override;

  /// Syncs, first seen first.
  std::vector<Sync> syncs(const Impl::RecorderLock& lock) const;
  /// Modifies that no sync followed.
  std::vector<Modify> unsynced_modifies(const Impl::RecorderLock& lock) const;

private:
  struct SyncKey {
    std::uint32_t label;
    bool to_device;
    bool copied;
    std::uint32_t site;
    bool operator<(const SyncKey& other) const {
      return std::tie(label, to_device, copied, site) <
             std::tie(other.label, other.to_device, other.copied, other.site);
    }
  };
  struct SyncTotals {
    EventKind copy_kind = EventKind::to_device;
    std::uint64_t count = 0;
    std::uint64_t nbytes = 0;
    std::uint64_t order = 0;
  };
  struct Pending {
    std::uint32_t label = 0;
    bool on_device = true;
    std::uint32_t site = 0;
    std::uint64_t count = 0;
    std::uint64_t order = 0;
  };

  std::map<SyncKey, SyncTotals> syncs_;
  /// Modifies not yet synced, by the address Kokkos reports for the view.
  std::map<std::uintptr_t, Pending> pending_;
  std::uint64_t next_order_ = 0;
};

} // namespace cunumpy::plugin

#endif
