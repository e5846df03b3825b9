// The rules of advice (docs/advice.md): what is kept per event, and the
// findings made from it when they are asked for.

#include "consumers/advice.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "consumers/advice_rules.hpp"
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
    text +=
        (i == 0 ? " at " : ", then ") + Impl::printable(sites[i].site.str());
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

/// A GPU's memory space, whose copies can go through page-locked host
/// memory: Kokkos' Cuda, HIP and SYCL spaces.
bool is_gpu_space(std::string_view space) noexcept {
  for (std::string_view gpu : {"Cuda", "HIP", "SYCL"})
    if (space.substr(0, gpu.size()) == gpu)
      return true;
  return false;
}

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

AdviceState::Frame AdviceState::frame_of(std::uint32_t node, std::uint64_t call,
                                         const RecorderLock& lock) noexcept {
  return node == 0 ? Frame{} : Frame{lock.regions().node(node).call_node, call};
}

AdviceState::Frame
AdviceState::common_frame(std::uint32_t thread, std::uint64_t calls_begun,
                          const RecorderLock& lock) noexcept {
  const OpenRegions open = lock.open_regions(thread);
  for (const OpenRegion* region = open.end(); region != open.begin();) {
    --region;
    if (region->call <= calls_begun)
      return frame_of(region->node, region->call, lock);
  }
  return Frame{};
}

std::uint64_t AdviceState::call_of(const Frame& frame) noexcept {
  // Outside every region each event is a call of its own: the rules about
  // loops count repetitions there (numbered apart from the recorder's).
  return frame.node == 0 ? (std::uint64_t(1) << 63) | next_call_++ : frame.call;
}

void AdviceState::on_region_push(const RegionPush& push, bool counted,
                                 const RecorderLock& lock) {
  ++records_;
  if (!counted || push.region.continues)
    return;
  const std::uint32_t node = frame_of(push.region.node, 0, lock).node;
  if (calls_.size() <= node) {
    allocation_point();
    calls_.resize(node + 1);
  }
  ++calls_[node];
}

void AdviceState::on_region_pop(const RegionPop&) {
  ++records_;
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
    std::uint32_t second_description, std::uint32_t label,
    const RecorderLock& lock) {
  const Frame scope = common_frame(thread, first.calls_begun, lock);
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
                                   LastCopy& last, const RecorderLock& lock) {
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
               event.description, 0, lock);
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
  *entry = Leg{last.calls_begun, event.site,   event.description,
               event.kind,       event.nbytes, event.duration,
               &stats,           false,        true};
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
  const Frame frame = frame_of(event.node, event.call, lock);
  SiteKey key;
  key.node = frame.node;
  key.site = event.site;
  key.kind = event.kind;
  key.flags = (event.blocking ? blocking_flag : 0) |
              (event.implicit ? implicit_flag : 0) |
              (event.scalar ? scalar_flag : 0) |
              (event.allocation ? allocation_flag : 0);
  if (event.kind == EventKind::sync) {
    key.description = event.description;
  } else {
    key.host_space =
        event.kind == EventKind::to_host ? event.dst_space : event.src_space;
    key.size_class = size_class(event.nbytes);
    if (is_gpu_space(lock.strings().view(event.kind == EventKind::to_host
                                             ? event.src_space
                                             : event.dst_space)))
      key.flags |= gpu_flag;
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
  if (event.kind == EventKind::sync) {
    if (event.implicit) {
      last_wait_ = &stats;
      last_wait_record_ = records_;
      last_wait_thread_ = event.thread;
    }
    return;
  }

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
  last.calls_begun = lock.calls_begun();
  last.kind = event.kind;
  last.site = event.site;
  last.description = event.description;
  last.nbytes = event.nbytes;
  last.seconds = event.duration;
  last.device =
      event.kind == EventKind::to_device ? event.dst_ptr : event.src_ptr;
  last.stats = &stats;
  if (event.dst_ptr != nullptr && event.src_ptr != nullptr)
    track_round_trip(event, stats, last, lock);
}

