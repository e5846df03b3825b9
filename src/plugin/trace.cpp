#include "trace.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <set>
#include <sys/mman.h>

#include "output_file.hpp"
#include "report/json_writer.hpp"

namespace cunumpy::plugin {
namespace {

std::string json_string(std::string_view text) {
  std::string quoted;
  Impl::append_json_string(quoted, text);
  return quoted;
}

/// Microseconds, the trace format's unit.
std::string microseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", seconds * 1e6);
  return text;
}

} // namespace

Trace::Slices::~Slices() {
  for (Slice* chunk : chunks_)
    ::munmap(chunk, chunk_bytes);
}

Trace::Slice& Trace::Slices::add() {
  if (size_ == chunks_.size() * per_chunk) {
    chunks_.reserve(chunks_.size() + 1); // before mapping: nothing to leak
    void* mapped = ::mmap(nullptr, chunk_bytes, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED)
      throw std::bad_alloc();
    auto* chunk = static_cast<Slice*>(mapped);
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 // Linux 5.14; older kernels refuse it
#endif
    if (::madvise(chunk, chunk_bytes, MADV_POPULATE_WRITE) != 0)
      for (std::size_t offset = 0; offset < chunk_bytes; offset += 4096)
        reinterpret_cast<volatile char*>(chunk)[offset] = 0;
    chunks_.push_back(chunk);
  }
  Slice* slice = &chunks_[size_ / per_chunk][size_ % per_chunk];
  ++size_;
  return *new (slice) Slice();
}

Trace::Trace(Impl::Recorder& recorder, std::string path, int rank)
    : recorder_(recorder), path_(std::move(path)), rank_(rank) {
  recorder_.want_kernels(true);
}

bool Trace::keep() noexcept {
  if (slices_.size() < max_slices)
    return true;
  ++dropped_;
  return false;
}

Trace::~Trace() {
  recorder_.want_kernels(false);
}

void Trace::on_event(const Impl::RawEvent& event, const Impl::RecorderLock&) {
  if (!keep())
    return;
  Slice& slice = slices_.add();
  slice.type = Type::event;
  slice.kind = event.kind;
  slice.blocking = event.blocking;
  slice.implicit = event.implicit;
  slice.origin = event.origin;
  slice.memory = event.memory;
  slice.thread = event.thread;
  slice.name = event.label;
  slice.description = event.description;
  slice.site = event.site;
  slice.src_space = event.src_space;
  slice.dst_space = event.dst_space;
  slice.nbytes = event.nbytes;
  slice.start = event.start;
  slice.duration = event.duration;
}

void Trace::on_region_pop(const Impl::RegionPop& pop,
                          const Impl::RecorderLock&) {
  if (keep())
    slices_.add() = region_slice(pop.region, pop.thread, pop.time);
}

Trace::Slice Trace::region_slice(const Impl::OpenRegion& region,
                                 std::uint32_t thread, double end) {
  Slice slice{};
  slice.type = Type::region;
  slice.thread = thread;
  slice.name = region.name;
  slice.start = region.since;
  slice.duration = end - region.since;
  return slice;
}

void Trace::on_dual_view(const Impl::DualViewEvent& event,
                         const Impl::RecorderLock&) {
  if (!keep())
    return;
  Slice& slice = slices_.add();
  slice.type = Type::dual_view;
  slice.kind = event.copy_kind;
  slice.sync = event.sync;
  slice.device = event.device;
  slice.copied = event.copied;
  slice.thread = event.thread;
  slice.name = event.label;
  slice.site = event.site;
  slice.nbytes = event.nbytes;
  slice.start = event.time;
}

void Trace::on_kernel(const Impl::KernelSpan& kernel,
                      const Impl::RecorderLock&) {
  if (!keep())
    return;
  Slice& slice = slices_.add();
  slice.type = Type::kernel;
  slice.thread = kernel.thread;
  slice.name = kernel.name;
  slice.start = kernel.start;
  slice.duration = kernel.end - kernel.start;
}

