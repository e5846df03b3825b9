#ifndef CUNUMPY_ADVICE_HPP
#define CUNUMPY_ADVICE_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <cunumpy/event.hpp>

namespace cunumpy::profiling {

/// What a counter or budget records for advice. `on` (the default) keeps
/// what the rules need from every event; `contents` also hashes the host
/// side of every copy, to find copies that moved bytes their destination
/// held already (redundant_copy); `off` records nothing for advice, and
/// advice() throws.
enum class AdviceRecording : std::uint8_t { off, on, contents };

/// The rules of advice (docs/advice.md lists each with an example).
enum class AdviceRule : std::uint8_t {
  pageable_memory,     ///< large copies from or to memory that is not pinned
  round_trip,          ///< the same data to the device and back, each call
  blocking_small_read, ///< a blocking read of a few bytes in every call
  fresh_host_buffer,   ///< a large copy into a host buffer made for it
  many_small_copies,   ///< many latency-bound copies per call from one line
  dual_view_ping_pong, ///< a DualView synced both ways in every call
  dual_view_idle_sync, ///< a DualView sync that copied nothing, every call
  implicit_sync,       ///< a wait Kokkos made on its own, in every call
  redundant_copy,      ///< a copy of bytes the destination held already
};

inline constexpr std::size_t advice_rule_count = 9;

/// The name of a rule as reports, the JSON and Python spell it:
/// "round_trip".
std::string_view to_string(AdviceRule rule) noexcept;
/// The rule named `name`, or nothing.
std::optional<AdviceRule> parse_advice_rule(std::string_view name) noexcept;

/// The thresholds of advice (the plugin reads them from CUNUMPY_ADVISE_*).
/// A finding is made only when its pattern passes them; none of them
/// changes what is counted or a budget's verdict.
struct AdviceOptions {
  /// Findings whose estimated saving over the run is below this are left
  /// out (those that cannot be estimated: when the time of their events
  /// is below it).
  double min_saving_seconds = 1e-3;
  /// A region called at least this often is a loop; a pattern must repeat
  /// in at least this many calls (outside every region: this many times).
  std::uint64_t min_calls = 10;
  /// Copies of at most this many bytes are latency-bound ("small").
  std::uint64_t small_bytes = 4096;
  /// Small copies per call from one line that a packed copy would replace.
  std::uint64_t many_copies = 8;
  /// Copies from or to pageable memory of at least this many bytes.
  std::uint64_t pageable_min_bytes = 256 * 1024;
  /// Copies into fresh host buffers of at least this many bytes.
  std::uint64_t fresh_min_bytes = 4 * 1024 * 1024;
  /// The bandwidth of copies through page-locked memory on this machine,
  /// bytes per second; 0: the best one measured in the run.
  double pinned_bandwidth = 0.0;
};

/// One call site of a finding: where, and what the events there were.
struct FindingSite {
  CallSite site;
  std::string what; ///< "to_device(shape=(100000,), dtype=float64)"
  EventKind kind = EventKind::to_host;
};

/// What advice found: one pattern at one place, what it costs and the
/// change that removes it. Advice never changes a count or a verdict.
struct Finding {
  AdviceRule rule = AdviceRule::pageable_memory;
  /// The path of the region it happened in ("step/solve"); "" outside
  /// every region.
  std::string region;
  /// For a budget: the phase that region counts in ("" outside).
  std::string phase;
  /// The call sites: one, or two for a round trip (there, then back).
  std::vector<FindingSite> sites;
  /// The events of the pattern, the calls of the region in which it
  /// happened, and the region's calls (outside every region, the
  /// repetitions: both are the number of times it happened).
  std::uint64_t count = 0;
  std::uint64_t calls = 0;
  std::uint64_t region_calls = 0;
  std::uint64_t bytes = 0;
  /// Time measured in its events (copy or wait time).
  double seconds = 0.0;
  /// The estimated saving over the run and per call of the region; empty
  /// when it cannot be estimated (`estimate` says why).
  std::optional<double> saving_seconds;
  std::optional<double> saving_per_call;
  /// The numbers the finding rests on, in one sentence.
  std::string evidence;
  /// How the saving was estimated, or why it could not be.
  std::string estimate;
  /// The change that removes it, with the call to use.
  std::string fix;

  std::string_view name() const noexcept { return to_string(rule); }
  /// One line: the rule, the place, the saving, the fix.
  std::string str() const;
};

} // namespace cunumpy::profiling

#endif