void AdviceState::on_dual_view(const DualViewEvent& event,
                               const RecorderLock& lock) {
  ++records_;
  if (!event.sync)
    return;
  const Frame frame = frame_of(event.node, event.call, lock);
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
  leg.calls_begun = lock.calls_begun();
  leg.site = event.site;
  leg.kind = event.copy_kind;
  leg.nbytes = event.nbytes;
  leg.dual_view = true;
  const void* device = event.device ? event.pointer : event.source;
  if (event.thread < last_copies_.size() && last_copies_[event.thread].valid) {
    LastCopy& last = last_copies_[event.thread];
    leg.calls_begun = last.calls_begun;
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
    add_pair(ping_pongs_, event.region_thread, other, second, leg.description,
             track.label, lock);
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
    if (last_wait_ != nullptr && last_wait_record_ + 1 == records_ &&
        last_wait_thread_ == allocation.thread)
      ++last_wait_->deallocation_waits;
    last_wait_ = nullptr;
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
  space_memory_[id] =
      static_cast<std::uint8_t>(host_memory(lock.strings().view(id)));
}

namespace {

/// The best bandwidth of a table of size classes, from `minimum` bytes up.
double best_from(const double (&table)[65], std::uint64_t minimum) {
  double best = 0.0;
  for (std::size_t c = 0; c < 65; ++c)
    if (class_floor(c) >= minimum)
      best = std::max(best, table[c]);
  return best;
}

} // namespace

std::vector<Finding> AdviceState::findings(const AdviceOptions& options,
                                           const RecorderLock& lock) const {
  RuleInput input{*this,   sites_, round_trips_, ping_pongs_, syncs_, lock,
                  options, calls_, {},           {0.0, 0.0},  {},     0.0};
  const RegionTree& tree = lock.regions();
  input.paths.resize(tree.size());
  for (std::uint32_t i = 1; i < tree.size(); ++i) {
    const std::string name(lock.strings().view(tree.node(i).name));
    const std::uint32_t parent = tree.node(i).parent;
    input.paths[i] = parent == 0 ? name : input.paths[parent] + "/" + name;
  }
  // The bandwidth of page-locked copies: set, or the best blocking one of
  // the run (a direction without one takes the other's).
  const bool pinned_set = options.pinned_bandwidth > 0.0;
  for (int d = 0; d < 2; ++d)
    input.pinned[d] = pinned_set
                          ? options.pinned_bandwidth
                          : best_from(pinned_[d], options.pageable_min_bytes);
  if (input.pinned[0] == 0.0)
    input.pinned[0] = input.pinned[1];
  if (input.pinned[1] == 0.0)
    input.pinned[1] = input.pinned[0];
  input.pinned_source =
      pinned_set ? "as set (pinned_bandwidth, CUNUMPY_ADVISE_PINNED_MBPS)"
                 : "the best page-locked copy of this run";
  input.reused = best_from(reused_, options.pageable_min_bytes);

  Found found;
  for (const AdviceRuleEntry& rule : advice_rules)
    rule.find(input, found);

  // Below the saving threshold a finding is dropped, except an idle
  // DualView sync (it saves no copy time; it says a sync may be missing).
  const auto weight = [](const Finding& f) {
    return f.saving_seconds ? *f.saving_seconds : f.seconds;
  };
  found.erase(std::remove_if(found.begin(), found.end(),
                             [&](const auto& entry) {
                               const Finding& f = entry.second;
                               return f.rule !=
                                          AdviceRule::dual_view_idle_sync &&
                                      weight(f) < options.min_saving_seconds;
                             }),
              found.end());
  // A saving first, largest first; then findings without an estimate;
  // then those that save nothing. Ties: the order the sites were first
  // seen, then the rules' order.
  const auto group = [](const Finding& f) {
    if (!f.saving_seconds)
      return 1;
    return *f.saving_seconds > 0.0 ? 0 : 2;
  };
  std::sort(found.begin(), found.end(), [&](const auto& a, const auto& b) {
    const Finding& x = a.second;
    const Finding& y = b.second;
    if (group(x) != group(y))
      return group(x) < group(y);
    if (weight(x) != weight(y))
      return weight(x) > weight(y);
    if (a.first != b.first)
      return a.first < b.first;
    return x.rule < y.rule;
  });
  std::vector<Finding> result;
  result.reserve(found.size());
  for (auto& entry : found)
    result.push_back(std::move(entry.second));
  return result;
}

} // namespace Impl
} // namespace cunumpy
