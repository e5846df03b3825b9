#include "cuda/attribution.hpp"

#include <algorithm>

namespace cunumpy::Impl::cuda {
namespace {

/// Correlations of events gone on that are remembered.
constexpr std::size_t gone_kept = 1024;

std::string_view cause_text(MigrationCause cause) {
  switch (cause) {
  case MigrationCause::user:
    return "prefetch requested";
  case MigrationCause::coherence:
    return "page fault";
  case MigrationCause::prefetch:
    return "driver prefetch";
  case MigrationCause::eviction:
    return "eviction";
  case MigrationCause::access_counters:
    return "access counters";
  case MigrationCause::unknown:
    break;
  }
  return "cause unknown";
}

bool is_transfer(UnifiedMemoryCounter counter) {
  return counter == UnifiedMemoryCounter::bytes_to_device ||
         counter == UnifiedMemoryCounter::bytes_to_host ||
         counter == UnifiedMemoryCounter::bytes_device_to_device;
}

} // namespace

std::string migration_description(UnifiedMemoryCounter counter,
                                  MigrationCause cause) {
  std::string text = "unified memory ";
  switch (counter) {
  case UnifiedMemoryCounter::bytes_to_device:
    text += "host to device";
    break;
  case UnifiedMemoryCounter::bytes_to_host:
    text += "device to host";
    break;
  case UnifiedMemoryCounter::bytes_device_to_device:
    text += "device to device";
    break;
  case UnifiedMemoryCounter::gpu_page_fault:
    return text + "GPU page fault";
  case UnifiedMemoryCounter::cpu_page_fault:
    return text + "CPU page fault";
  case UnifiedMemoryCounter::thrashing:
    return text + "thrashing";
  case UnifiedMemoryCounter::throttling:
    return text + "throttling";
  case UnifiedMemoryCounter::remote_map:
    return text + "remote map";
  }
  return text + " (" + std::string(cause_text(cause)) + ")";
}

std::string_view space_name(MemoryKind kind) noexcept {
  switch (kind) {
  case MemoryKind::pageable:
    return "Host";
  case MemoryKind::pinned:
    return "CudaHostPinned";
  case MemoryKind::device:
    return "Cuda";
  case MemoryKind::managed:
    return "CudaUVM";
  case MemoryKind::array:
    return "CudaArray";
  case MemoryKind::unknown:
    break;
  }
  return "";
}

std::uint32_t Attribution::open(double start, double now) {
  std::uint32_t token = next_token_++;
  if (token == 0) // after 2**32 calls
    token = next_token_++;
  Pending& entry = pending_[token];
  entry.start = start;
  entry.opened = now;
  return token;
}

void Attribution::expect(std::uint32_t token, std::uint32_t correlation) {
  auto found = pending_.find(token);
  if (found == pending_.end())
    return;
  ++found->second.expected;
  alias(token, correlation);
}

void Attribution::alias(std::uint32_t token, std::uint32_t correlation) {
  auto found = pending_.find(token);
  if (found == pending_.end() || correlation == 0)
    return;
  found->second.correlations.push_back(correlation);
  tokens_[correlation] = token;
}

void Attribution::hold(std::uint32_t token, const RawEvent& event,
                       const RawEvent* wait, CopyDirection direction) {
  auto found = pending_.find(token);
  if (found == pending_.end())
    return;
  Pending& entry = found->second;
  entry.held = true;
  entry.event = event;
  entry.has_wait = wait != nullptr;
  if (wait != nullptr)
    entry.wait = *wait;
  entry.direction = direction;
}

void Attribution::cancel(std::uint32_t token) {
  auto found = pending_.find(token);
  if (found == pending_.end())
    return;
  forget(token, found->second);
  pending_.erase(found);
}

void Attribution::forget(std::uint32_t, Pending& entry) {
  for (std::uint32_t correlation : entry.correlations) {
    tokens_.erase(correlation);
    if (gone_.size() < gone_kept)
      gone_.push_back(correlation);
    else
      gone_[gone_next_++ % gone_kept] = correlation;
  }
}

void Attribution::on_copy(const CopyRecord& record) {
  ++stats_.copy_records;
  auto found = tokens_.find(record.correlation);
  if (found == tokens_.end() && record.runtime_correlation != 0)
    found = tokens_.find(record.runtime_correlation);
  if (found == tokens_.end()) {
    const bool gone = std::find(gone_.begin(), gone_.end(),
                                record.correlation) != gone_.end() ||
                      (record.runtime_correlation != 0 &&
                       std::find(gone_.begin(), gone_.end(),
                                 record.runtime_correlation) != gone_.end());
    ++(gone ? stats_.too_late : stats_.unmatched);
    return;
  }
  Pending& entry = pending_.at(found->second);
  ++stats_.described;
  if (entry.seen++ == 0) {
    entry.src = record.src;
    entry.dst = record.dst;
    if (entry.direction == CopyDirection::unknown)
      entry.direction = record.direction;
  }
  entry.record_bytes += record.bytes;
  if (record.end_ns > record.start_ns)
    entry.device_seconds +=
        static_cast<double>(record.end_ns - record.start_ns) * 1e-9;
}

void Attribution::on_unified_memory(const UnifiedMemoryRecord& record) {
  ++stats_.migration_records;
  if (is_transfer(record.counter))
    stats_.migrated_bytes += record.value;
  migrations_.push_back(record);
}

void Attribution::finish(Pending& entry, const Intern& intern,
                         std::vector<RawEvent>& out) {
  RawEvent event = entry.event;
  if (entry.seen == 0)
    ++stats_.without_record;
  if (event.origin == origin_) {
    // A CUDA copy: its kind and spaces are CUDA's.
    if (entry.direction == CopyDirection::host_to_host)
      return; // not a transfer after all
    EventKind kind = event.kind;
    if (!kind_of(entry.direction, kind)) {
      ++stats_.unknown_direction; // the CUDA view counts it as lost
      return;
    }
    if (event.kind != EventKind::kokkos_own) // Kokkos' own stays so
      event.kind = kind;
    if (event.nbytes == 0)
      event.nbytes = entry.record_bytes;
    if (entry.src != MemoryKind::unknown)
      event.src_space = intern(space_name(entry.src));
    if (entry.dst != MemoryKind::unknown)
      event.dst_space = intern(space_name(entry.dst));
  }
  event.late = true;
  event.set_memory(entry.src, entry.dst);
  event.set_device_seconds(entry.device_seconds);
  out.push_back(event);
  if (entry.has_wait) {
    RawEvent wait = entry.wait;
    wait.late = true;
    out.push_back(wait);
  }
}

void Attribution::release(double now, bool everything, const Intern& intern,
                          std::vector<RawEvent>& out) {
  const std::size_t first = out.size();
  for (const UnifiedMemoryRecord& record : migrations_) {
    RawEvent event;
    event.kind = EventKind::migration;
    event.blocking = false;
    event.thread = device_thread;
    event.region_thread = unplaced; // placed by its time (Recorder::catch_up)
    event.nbytes = is_transfer(record.counter) ? record.value : 0;
    event.description =
        intern(migration_description(record.counter, record.cause));
    const bool to_device =
        record.counter == UnifiedMemoryCounter::bytes_to_device;
    const bool to_host = record.counter == UnifiedMemoryCounter::bytes_to_host;
    if (is_transfer(record.counter)) {
      event.src_space = intern(to_device ? "Host" : "CudaUVM");
      event.dst_space = intern(to_host ? "Host" : "CudaUVM");
    }
    event.origin = origin_;
    event.late = true;
    event.set_memory(MemoryKind::managed, MemoryKind::managed);
    event.start = mapping_.seconds(record.start_ns);
    event.duration =
        record.end_ns > record.start_ns
            ? static_cast<double>(record.end_ns - record.start_ns) * 1e-9
            : 0.0;
    out.push_back(event);
  }
  migrations_.clear();
  for (auto it = pending_.begin(); it != pending_.end();) {
    Pending& entry = it->second;
    const bool waited_enough = now - entry.opened > max_wait;
    const bool complete = entry.held && entry.seen >= entry.expected;
    if (complete || (entry.held && (everything || waited_enough))) {
      finish(entry, intern, out);
      forget(it->first, entry);
      it = pending_.erase(it);
    } else if (!entry.held && now - entry.opened > 60.0) {
      // A call that never returned (its thread ended inside it).
      forget(it->first, entry);
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  std::stable_sort(
      out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
      [](const RawEvent& a, const RawEvent& b) { return a.start < b.start; });
}

double Attribution::oldest_pending(double now) const noexcept {
  double oldest = now;
  for (const auto& [token, entry] : pending_)
    oldest = std::min(oldest, entry.start);
  return oldest;
}

} // namespace cunumpy::Impl::cuda
