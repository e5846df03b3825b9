#ifndef CUNUMPY_PLUGIN_TRACE_HPP
#define CUNUMPY_PLUGIN_TRACE_HPP

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <cunumpy/event.hpp>

#include "recorder/recorder.hpp"

namespace cunumpy::plugin {

/// A Chrome trace-event file (opens in Perfetto and chrome://tracing): one
/// slice per copy, fence, region and kernel, on the track of the thread that
/// made it, and an instant per DualView sync and modify. Every member is
/// used under the recorder's mutex.
class Trace final : public Impl::EventSink {
public:
  /// Asks the recorder for kernels while it lives.
  Trace(Impl::Recorder& recorder, std::string path, int rank);
  ~Trace() override;
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  void on_event(const Impl::RawEvent& event,
                const Impl::RecorderLock&) override;
  void on_region_pop(const Impl::RegionPop& pop,
                     const Impl::RecorderLock&) override;
  void on_dual_view(const Impl::DualViewEvent& event,
                    const Impl::RecorderLock&) override;
  void on_kernel(const Impl::KernelSpan& kernel,
                 const Impl::RecorderLock&) override;

  /// Writes the file, closing the regions still open at `end`
  /// (Recorder::open_regions). Returns an error message, or "" when
  /// written.
  std::string write(double end, const std::string& program,
                    const Impl::RecorderLock& lock);

  const std::string& path() const noexcept { return path_; }
  /// Slices not kept (max_slices), in the file written last.
  std::uint64_t dropped() const noexcept { return dropped_ + closing_dropped_; }

  /// Slices kept at most; later ones are counted as dropped.
  static constexpr std::size_t max_slices = std::size_t(1) << 20;

private:
  enum class Type : std::uint8_t { event, region, kernel, dual_view };
  struct Slice {
    Type type = Type::event;
    EventKind kind = EventKind::to_host;
    // Flags in one byte, so that a slice stays 56 bytes; zero unless set
    // (Slices::add value-initializes a slice).
    bool blocking : 1;
    bool implicit : 1;
    bool sync : 1;           ///< DualView: sync (else modify)
    bool device : 1;         ///< DualView: to / on the device
    bool copied : 1;         ///< DualView sync that copied
    std::uint8_t origin = 0; ///< RawEvent::origin: who reported it
    std::uint8_t memory = 0; ///< RawEvent::memory: the memory kinds
    std::uint32_t thread = 0;
    std::uint32_t name = 0; ///< label, region or kernel name
    std::uint32_t description = 0;
    std::uint32_t site = 0;
    std::uint32_t src_space = 0;
    std::uint32_t dst_space = 0;
    std::uint64_t nbytes = 0;
    double start = 0.0;
    double duration = 0.0;
  };
  static_assert(sizeof(Slice) == 56,
                "a slice stays small: a trace keeps up to 2^20 of them");
  bool keep() noexcept;
  /// A region's slice, from its push to `end`.
  static Slice region_slice(const Impl::OpenRegion& region,
                            std::uint32_t thread, double end);

  /// The slices, in chunks of 2 MiB mapped and filled in at once: growing
  /// never moves what is kept, as a vector's doubling would, and an event
  /// pays for new memory once per 37,449 slices (about a millisecond)
  /// instead of a page fault every 57 (which put 1% of a traced run's
  /// events above 3 us). No huge pages: where the system compacts memory to
  /// make one, an event can wait for tens of milliseconds.
  class Slices {
  public:
    Slices() = default;
    Slices(const Slices&) = delete;
    Slices& operator=(const Slices&) = delete;
    ~Slices();
    /// A new slice; throws std::bad_alloc when no memory can be mapped.
    Slice& add();
    std::size_t size() const noexcept { return size_; }
    template <class Visit> void for_each(Visit visit) const {
      for (std::size_t i = 0; i < size_; ++i)
        visit(chunks_[i / per_chunk][i % per_chunk]);
    }

    static constexpr std::size_t chunk_bytes = std::size_t(2) << 20;
    static constexpr std::size_t per_chunk = chunk_bytes / sizeof(Slice);

  private:
    std::vector<Slice*> chunks_;
    std::size_t size_ = 0;
  };

  Impl::Recorder& recorder_;
  std::string path_;
  int rank_;
  Slices slices_;
  std::uint64_t dropped_ = 0;
  std::uint64_t closing_dropped_ = 0; ///< regions still open, at write
};

} // namespace cunumpy::plugin

#endif
