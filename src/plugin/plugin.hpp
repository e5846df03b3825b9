#ifndef CUNUMPY_PLUGIN_PLUGIN_HPP
#define CUNUMPY_PLUGIN_PLUGIN_HPP

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <cunumpy/transfer_budget.hpp>

#include "config.hpp"
#include "dual_view_log.hpp"
#include "next_tool.hpp"
#include "tools/kokkosp.hpp"
#include "trace.hpp"

namespace cunumpy::plugin {

namespace kokkosp = Impl::kokkosp;

/// The plugin's entry points as a table (kp_cunumpy.cpp): what Kokkos calls
/// when it loaded this library itself.
kokkosp::EventSet entry_points() noexcept;

/// Writes the line of a kokkosp_init_library call to the recording.
void record_init(int load_sequence, std::uint64_t interface_version,
                 std::uint32_t device_count,
                 const kokkosp::DeviceInfo* devices);

/// The plugin's one state object, created by kokkosp_init_library and
/// destroyed by kokkosp_finalize_library. It feeds nothing itself (the
/// event path of src/core/tools does); it owns the consumers: a
/// TransferBudget (the regions, the rules of CUNUMPY_BUDGET), the DualView
/// log, the trace, and the next tool.
class Plugin {
public:
  /// Reads the configuration, loads and initializes the next tool, loads the
  /// budget file, and watches the table of callbacks of the Kokkos that
  /// loaded it (`caller`: an address in the code that called
  /// kokkosp_init_library; `self`: one in this library). Problems print one
  /// line each; nothing throws for them.
  Plugin(Impl::Recorder& recorder, int load_sequence,
         std::uint64_t interface_version, std::uint32_t device_count,
         kokkosp::DeviceInfo* devices, const void* self, const void* caller);
  ~Plugin();
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  const NextTool& next() const noexcept { return next_; }
  const Config& config() const noexcept { return config_; }

  /// Another Kokkos of the process initialized the plugin (or a session of
  /// one that restarted its tools): the report waits for its end too.
  void start_session(std::uint64_t interface_version);
  /// A Kokkos finalized; true when it was the last one running.
  bool end_session();

  void declare_metadata(const char* key, const char* value);

  /// Finalizes the next tool (once) and stops forwarding to it.
  void finalize_next();

  /// Writes the report and the trace the first time it is called. Returns
  /// true when a rule is broken or the budget asked for was not checked.
  bool finish();
  bool finished() const noexcept { return finished_.load(); }

  /// At the process' end, after finish(): when Kokkos ran a session the
  /// plugin was not told of (Kokkos 3 initialized again calls no tool's
  /// init; the plugin learns it from a finalize hook, or from Kokkos still
  /// running), says so and writes the report again, incomplete. Returns
  /// whether the budget failed.
  bool reconsider();

private:
  /// CUNUMPY_RECORD: starts the recording (see recorder/recording.hpp).
  void start_recording();
  bool write_report(); ///< finish()'s work, which may throw
  /// Regions still open at the end of the run (a pop missing): listed in
  /// the report; where a phase is at or below one, the events after the
  /// missing pop may count in that phase instead of the one around it, so
  /// the verdict is incomplete (an incident names the region). Once.
  void note_open_regions();
  bool open_regions_noted_ = false;
  /// A Kokkos session ran that cunumpy was not told of (a finalize hook it
  /// left in Kokkos ran).
  static void on_unseen_finalize();
  /// finish() when write_report() threw: says so, and fails a run that had
  /// a rule file.
  bool report_lost(const char* why) noexcept;
  /// finish() when the process ends from a signal handler that interrupted
  /// cunumpy on this thread with its lock held (exit() in a handler of
  /// SIGTERM): nothing it recorded can be read without waiting for ever, so
  /// no report is written; says so, and fails a run that had a rule file.
  bool finish_without_report() noexcept;

  Config config_;
  NextTool next_;
  bool next_finalized_ = false;
  std::optional<profiling::TransferBudget> budget_;
  std::string budget_error_;
  /// Why Kokkos' table of callbacks is not watched ("" when it is).
  std::string unwatched_;
  std::unique_ptr<Trace> trace_;
  DualViewLog dual_views_;
  std::mutex metadata_mutex_; ///< Kokkos may declare metadata on any thread
  std::vector<std::pair<std::string, std::string>> metadata_;
  Impl::Recorder& recorder_; ///< handed by kokkosp_init_library
  double start_ = 0.0;
  /// The Kokkos Tools interface version Kokkos passed at init.
  std::uint64_t interface_version_ = 0;
  /// Kokkos libraries or sessions running (initialized, not finalized).
  int sessions_ = 1;
  int sessions_seen_ = 1;
  /// The last Kokkos running finalized.
  bool kokkos_finalized_ = false;
  /// finish() ran, and its verdict: the plugin's own state, not guarded by
  /// the recorder's lock (finish() runs once, from the caller that took the
  /// plugin's pointer; a later call returns the verdict).
  std::atomic<bool> finished_{false};
  std::atomic<bool> reported_unreadable_{false};
  std::atomic<bool> failed_{false};
};

} // namespace cunumpy::plugin

#endif
