// The rules of advice (docs/advice.md): what is kept per event, and the
// findings made from it when they are asked for.

#include "consumers/advice.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "recorder/recorder.hpp"
#include "report/format.hpp"
#include "support/excerpt.hpp"

namespace cunumpy {
namespace profiling {

namespace {

constexpr std::array<std::string_view, advice_rule_count> rule_names = {
    "pageable_memory",     "round_trip",        "blocking_small_read",
    "fresh_host_buffer",   "many_small_copies", "dual_view_ping_pong",
    "dual_view_idle_sync", "implicit_sync",     "redundant_copy"};

} // namespace

std::string_view to_string(AdviceRule rule) noexcept {
  const auto index = static_cast<std::size_t>(rule);
  return index < rule_names.size() ? rule_names[index] : "?";
}

std::optional<AdviceRule> parse_advice_rule(std::string_view name) noexcept {
  for (std::size_t i = 0; i < rule_names.size(); ++i)
    if (rule_names[i] == name)
      return static_cast<AdviceRule>(i);
  return std::nullopt;
}

std::string Finding::str() const {
  std::string text = "[" + std::string(name()) + "] ";
  text += region.empty() ? std::string("outside every region")
                         : "in region '" + Impl::printable(region) + "'";
  if (region.empty())
    text += " (" + std::to_string(calls) + " times)";
  else
    text += " (" + std::to_string(calls) + " of " +
            std::to_string(region_calls) + " calls)";
  for (std::size_t i = 0; i < sites.size(); ++i)
    text += (i == 0 ? " at " : ", then ") + Impl::printable(sites[i].site.str());
  text += ": " + evidence + "; ";
  if (saving_seconds && *saving_seconds <= 0.0)
    text += "saves no measurable time (kept for what it says of the code)";
  else if (saving_seconds)
    text += "saves about " + Impl::time_text(*saving_seconds) +
            (saving_per_call && calls > 1
                 ? " (" + Impl::time_text(*saving_per_call) + " per call)"
                 : std::string());
  else
    text += "saving not estimated (" + estimate + ")";
  return text + "; fix: " + fix;
}

} // namespace profiling

namespace Impl {
namespace {

using profiling::AdviceOptions;
using profiling::AdviceRule;
using profiling::Finding;
using profiling::FindingSite;

constexpr std::uint8_t blocking_flag = 1;
constexpr std::uint8_t implicit_flag = 2;
constexpr std::uint8_t scalar_flag = 4;

/// Sizes within a factor of two share a class: the bit width.
std::uint8_t size_class(std::uint64_t nbytes) noexcept {
  return nbytes == 0 ? 0
                     : static_cast<std::uint8_t>(64 - __builtin_clzll(nbytes));
}

/// The smallest size of a class.
std::uint64_t class_floor(std::size_t size_class) noexcept {
  return size_class == 0 ? 0 : std::uint64_t(1) << (size_class - 1);
}

std::uint64_t mix(std::uint64_t value) noexcept {
  value *= 0x9e3779b97f4a7c15ull;
  return value ^ (value >> 29);
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.substr(text.size() - suffix.size()) == suffix;
}

/// The size of an allocation's header before its data (Kokkos reports the
/// allocation, copies the data): a copy within this of an allocation's end
/// is into it.
constexpr std::uint64_t header_slack = 256;

} // namespace

HostMemory host_memory(std::string_view space) noexcept {
  if (space.find("HostPinned") != std::string_view::npos ||
      ends_with(space, "HostUSM"))
    return HostMemory::page_locked;
  if (space == "Host" || space == "HostSpace" || space == "HBW")
    return HostMemory::pageable;
  return HostMemory::unknown;
}

bool AdviceState::SiteKey::operator==(const SiteKey& other) const noexcept {
  return node == other.node && site == other.site &&
         description == other.description && host_space == other.host_space &&
         kind == other.kind && flags == other.flags &&
         size_class == other.size_class;
}

std::size_t
AdviceState::SiteKeyHash::operator()(const SiteKey& key) const noexcept {
  std::uint64_t h = mix(std::uint64_t(key.node) << 32 | key.site);
  h = mix(h ^ (std::uint64_t(key.description) << 32 | key.host_space));
  h = mix(h ^ (std::uint64_t(key.kind) << 16 | std::uint64_t(key.flags) << 8 |
               key.size_class));
  return static_cast<std::size_t>(h);
}

bool AdviceState::PairKey::operator==(const PairKey& other) const noexcept {
  return node == other.node && first_site == other.first_site &&
         second_site == other.second_site && label == other.label &&
         first_kind == other.first_kind;
}

std::size_t
AdviceState::PairKeyHash::operator()(const PairKey& key) const noexcept {
  std::uint64_t h = mix(std::uint64_t(key.node) << 32 | key.first_site);
  h = mix(h ^ (std::uint64_t(key.second_site) << 32 | key.label));
  return static_cast<std::size_t>(mix(h ^ std::uint64_t(key.first_kind)));
}

bool AdviceState::SyncKey::operator==(const SyncKey& other) const noexcept {
  return node == other.node && label == other.label && site == other.site &&
         to_device == other.to_device;
}

std::size_t
AdviceState::SyncKeyHash::operator()(const SyncKey& key) const noexcept {
  std::uint64_t h = mix(std::uint64_t(key.node) << 32 | key.label);
  return static_cast<std::size_t>(
      mix(h ^ (std::uint64_t(key.site) << 1 | (key.to_device ? 1 : 0))));
}

void AdviceState::PerCall::add(std::uint64_t call) noexcept {
  if (call != last_call) {
    ++calls;
    last_call = call;
  }
}

AdviceState::Frame AdviceState::current(std::uint32_t thread) const noexcept {
  const auto found = stacks_.find(thread);
  return found == stacks_.end() || found->second.frames.empty()
             ? Frame{}
             : found->second.frames.back();
}

AdviceState::Frame
AdviceState::common_frame(std::uint32_t thread,
                          std::uint64_t record) const noexcept {
  const auto found = stacks_.find(thread);
  if (found == stacks_.end())
    return Frame{};
  const auto& frames = found->second.frames;
  for (auto it = frames.rbegin(); it != frames.rend(); ++it)
    if (it->since < record)
      return *it;
  return Frame{};
}

std::uint64_t AdviceState::call_of(const Frame& frame) noexcept {
  // Outside every region each event is a call of its own: the rules about
  // loops count repetitions there (numbered apart from the recorder's).
  return frame.node == 0 ? (std::uint64_t(1) << 63) | next_call_++
                         : frame.call;
}

void AdviceState::on_region_push(const RegionPush& push, bool counted) {
  ++records_;
  allocation_point();
  Stack& stack = stacks_[push.thread];
  const Frame top = stack.frames.empty() ? Frame{} : stack.frames.back();
  stack.calls.push_back(push.region.call);
  // A region inside the region or phase of its own name (or a recursive
  // one) is the same call, of the same node, as in a budget.
  if (top.node != 0 && top.name == push.region.name) {
    stack.frames.push_back(top);
    return;
  }
  const std::uint32_t node = push.region.node;
  if (counted) {
    if (calls_.size() <= node)
      calls_.resize(node + 1);
    ++calls_[node];
  }
  stack.frames.push_back(
      {node, push.region.name, push.region.call, records_});
}

void AdviceState::on_region_pop(const RegionPop& pop) {
  ++records_;
  const auto found = stacks_.find(pop.thread);
  if (found == stacks_.end())
    return;
  Stack& stack = found->second;
  for (std::size_t i = stack.calls.size(); i-- > 0;) {
    if (stack.calls[i] == pop.region.call) {
      stack.calls.erase(stack.calls.begin() + static_cast<long>(i));
      stack.frames.erase(stack.frames.begin() + static_cast<long>(i));
      return;
    }
  }
}

bool AdviceState::fresh_destination(const void* pointer, std::uint64_t since) {
  if (allocations_.empty() || pointer == nullptr)
    return false;
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  RecentAllocation& recent = recent_allocation_;
  if (recent.generation != allocation_generation_ || address < recent.lowest ||
      address >= recent.highest) {
    // The allocation with the greatest start at or below the address.
    auto it = allocations_.upper_bound(address);
    recent = RecentAllocation{};
    recent.highest = it == allocations_.end() ? ~std::uintptr_t(0) : it->first;
    if (it == allocations_.begin())
      return false; // below every allocation: not cached
    --it;
    recent.generation = allocation_generation_;
    recent.lowest = it->first;
    recent.start = it->first;
    recent.nbytes = it->second.first;
    recent.made = it->second.second;
  }
  return address - recent.start < recent.nbytes + header_slack &&
         recent.made > since;
}

void AdviceState::add_pair(
    std::unordered_map<PairKey, PairStats, PairKeyHash>& pairs,
    std::uint32_t thread, const Leg& first, const RawEvent& second,
    std::uint32_t second_description, std::uint32_t label) {
  const Frame scope = common_frame(thread, first.record);
  const PairKey key{scope.node, first.site, second.site, label, first.kind};
  auto found = pairs.find(key);
  if (found == pairs.end()) {
    allocation_point();
    found = pairs.try_emplace(key).first;
    found->second.order = next_order_++;
    found->second.first_description = first.description;
    found->second.second_description = second_description;
  }
  PairStats& pair = found->second;
  ++pair.count;
  pair.bytes += first.nbytes + second.nbytes;
  pair.seconds += first.seconds + second.duration;
  pair.per_call.add(call_of(scope));
  if (first.stats != nullptr)
    ++first.stats->legs;
}

void AdviceState::track_round_trip(const RawEvent& event, SiteStats& stats,
                                   LastCopy& last) {
  const bool down = event.kind == EventKind::to_host;
  const void* const device = down ? event.src_ptr : event.dst_ptr;
  const void* const host = down ? event.dst_ptr : event.src_ptr;
  // A copy back of what the other direction left waiting: a round trip
  // (unless a DualView's syncs made them, a ping-pong counted apart).
  auto& waiting = down ? ups_ : downs_;
  const auto found = waiting.find(down ? device : host);
  if (found != waiting.end() && found->second.waiting) {
    const Leg first = found->second;
    found->second.waiting = false;
    if (!first.dual_view) {
      add_pair(round_trips_, event.region_thread, first, event,
               event.description, 0);
      ++stats.legs;
    }
    return; // a copy that ends a round trip starts none
  }
  auto& mine = down ? downs_ : ups_;
  LastLeg& written = down ? last_down_ : last_up_;
  const void* const key = down ? host : device;
  Leg* entry = written.leg;
  if (entry == nullptr || written.key != key) {
    // Not the buffer of the last copy this way: looked up, or added.
    if (mine.size() >= max_tracked) {
      // Ended round trips go first; the waiting ones only if they fill it.
      written = LastLeg{};
      for (auto it = mine.begin(); it != mine.end();)
        it = it->second.waiting ? std::next(it) : mine.erase(it);
      if (mine.size() >= max_tracked / 2)
        mine.clear();
    }
    allocation_point();
    entry = &mine[key];
    written = LastLeg{key, entry};
  }
  // Written in place: a Leg built apart and copied made an 8-byte copy
  // with advice 7% slower (bench_recorder), more than the lookup saves.
  *entry = Leg{records_,   event.site,   event.description,
               event.kind, event.nbytes, event.duration,
               &stats,     false,        true};
  last.registered = key;
  last.registered_up = !down;
}

AdviceState::SiteStats& AdviceState::site_stats(const SiteKey& key,
                                                std::uint32_t description) {
  RecentSite& recent = recent_sites_[key.site % recent_sites];
  if (recent.stats != nullptr && recent.key == key)
    return *recent.stats;
  auto found = sites_.find(key);
  if (found == sites_.end()) {
    allocation_point();
    found = sites_.try_emplace(key).first;
    found->second.order = next_order_++;
    found->second.description = description;
  }
  recent = {key, &found->second};
  return found->second;
}

void AdviceState::on_event(const RawEvent& event, const RecorderLock& lock) {
  ++records_;
  if (event.kind != EventKind::to_host && event.kind != EventKind::to_device &&
      event.kind != EventKind::sync)
    return; // device copies and markers cost no transfer
  const Frame frame = current(event.region_thread);
  SiteKey key;
  key.node = frame.node;
  key.site = event.site;
  key.kind = event.kind;
  key.flags = (event.blocking ? blocking_flag : 0) |
              (event.implicit ? implicit_flag : 0) |
              (event.scalar ? scalar_flag : 0);
  if (event.kind == EventKind::sync) {
    key.description = event.description;
  } else {
    key.host_space =
        event.kind == EventKind::to_host ? event.dst_space : event.src_space;
    key.size_class = size_class(event.nbytes);
  }
  SiteStats& stats = site_stats(key, event.description);
  if (event.kind != EventKind::sync)
    learn_space(key.host_space, lock);
  ++stats.count;
  stats.bytes += event.nbytes;
  stats.min_bytes = std::min(stats.min_bytes, event.nbytes);
  stats.max_bytes = std::max(stats.max_bytes, event.nbytes);
  stats.seconds += event.duration;
  stats.per_call.add(call_of(frame));
  const std::uint64_t previous = stats.last_record;
  stats.last_record = records_;
  if (event.kind == EventKind::sync)
    return;

  const bool fresh = event.kind == EventKind::to_host &&
                     fresh_destination(event.dst_ptr, previous);
  if (fresh) {
    ++stats.fresh;
    stats.fresh_bytes += event.nbytes;
    stats.fresh_seconds += event.duration;
  }
  if (event.content != Content::not_checked) {
    ++stats.checked;
    if (event.content == Content::unchanged) {
      ++stats.unchanged;
      stats.unchanged_bytes += event.nbytes;
      stats.unchanged_seconds += event.duration;
    }
  }
  if (event.blocking && event.duration > 0.0 && event.nbytes > 0) {
    const double bandwidth = static_cast<double>(event.nbytes) / event.duration;
    const std::uint8_t size = size_class(event.nbytes);
    if (space_memory(key.host_space) == HostMemory::page_locked) {
      double& best = pinned_[event.kind == EventKind::to_host ? 0 : 1][size];
      best = std::max(best, bandwidth);
    } else if (event.kind == EventKind::to_host && !fresh) {
      reused_[size] = std::max(reused_[size], bandwidth);
    }
  }

  if (event.thread >= last_copies_.size()) {
    allocation_point();
    last_copies_.resize(event.thread + 1);
  }
  LastCopy& last = last_copies_[event.thread];
  last = LastCopy{};
  last.valid = true;
  last.record = records_;
  last.kind = event.kind;
  last.site = event.site;
  last.description = event.description;
  last.nbytes = event.nbytes;
  last.seconds = event.duration;
  last.device =
      event.kind == EventKind::to_device ? event.dst_ptr : event.src_ptr;
  last.stats = &stats;
  if (event.dst_ptr != nullptr && event.src_ptr != nullptr)
    track_round_trip(event, stats, last);
}

void AdviceState::on_dual_view(const DualViewEvent& event) {
  ++records_;
  if (!event.sync)
    return;
  const Frame frame = current(event.region_thread);
  const SyncKey key{frame.node, event.label, event.site, event.device};
  auto found = syncs_.find(key);
  if (found == syncs_.end()) {
    allocation_point();
    found = syncs_.try_emplace(key).first;
    found->second.order = next_order_++;
  }
  SyncStats& sync = found->second;
  if (!event.copied) {
    ++sync.idle;
    sync.idle_calls.add(call_of(frame));
    return;
  }
  ++sync.copied;
  // Kokkos reports a sync right after the copy it made, on its thread.
  Leg leg;
  leg.record = records_;
  leg.site = event.site;
  leg.kind = event.copy_kind;
  leg.nbytes = event.nbytes;
  leg.dual_view = true;
  const void* device = event.device ? event.pointer : event.source;
  if (event.thread < last_copies_.size() && last_copies_[event.thread].valid) {
    LastCopy& last = last_copies_[event.thread];
    leg.record = last.record;
    leg.description = last.description;
    leg.seconds = last.seconds;
    leg.stats = last.stats;
    device = last.device;
    if (last.registered != nullptr) {
      auto& waiting = last.registered_up ? ups_ : downs_;
      if (const auto it = waiting.find(last.registered); it != waiting.end())
        it->second.dual_view = true;
    }
    last.valid = false;
  }
  if (dual_views_.size() >= max_tracked && !dual_views_.count(device))
    dual_views_.clear();
  allocation_point();
  DualViewTrack& track = dual_views_[device];
  if (track.label == 0 || event.device)
    track.label = event.label;
  Leg& other = event.device ? track.to_host : track.to_device;
  bool& has_other = event.device ? track.has_to_host : track.has_to_device;
  if (has_other) {
    RawEvent second;
    second.site = leg.site;
    second.nbytes = leg.nbytes;
    second.duration = leg.seconds;
    add_pair(ping_pongs_, event.region_thread, other, second,
             leg.description, track.label);
    if (leg.stats != nullptr)
      ++leg.stats->legs;
    has_other = false;
    return;
  }
  (event.device ? track.to_device : track.to_host) = leg;
  (event.device ? track.has_to_device : track.has_to_host) = true;
}

void AdviceState::on_allocation(const Allocation& allocation) {
  ++records_;
  const auto address = reinterpret_cast<std::uintptr_t>(allocation.pointer);
  ++allocation_generation_;
  if (allocation.freed) {
    allocations_.erase(address);
    return;
  }
  if (allocations_.size() >= 4 * max_tracked)
    allocations_.clear();
  allocation_point();
  allocations_[address] = {allocation.nbytes, records_};
}

void AdviceState::clear() {
  const bool contents = contents_;
  const auto spaces = std::move(space_memory_);
  *this = AdviceState(contents);
  space_memory_ = std::move(spaces);
}

HostMemory AdviceState::space_memory(std::uint32_t id) const {
  return id < space_memory_.size() ? static_cast<HostMemory>(space_memory_[id])
                                   : HostMemory::unknown;
}

void AdviceState::learn_space(std::uint32_t id, const RecorderLock& lock) {
  if (id < space_memory_.size() && space_memory_[id] != unknown_space)
    return;
  if (id >= space_memory_.size()) {
    allocation_point();
    space_memory_.resize(id + 1, unknown_space);
  }
  space_memory_[id] = static_cast<std::uint8_t>(
      host_memory(Recorder::instance().strings(lock).view(id)));
}

namespace {

/// What a finding's rule needs to read from the state.
struct Reader {
  const RecorderLock& lock;
  const AdviceOptions& options;
  const std::vector<std::uint64_t>& node_calls;
  std::vector<std::string> paths;