std::string Trace::write(double end, const std::string& program,
                         const Impl::RecorderLock& lock) {
  // The regions still open close at `end` in this file, and stay open.
  std::vector<Slice> closing;
  closing_dropped_ = 0;
  for (const auto& still : lock.recorder().open_regions(lock)) {
    if (slices_.size() + closing.size() < max_slices)
      closing.push_back(region_slice(still.region, still.thread, end));
    else
      ++closing_dropped_;
  }
  std::FILE* out = open_replacing(path_);
  if (out == nullptr)
    return std::strerror(errno);
  const auto text = [&](std::uint32_t id) {
    return json_string(lock.strings().view(id));
  };
  const auto site = [&](std::uint32_t id) {
    return json_string(lock.sites().resolve(id).str());
  };
  const std::string pid = std::to_string(rank_);
  std::fprintf(out,
               "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"program\":%s,"
               "\"rank\":%d,\"dropped_slices\":%llu},\n\"traceEvents\":[\n",
               json_string(program).c_str(), rank_,
               static_cast<unsigned long long>(dropped()));
  std::fprintf(out,
               "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%s,\"tid\":0,"
               "\"args\":{\"name\":%s}}",
               pid.c_str(),
               json_string(program + " (rank " + pid + ")").c_str());
  std::set<std::uint32_t> threads;
  slices_.for_each([&](const Slice& slice) { threads.insert(slice.thread); });
  for (const Slice& slice : closing)
    threads.insert(slice.thread);
  for (std::uint32_t thread : threads) {
    // Unified-memory migrations are the device's, on a row of their own.
    const std::string name = thread == 0xffffffffu
                                 ? std::string("CUDA unified memory")
                                 : "host thread " + std::to_string(thread);
    std::fprintf(out,
                 ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%s,"
                 "\"tid\":%u,\"args\":{\"name\":\"%s\"}}",
                 pid.c_str(), thread, name.c_str());
  }
  const auto print = [&](const Slice& slice) {
    const std::string common = "\"pid\":" + pid +
                               ",\"tid\":" + std::to_string(slice.thread) +
                               ",\"ts\":" + microseconds(slice.start);
    switch (slice.type) {
    case Type::region:
      std::fprintf(out,
                   ",\n{\"name\":%s,\"cat\":\"region\",\"ph\":\"X\",%s,"
                   "\"dur\":%s}",
                   text(slice.name).c_str(), common.c_str(),
                   microseconds(slice.duration).c_str());
      break;
    case Type::kernel:
      std::fprintf(out,
                   ",\n{\"name\":%s,\"cat\":\"kernel\",\"ph\":\"X\",%s,"
                   "\"dur\":%s}",
                   text(slice.name).c_str(), common.c_str(),
                   microseconds(slice.duration).c_str());
      break;
    case Type::dual_view: {
      const std::string label(lock.strings().view(slice.name));
      const char* side = slice.device ? "device" : "host";
      const std::string name = std::string(slice.sync ? "DualView sync to "
                                                      : "DualView modify on ") +
                               side + " \"" + label + "\"";
      std::string args = "\"label\":" + json_string(label) + ",\"side\":\"" +
                         side + "\",\"site\":" + site(slice.site);
      if (slice.sync) {
        args += ",\"copied\":" + std::string(slice.copied ? "true" : "false");
        if (slice.copied)
          args += ",\"bytes\":" + std::to_string(slice.nbytes) +
                  ",\"direction\":\"" + std::string(to_string(slice.kind)) +
                  "\"";
      }
      std::fprintf(out,
                   ",\n{\"name\":%s,\"cat\":\"dual_view\",\"ph\":\"i\","
                   "\"s\":\"t\",%s,\"args\":{%s}}",
                   json_string(name).c_str(), common.c_str(), args.c_str());
      break;
    }
    case Type::event: {
      // Kokkos' own copies move bytes too: shown as copies of their kind.
      const bool copy =
          is_copy(slice.kind) || slice.kind == EventKind::kokkos_own;
      const std::string kind(to_string(slice.kind));
      const std::string label(lock.strings().view(slice.name));
      std::string name;
      const char* category = "marker";
      if (slice.kind == EventKind::sync) {
        category = "fence";
        name = label.empty() ? "sync" : label;
      } else if (slice.kind == EventKind::kokkos_own) {
        category = "kokkos_own";
        name = kind;
      } else if (copy) {
        category = "copy";
        name = kind + " \"" + label + "\"";
      } else {
        name = kind;
      }
      std::string args = "\"kind\":\"" + kind +
                         "\",\"site\":" + site(slice.site) +
                         ",\"what\":" + text(slice.description);
      if (copy)
        args += ",\"bytes\":" + std::to_string(slice.nbytes) +
                ",\"direction\":" +
                json_string(std::string(lock.strings().view(slice.src_space)) +
                            " -> " +
                            std::string(lock.strings().view(slice.dst_space))) +
                ",\"label\":" + json_string(label) +
                ",\"async\":" + (slice.blocking ? "false" : "true");
      if (slice.implicit)
        args += ",\"implicit\":true";
      Impl::RawEvent detail; // to read the packed memory kinds
      detail.memory = slice.memory;
      args += ",\"source\":" + json_string(lock.source_name(slice.origin));
      if (detail.src_memory() != MemoryKind::unknown ||
          detail.dst_memory() != MemoryKind::unknown)
        args += ",\"memory\":\"" + std::string(to_string(detail.src_memory())) +
                " -> " + std::string(to_string(detail.dst_memory())) + "\"";
      if (slice.kind == EventKind::migration)
        args += ",\"bytes\":" + std::to_string(slice.nbytes);
      std::fprintf(out,
                   ",\n{\"name\":%s,\"cat\":\"%s\",\"ph\":\"X\",%s,"
                   "\"dur\":%s,\"args\":{%s}}",
                   json_string(name).c_str(), category, common.c_str(),
                   microseconds(slice.duration).c_str(), args.c_str());
      break;
    }
    }
  };
  slices_.for_each(print);
  for (const Slice& slice : closing)
    print(slice);
  std::fprintf(out, "\n]}\n");
  if (!close_replacing(out))
    return std::strerror(errno);
  return {};
}

} // namespace cunumpy::plugin
