#include <cunumpy/event.hpp>

namespace cunumpy {

std::string_view to_string(EventKind kind) noexcept {
  switch (kind) {
  case EventKind::to_host:
    return "to_host";
  case EventKind::to_device:
    return "to_device";
  case EventKind::device_copy:
    return "device_copy";
  case EventKind::kernel_conversion:
    return "kernel_conversion";
  case EventKind::fallback:
    return "fallback";
  case EventKind::sync:
    return "sync";
  case EventKind::migration:
    return "migration";
  case EventKind::kokkos_own:
    return "kokkos_own";
  }
  return "unknown";
}

std::string_view to_string(MemoryKind kind) noexcept {
  switch (kind) {
  case MemoryKind::pageable:
    return "pageable";
  case MemoryKind::pinned:
    return "pinned";
  case MemoryKind::device:
    return "device";
  case MemoryKind::managed:
    return "managed";
  case MemoryKind::array:
    return "array";
  case MemoryKind::unknown:
    break;
  }
  return "unknown";
}

std::optional<EventKind> parse_event_kind(std::string_view name) noexcept {
  for (EventKind kind : all_event_kinds)
    if (to_string(kind) == name)
      return kind;
  return std::nullopt;
}

std::string CallSite::str() const {
  if (file.empty())
    return "<unknown>";
  std::string text = line <= 0 ? file : file + ":" + std::to_string(line);
  if (!python.empty())
    text += " (from " + python + ")";
  if (!native.empty())
    text += " (in " + native + ")";
  return text;
}

} // namespace cunumpy