  std::string text(std::uint32_t id) const {
    return std::string(Recorder::instance().strings(lock).view(id));
  }
  FindingSite site(std::uint32_t site, std::uint32_t description,
                   EventKind kind) const {
    return {Recorder::instance().sites(lock).resolve(site), text(description),
            kind};
  }
  std::uint64_t region_calls(std::uint32_t node, std::uint64_t count) const {
    return node == 0 ? count : node < node_calls.size() ? node_calls[node] : 0;
  }
  /// A pattern in at least min_calls calls, and in at least half of them.
  bool repeated(std::uint64_t calls, std::uint64_t region_calls) const {
    return calls >= options.min_calls && 2 * calls >= region_calls;
  }
  /// `calls`: the calls it happened in (outside every region, the times).
  Finding start(AdviceRule rule, std::uint32_t node, std::uint64_t calls,
                std::uint64_t count) const {
    Finding finding;
    finding.rule = rule;
    finding.region = paths[node];
    finding.calls = calls;
    finding.region_calls = region_calls(node, calls);
    finding.count = count;
    return finding;
  }
};

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

/// The best bandwidth of a table of size classes, from `minimum` bytes up.
double best_from(const double (&table)[65], std::uint64_t minimum) {
  double best = 0.0;
  for (std::size_t c = 0; c < 65; ++c)
    if (class_floor(c) >= minimum)
      best = std::max(best, table[c]);
  return best;
}

bool is_debug_sync(const std::string& what) {
  return what.rfind("debug_sync(", 0) == 0;
}

} // namespace

std::vector<Finding> AdviceState::findings(const AdviceOptions& options,
                                           const RecorderLock& lock) const {
  Reader reader{lock, options, calls_, {}};
  const RegionTree& tree = Recorder::instance().regions(lock);
  reader.paths.resize(tree.size());
  for (std::uint32_t i = 1; i < tree.size(); ++i) {
    const std::string name = reader.text(tree.node(i).name);
    const std::uint32_t parent = tree.node(i).parent;
    reader.paths[i] = parent == 0 ? name : reader.paths[parent] + "/" + name;
  }
  // The bandwidth of page-locked copies: set, or the best blocking one of
  // the run (a direction without one takes the other's).
  double pinned[2] = {options.pinned_bandwidth, options.pinned_bandwidth};
  const bool pinned_set = options.pinned_bandwidth > 0.0;
  if (!pinned_set) {
    for (int d = 0; d < 2; ++d)
      pinned[d] = best_from(pinned_[d], options.pageable_min_bytes);
    if (pinned[0] == 0.0)
      pinned[0] = pinned[1];
    if (pinned[1] == 0.0)
      pinned[1] = pinned[0];
  }
  const std::string pinned_source =
      pinned_set ? "as set (pinned_bandwidth, CUNUMPY_ADVISE_PINNED_MBPS)"
                 : "the best page-locked copy of this run";
  const double reused = best_from(reused_, options.pageable_min_bytes);

  std::vector<std::pair<std::uint64_t, Finding>> made;
  const auto keep = [&](std::uint64_t order, Finding finding) {
    const bool exempt = finding.rule == AdviceRule::dual_view_idle_sync;
    const double weight =
        finding.saving_seconds ? *finding.saving_seconds : finding.seconds;
    if (exempt || weight >= options.min_saving_seconds)
      made.emplace_back(order, std::move(finding));
  };

  for (const auto& entry : sites_) {
    // Named references, not structured bindings: lambdas below capture
    // them (C++17 does not allow capturing a structured binding).
    const auto& key = entry.first;
    const auto& stats = entry.second;
    const std::uint64_t calls =
        key.node == 0 ? stats.count : stats.per_call.calls;
    const std::uint64_t region_calls = reader.region_calls(key.node, calls);
    const bool repeated = reader.repeated(calls, region_calls);
    const bool blocking = (key.flags & blocking_flag) != 0;
    const auto common = [&](AdviceRule rule) {
      Finding finding = reader.start(rule, key.node, calls, stats.count);
      finding.sites.push_back(
          reader.site(key.site, stats.description, key.kind));
      finding.bytes = stats.bytes;
      finding.seconds = stats.seconds;
      return finding;
    };
    if (key.kind == EventKind::sync) {
      if ((key.flags & implicit_flag) == 0 || (key.flags & scalar_flag) != 0 ||
          !repeated)
        continue; // a scalar read's wait is its read's (blocking_small_read)
      const std::string name = reader.text(key.description);
      if (is_debug_sync(name))
        continue; // debug-sync mode's own waits
      Finding finding = common(AdviceRule::implicit_sync);
      finding.evidence =
          std::to_string(stats.count) + " wait(s) Kokkos made on its own (" +
          name + ") " + per_call_text(finding) + ", " +
          time_text(stats.seconds / static_cast<double>(stats.count)) + " each";
      finding.estimate = "the time the host waited";
      set_saving(finding, stats.seconds);
      finding.fix =
          "let the work overlap instead of waiting here: "
          "Kokkos::deep_copy(exec, dst, src) on an execution space instance, "
          "a reduction into a device view, and one fence (exec.fence()) "
          "where the result is needed";
      keep(stats.order, std::move(finding));
      continue;
    }
    // A copy that is one leg of a round trip or a DualView ping-pong is
    // reported there: removing the pair removes it.
    if (2 * stats.legs >= stats.count)
      continue;
    const bool small = stats.max_bytes <= options.small_bytes;
    const double each = stats.seconds / static_cast<double>(stats.count);
    if (small && key.node != 0 && stats.count >= options.many_copies * calls) {
      Finding finding = common(AdviceRule::many_small_copies);
      const double per_call =
          static_cast<double>(stats.count) / static_cast<double>(calls);
      finding.evidence = printf_text("%.0f", per_call) + " copies " +
                         direction_text(key.kind) + " of at most " +
                         bytes_text(stats.max_bytes) + " per call " +
                         per_call_text(finding) + ", " + time_text(each) +
                         " each";
      finding.estimate = "one packed copy per call instead of " +
                         printf_text("%.0f", per_call) +
                         ", each costing what one copy costs now";
      set_saving(finding, stats.seconds - each * static_cast<double>(calls));
      finding.fix = "pack the values into one view and copy it once per "
                    "call (one Kokkos::deep_copy of the packed view, or one "
                    "cunumpy::to_host of it)";
      keep(stats.order, std::move(finding));
    } else if (small && blocking && key.kind == EventKind::to_host &&
               repeated) {
      Finding finding = common(AdviceRule::blocking_small_read);
      finding.evidence = std::to_string(stats.count) + " blocking read(s) of " +
                         bytes_text(stats.max_bytes) + " " +
                         per_call_text(finding) + ", " + time_text(each) +
                         " each, the host waiting for the device";
      finding.estimate =
          "the time the host waited in the reads; on a GPU the device also "
          "idles while the host launches the next iteration, which is not "
          "counted here";
      set_saving(finding, stats.seconds);
      finding.fix = "read it with cunumpy::to_host_async (xp.to_host_async) "
                    "and use the value one iteration late, so the host never "
                    "waits for the iteration it has just queued";
      keep(stats.order, std::move(finding));
    }

    const HostMemory memory = space_memory(key.host_space);
    const bool fresh_pattern = key.kind == EventKind::to_host &&
                               stats.min_bytes >= options.fresh_min_bytes &&
                               stats.fresh >= options.min_calls &&
                               2 * stats.fresh >= stats.count;
    if (fresh_pattern) {
      Finding finding = common(AdviceRule::fresh_host_buffer);
      finding.count = stats.fresh;
      finding.bytes = stats.fresh_bytes;
      finding.seconds = stats.fresh_seconds;
      const double bandwidth =
          static_cast<double>(stats.fresh_bytes) / stats.fresh_seconds;
      finding.evidence =
          std::to_string(stats.fresh) + " of " + std::to_string(stats.count) +
          " copies to the host of " + bytes_text(stats.min_bytes) +
          (stats.max_bytes != stats.min_bytes
               ? " to " + bytes_text(stats.max_bytes)
               : std::string()) +
          " went into a host buffer allocated since the copy before, at " +
          bandwidth_text(bandwidth);
      const double reference = std::max(pinned[0], reused);
      if (reference > 0.0) {
        finding.estimate =
            "at " + bandwidth_text(reference) + " (" +
            (reference == pinned[0] ? pinned_source
                                    : "the best copy into a reused buffer of "
                                      "this run") +
            ") they would take " +
            time_text(static_cast<double>(stats.fresh_bytes) / reference);
        set_saving(finding,
                   stats.fresh_seconds -
                       static_cast<double>(stats.fresh_bytes) / reference);
      } else {
        finding.estimate = "no copy into a reused or page-locked buffer of at "
                           "least " +
                           bytes_text(options.pageable_min_bytes) +
                           " to compare with in this run";
      }
      finding.fix = "copy into one buffer allocated once: a "
                    "cunumpy::HostStaging (xp.memory.HostStaging) keeps a "
                    "page-locked buffer and reuses it for every copy";
      if (!finding.saving_seconds || *finding.saving_seconds > 0.0)
        keep(stats.order, std::move(finding));
    } else if (blocking && memory == HostMemory::pageable &&
               stats.min_bytes >= options.pageable_min_bytes) {
      const double reference = pinned[key.kind == EventKind::to_host ? 0 : 1];
      const double bandwidth = static_cast<double>(stats.bytes) / stats.seconds;
      Finding finding = common(AdviceRule::pageable_memory);
      finding.evidence = std::to_string(stats.count) + " copies " +
                         direction_text(key.kind) +
                         (key.kind == EventKind::to_host ? " into" : " from") +
                         " pageable memory (" + reader.text(key.host_space) +
                         ") of " + bytes_text(stats.min_bytes) +
                         (stats.max_bytes != stats.min_bytes
                              ? " to " + bytes_text(stats.max_bytes)
                              : std::string()) +
                         ", " + bytes_text(stats.bytes) + " in all at " +
                         bandwidth_text(bandwidth);
      if (reference > 0.0) {
        finding.estimate =
            "through page-locked memory at " + bandwidth_text(reference) +
            " (" + pinned_source + ") they would take " +
            time_text(static_cast<double>(stats.bytes) / reference);
        set_saving(finding, stats.seconds -
                                static_cast<double>(stats.bytes) / reference);
      } else {
        finding.estimate = "no blocking page-locked copy of at least " +
                           bytes_text(options.pageable_min_bytes) +
                           " in this run to compare with; set pinned_bandwidth "
                           "(CUNUMPY_ADVISE_PINNED_MBPS) to this machine's";
      }
      finding.fix = "copy through page-locked memory: a cunumpy::HostStaging "
                    "(xp.memory.HostStaging) reused for every copy, "
                    "cunumpy::pin_memory (xp.cuda.pin_memory), or a mirror in "
                    "Kokkos::SharedHostPinnedSpace (CudaHostPinnedSpace, "
                    "HIPHostPinnedSpace)";
      if (!finding.saving_seconds || *finding.saving_seconds > 0.0)
        keep(stats.order, std::move(finding));
    }

    if (stats.unchanged > 0) {
      Finding finding = common(AdviceRule::redundant_copy);
      finding.count = stats.unchanged;
      finding.bytes = stats.unchanged_bytes;
      finding.seconds = stats.unchanged_seconds;
      const bool up = key.kind == EventKind::to_device;
      finding.evidence =
          std::to_string(stats.unchanged) + " of " +
          std::to_string(stats.checked) + " copies " +
          direction_text(key.kind) + " (" + bytes_text(stats.unchanged_bytes) +
          ") " +
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
      keep(stats.order, std::move(finding));
    }
  }

  const auto pair_findings = [&](const auto& pairs, AdviceRule rule) {
    for (const auto& [key, pair] : pairs) {
      const std::uint64_t calls =
          key.node == 0 ? pair.count : pair.per_call.calls;
      if (!reader.repeated(calls, reader.region_calls(key.node, calls)))
        continue;
      Finding finding = reader.start(rule, key.node, calls, 2 * pair.count);
      const EventKind second_kind = key.first_kind == EventKind::to_host
                                        ? EventKind::to_device
                                        : EventKind::to_host;
      finding.sites.push_back(
          reader.site(key.first_site, pair.first_description, key.first_kind));
      finding.sites.push_back(
          reader.site(key.second_site, pair.second_description, second_kind));
      finding.bytes = pair.bytes;
      finding.seconds = pair.seconds;
      const std::string way = key.first_kind == EventKind::to_device
                                  ? "to the device and back"
                                  : "to the host and back";
      const std::string each =
          bytes_text(pair.bytes / (2 * pair.count)) + " each way";
      if (rule == AdviceRule::round_trip) {
        finding.evidence =
            "the same allocation went " + way + " " + per_call_text(finding) +
            ", " + each + ", " +
            time_text(pair.seconds / static_cast<double>(pair.count)) +
            " per round trip";
        finding.fix =
            "keep the data where the loop uses it: convert once before the "
            "loop (cunumpy::to_device, xp.to_cunumpy) and once after it "
            "(cunumpy::to_host, xp.to_numpy), inside only when the host "
            "needs it (output every N steps)";
      } else {
        finding.evidence =
            "DualView '" + reader.text(key.label) + "' synced " + way + " " +
            per_call_text(finding) + ", " + each + ", " +
            time_text(pair.seconds / static_cast<double>(pair.count)) +
            " per call";
        finding.fix = "sync the DualView once before the loop and once after "
                      "it; inside, work on one side and call modify_device() "
                      "(modify_host()) only where that side is written";
      }
      finding.estimate = "every pair but one, at the boundaries";
      set_saving(finding, pair.seconds * static_cast<double>(pair.count - 1) /
                              static_cast<double>(pair.count));
      keep(pair.order, std::move(finding));
    }
  };
  pair_findings(round_trips_, AdviceRule::round_trip);
  pair_findings(ping_pongs_, AdviceRule::dual_view_ping_pong);

  for (const auto& [key, sync] : syncs_) {
    const std::uint64_t calls =
        key.node == 0 ? sync.idle : sync.idle_calls.calls;
    if (sync.copied > 0 ||
        !reader.repeated(calls, reader.region_calls(key.node, calls)))
      continue;
    Finding finding = reader.start(AdviceRule::dual_view_idle_sync, key.node,
                                   calls, sync.idle);
    const std::string label = reader.text(key.label);
    finding.sites.push_back(
        {Recorder::instance().sites(lock).resolve(key.site),
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
    keep(sync.order, std::move(finding));
  }

  const auto group = [](const Finding& f) {
    if (!f.saving_seconds)
      return 1;
    return *f.saving_seconds > 0.0 ? 0 : 2;
  };
  std::stable_sort(made.begin(), made.end(), [&](const auto& a, const auto& b) {
    const Finding& x = a.second;
    const Finding& y = b.second;
    if (group(x) != group(y))
      return group(x) < group(y);
    const double wx = x.saving_seconds ? *x.saving_seconds : x.seconds;
    const double wy = y.saving_seconds ? *y.saving_seconds : y.seconds;
    if (wx != wy)
      return wx > wy;
    return a.first < b.first;
  });
  std::vector<Finding> result;
  result.reserve(made.size());
  for (auto& entry : made)
    result.push_back(std::move(entry.second));
  return result;
}

} // namespace Impl
} // namespace cunumpy
