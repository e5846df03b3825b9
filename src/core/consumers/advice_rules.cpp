// The rules of advice, one function each; the table at the end lists them
// in the order of docs/advice.md.

#include "consumers/advice_rules.hpp"

#include <algorithm>

#include "recorder/recorder.hpp"
#include "report/format.hpp"

namespace cunumpy::Impl {

using profiling::AdviceRule;
using profiling::Finding;
using profiling::FindingSite;
using SiteKey = AdviceState::SiteKey;
using SiteStats = AdviceState::SiteStats;

namespace {

std::string text(const RuleInput& in, std::uint32_t id) {
  return std::string(in.lock.strings().view(id));
}

FindingSite site(const RuleInput& in, std::uint32_t site,
                 std::uint32_t description, EventKind kind) {
  return {in.lock.sites().resolve(site), text(in, description), kind};
}

/// The calls of a region node (outside every region: `count`, the times).
std::uint64_t region_calls(const RuleInput& in, std::uint32_t node,
                           std::uint64_t count) {
  return node == 0                     ? count
         : node < in.node_calls.size() ? in.node_calls[node]
                                       : 0;
}

/// A pattern in at least min_calls calls, and in at least half of them.
bool repeated(const RuleInput& in, std::uint64_t calls,
              std::uint64_t region_calls) {
  return calls >= in.options.min_calls && 2 * calls >= region_calls;
}

/// `calls`: the calls it happened in (outside every region, the times).
Finding start(const RuleInput& in, AdviceRule rule, std::uint32_t node,
              std::uint64_t calls, std::uint64_t count) {
  Finding finding;
  finding.rule = rule;
  finding.region = in.paths[node];
  finding.calls = calls;
  finding.region_calls = region_calls(in, node, calls);
  finding.count = count;
  return finding;
}

std::string per_call_text(const Finding& finding) {
  return finding.region.empty()
             ? std::to_string(finding.calls) + " times"
             : "in " + std::to_string(finding.calls) + " of " +
                   std::to_string(finding.region_calls) + " calls";
}

void set_saving(Finding& finding, double total) {
  finding.saving_seconds = std::max(total, 0.0);
  finding.saving_per_call =
      *finding.saving_seconds /
      static_cast<double>(std::max<std::uint64_t>(finding.calls, 1));
}

const char* direction_text(EventKind kind) {
  return kind == EventKind::to_host ? "to the host" : "to the device";
}

std::string size_range_text(const SiteStats& stats) {
  return bytes_text(stats.min_bytes) +
         (stats.max_bytes != stats.min_bytes
              ? " to " + bytes_text(stats.max_bytes)
              : std::string());
}

/// The calls a site's events happened in (outside every region, their
/// number).
std::uint64_t site_calls(const SiteKey& key, const SiteStats& stats) {
  return key.node == 0 ? stats.count : stats.per_call.calls;
}

/// A finding of one site, with its totals.
Finding site_finding(const RuleInput& in, AdviceRule rule, const SiteKey& key,
                     const SiteStats& stats) {
  Finding finding =
      start(in, rule, key.node, site_calls(key, stats), stats.count);
  finding.sites.push_back(site(in, key.site, stats.description, key.kind));
  finding.bytes = stats.bytes;
  finding.seconds = stats.seconds;
  return finding;
}

/// Copies (not waits) that are not mostly legs of round trips or DualView
/// ping-pongs: those are reported there, as removing the pair removes
/// them.
bool copies_of_their_own(const SiteKey& key, const SiteStats& stats) {
  return key.kind != EventKind::sync && 2 * stats.legs < stats.count;
}

bool small(const RuleInput& in, const SiteStats& stats) {
  return stats.max_bytes <= in.options.small_bytes;
}

double each(const SiteStats& stats) {
  return stats.seconds / static_cast<double>(stats.count);
}

bool is_many_small_copies(const RuleInput& in, const SiteKey& key,
                          const SiteStats& stats) {
  return copies_of_their_own(key, stats) && small(in, stats) && key.node != 0 &&
         stats.count >= in.options.many_copies * site_calls(key, stats);
}

bool is_fresh_host_buffer(const RuleInput& in, const SiteKey& key,
                          const SiteStats& stats) {
  return copies_of_their_own(key, stats) && key.kind == EventKind::to_host &&
         stats.min_bytes >= in.options.fresh_min_bytes &&
         stats.fresh >= in.options.min_calls && 2 * stats.fresh >= stats.count;
}

void keep_if_saving(Found& found, std::uint64_t order, Finding finding) {
  if (!finding.saving_seconds || *finding.saving_seconds > 0.0)
    found.emplace_back(order, std::move(finding));
}

void pageable_memory(const RuleInput& in, Found& found) {
  for (const auto& [key, stats] : in.sites) {
    if (!copies_of_their_own(key, stats) ||
        is_fresh_host_buffer(in, key, stats) ||
        (key.flags & AdviceState::blocking_flag) == 0 ||
        (key.flags & AdviceState::gpu_flag) == 0 ||
        in.state.space_memory(key.host_space) != HostMemory::pageable ||
        stats.min_bytes < in.options.pageable_min_bytes)
      continue;
    const double reference = in.pinned[key.kind == EventKind::to_host ? 0 : 1];
    const double bandwidth = static_cast<double>(stats.bytes) / stats.seconds;
    Finding finding = site_finding(in, AdviceRule::pageable_memory, key, stats);
    finding.evidence =
        std::to_string(stats.count) + " copies " + direction_text(key.kind) +
        (key.kind == EventKind::to_host ? " into" : " from") +
        " pageable memory (" + text(in, key.host_space) + ") of " +
        size_range_text(stats) + ", " + bytes_text(stats.bytes) +
        " in all at " + bandwidth_text(bandwidth);
    if (reference > 0.0) {
      finding.estimate =
          "through page-locked memory at " + bandwidth_text(reference) + " (" +
          in.pinned_source + ") they would take " +
          time_text(static_cast<double>(stats.bytes) / reference);
      set_saving(finding,
                 stats.seconds - static_cast<double>(stats.bytes) / reference);
    } else {
      finding.estimate = "no blocking page-locked copy of at least " +
                         bytes_text(in.options.pageable_min_bytes) +
                         " in this run to compare with; set pinned_bandwidth "
                         "(CUNUMPY_ADVISE_PINNED_MBPS) to this machine's";
    }
    finding.fix = "reuse one page-locked buffer for the copies: "
                  "cunumpy::HostStaging (xp.memory.HostStaging)";
    keep_if_saving(found, stats.order, std::move(finding));
  }
}

/// Round trips and DualView ping-pongs: pairs of copies there and back.
void pairs(const RuleInput& in, const AdviceState::PairMap& pairs,
           AdviceRule rule, Found& found) {
  for (const auto& [key, pair] : pairs) {
    const std::uint64_t calls =
        key.node == 0 ? pair.count : pair.per_call.calls;
    if (!repeated(in, calls, region_calls(in, key.node, calls)))
      continue;
    Finding finding = start(in, rule, key.node, calls, 2 * pair.count);
    const EventKind second_kind = key.first_kind == EventKind::to_host
                                      ? EventKind::to_device
                                      : EventKind::to_host;
    finding.sites.push_back(
        site(in, key.first_site, pair.first_description, key.first_kind));
    finding.sites.push_back(
        site(in, key.second_site, pair.second_description, second_kind));
    finding.bytes = pair.bytes;
    finding.seconds = pair.seconds;
    const std::string way = key.first_kind == EventKind::to_device
                                ? "to the device and back"
                                : "to the host and back";
    const std::string each_way =
        bytes_text(pair.bytes / (2 * pair.count)) + " each way";
    const std::string per_pair =
        time_text(pair.seconds / static_cast<double>(pair.count));
    if (rule == AdviceRule::round_trip) {
      finding.evidence = "the same allocation went " + way + " " +
                         per_call_text(finding) + ", " + each_way + ", " +
                         per_pair + " per round trip";
      finding.fix =
          "keep the data where the loop uses it: convert once before the "
          "loop (cunumpy::to_device, xp.to_cunumpy) and once after it "
          "(cunumpy::to_host, xp.to_numpy), inside only when the host "
          "needs it (output every N steps)";
    } else {
      finding.evidence = "DualView '" + text(in, key.label) + "' synced " +
                         way + " " + per_call_text(finding) + ", " + each_way +
                         ", " + per_pair + " per call";
      finding.fix = "sync the DualView once before the loop and once after "
                    "it; inside, work on one side and call modify_device() "
                    "(modify_host()) only where that side is written";
    }
    finding.estimate = "every pair but one, at the boundaries";
    set_saving(finding, pair.seconds * static_cast<double>(pair.count - 1) /
                            static_cast<double>(pair.count));
    found.emplace_back(pair.order, std::move(finding));
  }
}

void round_trip(const RuleInput& in, Found& found) {
  pairs(in, in.round_trips, AdviceRule::round_trip, found);
}

void blocking_small_read(const RuleInput& in, Found& found) {
  for (const auto& [key, stats] : in.sites) {
    if (!copies_of_their_own(key, stats) || key.kind != EventKind::to_host ||
        !small(in, stats) || (key.flags & AdviceState::blocking_flag) == 0 ||
        is_many_small_copies(in, key, stats))
      continue;
    const std::uint64_t calls = site_calls(key, stats);
    if (!repeated(in, calls, region_calls(in, key.node, calls)))
      continue;
    Finding finding =
        site_finding(in, AdviceRule::blocking_small_read, key, stats);
    finding.evidence = std::to_string(stats.count) + " blocking read(s) of " +
                       bytes_text(stats.max_bytes) + " " +
                       per_call_text(finding) + ", " + time_text(each(stats)) +
                       " each, the host waiting for the device";
    finding.estimate =
        "the time the host waited in the reads; on a GPU the device also "
        "idles while the host launches the next iteration, which is not "
        "counted here";
    set_saving(finding, stats.seconds);
    const std::string what = text(in, stats.description);
    const bool result = what.rfind("parallel_reduce(", 0) == 0 ||
                        what.rfind("parallel_scan(", 0) == 0;
    finding.fix = std::string(result ? "reduce into a device view and read "
                                       "it with "
                                     : "read it with ") +
                  "cunumpy::to_host_async (xp.to_host_async) and use the "
                  "value one iteration late, so the host never waits for the "
                  "iteration it has just queued";
    found.emplace_back(stats.order, std::move(finding));
  }
}

void fresh_host_buffer(const RuleInput& in, Found& found) {
  for (const auto& [key, stats] : in.sites) {
    if (!is_fresh_host_buffer(in, key, stats))
      continue;
    Finding finding =
        site_finding(in, AdviceRule::fresh_host_buffer, key, stats);
    finding.count = stats.fresh;
    finding.bytes = stats.fresh_bytes;
    finding.seconds = stats.fresh_seconds;
    const double bandwidth =
        static_cast<double>(stats.fresh_bytes) / stats.fresh_seconds;
    finding.evidence =
        std::to_string(stats.fresh) + " of " + std::to_string(stats.count) +
        " copies to the host of " + size_range_text(stats) +
        " went into a host buffer allocated since the copy before, at " +
        bandwidth_text(bandwidth);
    const double reference = std::max(in.pinned[0], in.reused);
    if (reference > 0.0) {
      finding.estimate =
          "at " + bandwidth_text(reference) + " (" +
          (reference == in.pinned[0]
               ? in.pinned_source
               : "the best copy into a reused buffer of this run") +
          ") they would take " +
          time_text(static_cast<double>(stats.fresh_bytes) / reference);
      set_saving(finding,
                 stats.fresh_seconds -
                     static_cast<double>(stats.fresh_bytes) / reference);
    } else {
      finding.estimate = "no copy into a reused or page-locked buffer of at "
                         "least " +
                         bytes_text(in.options.pageable_min_bytes) +
                         " to compare with in this run";
    }
    finding.fix = "copy into one buffer allocated once: a "
                  "cunumpy::HostStaging (xp.memory.HostStaging) keeps a "
                  "page-locked buffer and reuses it for every copy";
    keep_if_saving(found, stats.order, std::move(finding));
  }
}

void many_small_copies(const RuleInput& in, Found& found) {
  for (const auto& [key, stats] : in.sites) {
    if (!is_many_small_copies(in, key, stats))
      continue;
    const std::uint64_t calls = site_calls(key, stats);
    Finding finding =
        site_finding(in, AdviceRule::many_small_copies, key, stats);
    const double per_call =
        static_cast<double>(stats.count) / static_cast<double>(calls);
    finding.evidence =
        printf_text("%.0f", per_call) + " copies " + direction_text(key.kind) +
        " of at most " + bytes_text(stats.max_bytes) + " per call " +
        per_call_text(finding) + ", " + time_text(each(stats)) + " each";
    finding.estimate = "one packed copy per call instead of " +
                       printf_text("%.0f", per_call) +
                       ", each costing what one copy costs now";
    set_saving(finding,
               stats.seconds - each(stats) * static_cast<double>(calls));
    finding.fix = "pack the values into one view and copy it once per "
                  "call (one Kokkos::deep_copy of the packed view, or one "
                  "cunumpy::to_host of it)";
    found.emplace_back(stats.order, std::move(finding));
  }
}

void dual_view_ping_pong(const RuleInput& in, Found& found) {
  pairs(in, in.ping_pongs, AdviceRule::dual_view_ping_pong, found);
}

void dual_view_idle_sync(const RuleInput& in, Found& found) {
  for (const auto& [key, sync] : in.syncs) {
    const std::uint64_t calls =
        key.node == 0 ? sync.idle : sync.idle_calls.calls;
    if (sync.copied > 0 ||
        !repeated(in, calls, region_calls(in, key.node, calls)))
      continue;
    Finding finding =
        start(in, AdviceRule::dual_view_idle_sync, key.node, calls, sync.idle);
    const std::string label = text(in, key.label);
    finding.sites.push_back(
        {in.lock.sites().resolve(key.site),
         std::string(key.to_device ? "sync_device" : "sync_host") + "(\"" +
             label + "\")",
         key.to_device ? EventKind::to_device : EventKind::to_host});
    finding.evidence = "DualView '" + label + "' synced " +
                       (key.to_device ? "to the device " : "to the host ") +
                       std::to_string(sync.idle) + " time(s) " +
                       per_call_text(finding) +
                       " and the sync never copied: the other side was not "
                       "marked modified";
    finding.estimate = "nothing to save in copy time: a check that the "
                       "sync is needed (kept whatever the saving threshold)";
    set_saving(finding, 0.0);
    finding.fix = std::string("if the ") + (key.to_device ? "host" : "device") +
                  " side is never written in the loop, sync once before it; "
                  "if it is, call " +
                  (key.to_device ? "modify_host()" : "modify_device()") +
                  " after writing it, or the sync leaves the other copy stale";
    found.emplace_back(sync.order, std::move(finding));
  }
}

void implicit_sync(const RuleInput& in, Found& found) {
  for (const auto& [key, stats] : in.sites) {
    // A scalar read's wait is its read's (blocking_small_read).
    if (key.kind != EventKind::sync ||
        (key.flags & AdviceState::implicit_flag) == 0 ||
        (key.flags & AdviceState::scalar_flag) != 0)
      continue;
    const std::uint64_t calls = site_calls(key, stats);
    if (!repeated(in, calls, region_calls(in, key.node, calls)))
      continue;
    const std::string name = text(in, key.description);
    if (name.rfind("debug_sync(", 0) == 0)
      continue; // debug-sync mode's own waits
    Finding finding = site_finding(in, AdviceRule::implicit_sync, key, stats);
    finding.evidence = std::to_string(stats.count) +
                       " wait(s) Kokkos made on its own (" + name + ") " +
                       per_call_text(finding) + ", " + time_text(each(stats)) +
                       " each";
    finding.estimate = "the time the host waited";
    set_saving(finding, stats.seconds);
    // Kokkos waits while it makes a device view (after writing its header,
    // after initializing it): made in every call, the view is the cost.
    finding.fix =
        2 * stats.deallocation_waits >= stats.count
            ? "a host view (a mirror, a temporary) is freed here in every "
              "call, and Kokkos waits for the device before it frees host "
              "memory: allocate it once outside the loop and reuse it"
        : (key.flags & AdviceState::allocation_flag) != 0
            ? "a device view is allocated and initialized here in every "
              "call, and Kokkos waits for that: allocate it once outside "
              "the loop and reuse it (or pass a view in), or make it with "
              "Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, ...) "
              "where it must be made in the loop"
            : "let the work overlap instead of waiting here: "
              "Kokkos::deep_copy(exec, dst, src) on an execution space "
              "instance, a reduction into a device view, and one fence "
              "(exec.fence()) where the result is needed";
    found.emplace_back(stats.order, std::move(finding));
  }
}

void redundant_copy(const RuleInput& in, Found& found) {
  for (const auto& [key, stats] : in.sites) {
    if (!copies_of_their_own(key, stats) || stats.unchanged == 0)
      continue;
    Finding finding = site_finding(in, AdviceRule::redundant_copy, key, stats);
    finding.count = stats.unchanged;
    finding.bytes = stats.unchanged_bytes;
    finding.seconds = stats.unchanged_seconds;
    const bool up = key.kind == EventKind::to_device;
    finding.evidence =
        std::to_string(stats.unchanged) + " of " +
        std::to_string(stats.checked) + " copies " + direction_text(key.kind) +
        " (" + bytes_text(stats.unchanged_bytes) + ") " +
        (up ? "moved the bytes last copied to or from the same device "
              "buffer (unless a kernel wrote it in between)"
            : "left their destination as it was: it held those bytes "
              "already");
    finding.estimate = "the time of those copies";
    set_saving(finding, stats.unchanged_seconds);
    finding.fix =
        up ? "copy only when the host data changed: a flag set where it "
             "is written, or a Kokkos::DualView with modify_host() there "
             "and sync_device() before the kernels"
           : "copy back only when the device data changed since the last "
             "copy (a flag set by the kernels that write it), or only the "
             "part that changed";
    found.emplace_back(stats.order, std::move(finding));
  }
}

} // namespace

const std::array<AdviceRuleEntry, profiling::advice_rule_count> advice_rules = {
    {
        {AdviceRule::pageable_memory, pageable_memory},
        {AdviceRule::round_trip, round_trip},
        {AdviceRule::blocking_small_read, blocking_small_read},
        {AdviceRule::fresh_host_buffer, fresh_host_buffer},
        {AdviceRule::many_small_copies, many_small_copies},
        {AdviceRule::dual_view_ping_pong, dual_view_ping_pong},
        {AdviceRule::dual_view_idle_sync, dual_view_idle_sync},
        {AdviceRule::implicit_sync, implicit_sync},
        {AdviceRule::redundant_copy, redundant_copy},
    }};

} // namespace cunumpy::Impl
