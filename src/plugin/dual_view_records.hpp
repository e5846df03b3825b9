#ifndef CUNUMPY_PLUGIN_DUAL_VIEW_RECORDS_HPP
#define CUNUMPY_PLUGIN_DUAL_VIEW_RECORDS_HPP

// What the plugin's report says of DualViews: plain data, made by the
// DualViewLog (dual_view_log.hpp) under the recorder's lock.

#include <cstdint>
#include <string>

#include <cunumpy/event.hpp>

namespace cunumpy::plugin {

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

} // namespace cunumpy::plugin

#endif
