#include "recorder/recording.hpp"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>

#include <cunumpy/version.hpp>

#include "recorder/lock.hpp"
#include "recorder/recorder.hpp"
#include "support/environment.hpp"
#include "support/excerpt.hpp"
#include "support/process_info.hpp"

namespace cunumpy::Impl::recording {

std::atomic<bool> on{false};

namespace {

/// Addresses given ids, of each kind, at most: past that the recording is
/// cut (tens of MiB of tables).
constexpr std::uint32_t max_ids = 1u << 20;
/// What the line saying the recording was cut may take.
constexpr std::uint64_t cut_line_size = 512;
/// Lines gathered before a write to the file.
constexpr std::size_t write_size = 64 * 1024;

void append_escaped(std::string& out, std::string_view text) {
  // Printable ASCII as it is; every other byte (controls, UTF-8 or not) as
  // \u00XX, one code point per byte: names reach the replay byte for byte.
  static constexpr char hex[] = "0123456789abcdef";
  out += '"';
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte == '"' || byte == '\\') {
      out += '\\';
      out += c;
    } else if (byte >= 0x20 && byte < 0x7f) {
      out += c;
    } else {
      out += "\\u00";
      out += hex[byte >> 4];
      out += hex[byte & 15];
    }
  }
  out += '"';
}

void append_seconds(std::string& out, double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9f", seconds);
  out += text;
}

struct Allocation {
  std::uint64_t size = 0;
  std::uint32_t id = 0;
};

} // namespace

struct Sink {
  RecorderMutex mutex;
  Recorder* recorder = nullptr;
  std::string path;
  int fd = -1;
  std::string pending; ///< lines not yet written to the file
  std::uint64_t size = 0;
  std::uint64_t limit = 0;
  double last_time = 0.0;
  std::uint32_t threads = 0;
  std::map<std::uintptr_t, Allocation> allocations;
  std::uint32_t allocation_ids = 0;
  std::unordered_map<std::uintptr_t, std::uint32_t> addresses;
  std::uint32_t address_ids = 0;

  static Sink& instance() {
    static Sink* sink = new Sink(); // used until the process ends
    return *sink;
  }

  /// Writes what is pending; on failure says so once and stops.
  void flush() {
    std::size_t done = 0;
    while (fd >= 0 && done < pending.size()) {
      const ssize_t wrote =
          ::write(fd, pending.data() + done, pending.size() - done);
      if (wrote < 0 && errno == EINTR)
        continue;
      if (wrote <= 0) {
        warn("CUNUMPY_RECORD: writing '" + excerpt(path, 256) + "' failed (" +
             std::strerror(wrote < 0 ? errno : EIO) +
             "); the recording stops here, and a replay refuses it");
        close();
        break;
      }
      done += static_cast<std::size_t>(wrote);
    }
    pending.clear();
  }

  void close() {
    on.store(false, std::memory_order_relaxed);
    if (fd >= 0)
      ::close(fd);
    fd = -1;
  }

  std::string allocation_text(std::uint32_t id, std::uint64_t offset) {
    return "\"a" + std::to_string(id) + "+" + std::to_string(offset) + "\"";
  }

  /// The text of an address; false when there are too many to name.
  bool name(const Line::Pointer& pointer, std::string& out) {
    const auto address = reinterpret_cast<std::uintptr_t>(pointer.value);
    if (pointer.value == nullptr) {
      out = "null";
      return true;
    }
    if (pointer.allocation > 0) {
      // Kokkos allocated it: what it reported before there is gone.
      const std::uint64_t size = std::max<std::uint64_t>(pointer.size, 1);
      auto it = allocations.lower_bound(address);
      if (it != allocations.begin()) {
        auto before = std::prev(it);
        if (before->first + std::max<std::uint64_t>(before->second.size, 1) >
            address)
          it = before;
      }
      while (it != allocations.end() && it->first < address + size)
        it = allocations.erase(it);
      if (allocation_ids == max_ids)
        return false;
      allocations[address] = {pointer.size, ++allocation_ids};
      out = allocation_text(allocation_ids, 0);
      return true;
    }
    if (pointer.allocation < 0) {
      if (const auto found = allocations.find(address);
          found != allocations.end()) {
        out = allocation_text(found->second.id, 0);
        allocations.erase(found);
        return true;
      }
    } else if (auto it = allocations.upper_bound(address);
               it != allocations.begin()) {
      --it;
      if (address - it->first < std::max<std::uint64_t>(it->second.size, 1)) {
        out = allocation_text(it->second.id, address - it->first);
        return true;
      }
    }
    auto [found, made] = addresses.try_emplace(address, address_ids + 1);
    if (made) {
      if (address_ids == max_ids) {
        addresses.erase(found);
        return false;
      }
      ++address_ids;
    }
    out = "\"p" + std::to_string(found->second) + "\"";
    return true;
  }

  /// Ends the file with a line saying why it was cut.
  void cut(const std::string& why, std::uint32_t thread, double time) {
    std::string line = "{\"t\":";
    append_seconds(line, time);
    line += ",\"th\":" + std::to_string(thread) + ",\"ev\":\"cut\",\"reason\":";
    append_escaped(line, why);
    line += "}\n";
    pending += line;
    flush();
    close();
    warn("CUNUMPY_RECORD: the recording '" + excerpt(path, 256) +
         "' was cut: " + why + "; a replay refuses it");
  }
};

namespace {
thread_local std::int64_t thread_index = -1;
thread_local std::uint32_t depth = 0;
thread_local std::uint32_t inside = 0; ///< inputs being carried out
} // namespace

bool start(Recorder& recorder, const std::string& path, std::uint64_t limit,
           const Header& header, std::string& error) {
  Sink& sink = Sink::instance();
  const std::lock_guard lock(sink.mutex);
  if (sink.recorder != nullptr) {
    error = "a recording is already being written";
    return false;
  }
  // Not blocking on a FIFO made since the path was checked, and only a
  // regular file is written.
  const int fd = ::open(
      path.c_str(),
      O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0666);
  if (fd < 0) {
    error = std::strerror(errno);
    return false;
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    error = "it is not a regular file";
    return false;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  sink.recorder = &recorder;
  sink.path = path;
  sink.fd = fd;
  sink.limit = limit;
  std::string& line = sink.pending;
  line = "{\"format\":\"cunumpy-recording\",\"version\":" +
         std::to_string(format_version) + ",\"cunumpy_version\":";
  append_escaped(line, CUNUMPY_VERSION_STRING);
  char program[4096] = {};
  const ssize_t length =
      ::readlink("/proc/self/exe", program, sizeof program - 1);
  line += ",\"program\":";
  append_escaped(line, length > 0 ? std::string_view(program, length) : "");
  line += ",\"pid\":" + std::to_string(::getpid()) + ",\"started\":";
  append_seconds(line, wall_clock_now() - recorder.now());
  line += ",\"limit_bytes\":" + std::to_string(limit) + ",\"settings\":{";
  bool first = true;
  for (const auto& [name, value] : header.settings) {
    if (!first)
      line += ',';
    first = false;
    append_escaped(line, name);
    line += ':';
    append_escaped(line, value);
  }
  line += "},\"budget_file\":";
  if (header.budget)
    append_escaped(line, header.budget_name);
  else
    line += "null";
  line += ",\"budget\":";
  if (header.budget)
    append_escaped(line, *header.budget);
  else
    line += "null";
  line += "}\n";
  sink.size = line.size();
  sink.flush();
  if (sink.fd < 0) {
    error = "the first line could not be written";
    return false;
  }
  static bool fork_handlers = [] {
    // A child forked while a line is written would inherit the mutex
    // held; it writes nothing (the file is its parent's).
    ::pthread_atfork([] { Sink::instance().mutex.lock(); },
                     [] { Sink::instance().mutex.unlock(); },
                     [] {
                       Sink& child = Sink::instance();
                       child.pending.clear();
                       child.close();
                       child.mutex.unlock();
                     });
    return true;
  }();
  (void)fork_handlers;
  on.store(true, std::memory_order_release);
  return true;
}

void finish() noexcept {
  Sink& sink = Sink::instance();
  if (!active() || sink.mutex.held_by_this_thread())
    return;
  if (inside > 0) {
    // The process ends inside an input (exit from a signal handler): what
    // the recording says of it is more than what cunumpy did of it.
    warn("CUNUMPY_RECORD: the process ended while cunumpy handled an event, "
         "so the recording '" +
         excerpt(sink.path, 256) +
         "' has no end line, and a replay refuses it");
    const std::lock_guard lock(sink.mutex);
    sink.flush();
    sink.close();
    return;
  }
  Line("end").write();
  try {
    const std::lock_guard lock(sink.mutex);
    sink.flush();
    sink.close();
  } catch (...) {
  }
}

Line::Line(std::string_view event) : event_(event) {}

void Line::key(std::string_view name) {
  body_ += ',';
  append_escaped(body_, name);
  body_ += ':';
}

Line& Line::text(std::string_view name, std::string_view value) {
  key(name);
  append_escaped(body_, value);
  return *this;
}

Line& Line::text(std::string_view name, const char* value) {
  if (value != nullptr)
    return text(name, std::string_view(value));
  key(name);
  body_ += "null";
  return *this;
}

Line& Line::number(std::string_view name, std::uint64_t value) {
  key(name);
  body_ += std::to_string(value);
  return *this;
}

Line& Line::boolean(std::string_view name, bool value) {
  key(name);
  body_ += value ? "true" : "false";
  return *this;
}

Line& Line::seconds(std::string_view name, double value) {
  key(name);
  append_seconds(body_, value);
  return *this;
}

Line& Line::pointer(std::string_view name, const void* value) {
  key(name);
  pointers_.push_back({body_.size(), value});
  return *this;
}

Line& Line::allocation(std::string_view name, const void* base,
                       std::uint64_t size, bool freed) {
  key(name);
  pointers_.push_back({body_.size(), base, size, freed ? -1 : 1});
  return *this;
}

Line& Line::json(std::string_view name, std::string_view value) {
  key(name);
  body_ += value;
  return *this;
}

void Line::write() noexcept {
  if (!active())
    return;
  Sink& sink = Sink::instance();
  // A signal handler that interrupted a line and ends the process: the line
  // will never be finished, and neither will the file (no end line).
  if (sink.mutex.held_by_this_thread())
    return;
  try {
    const std::lock_guard lock(sink.mutex);
    if (sink.fd < 0)
      return;
    // Times only grow along the file, whatever core read the clock.
    const double time = std::max(sink.last_time, sink.recorder->now());
    sink.last_time = time;
    if (thread_index < 0)
      thread_index = sink.threads++;
    const auto thread = static_cast<std::uint32_t>(thread_index);
    std::string line = "{\"t\":";
    append_seconds(line, time);
    line += ",\"th\":" + std::to_string(thread);
    if (depth > 0)
      line += ",\"d\":" + std::to_string(depth);
    line += ",\"ev\":";
    append_escaped(line, event_);
    std::size_t copied = 0;
    std::string name;
    for (const Pointer& pointer : pointers_) {
      line.append(body_, copied, pointer.at - copied);
      copied = pointer.at;
      if (!sink.name(pointer, name)) {
        sink.cut("more than " + std::to_string(max_ids) +
                     " addresses or allocations to name",
                 thread, time);
        return;
      }
      line += name;
    }
    line.append(body_, copied, std::string::npos);
    line += "}\n";
    if (sink.size + line.size() + cut_line_size > sink.limit) {
      sink.cut("it reached its limit of " + std::to_string(sink.limit >> 20) +
                   " MiB (CUNUMPY_RECORD_LIMIT_MB)",
               thread, time);
      return;
    }
    sink.size += line.size();
    sink.pending += line;
    if (sink.pending.size() >= write_size)
      sink.flush();
  } catch (...) {
    // Out of memory: the recording cannot say what came; it stops, and
    // without its end line a replay refuses it.
    sink.close();
  }
}

void Object::key(std::string_view name) {
  if (text_.size() > 1)
    text_ += ',';
  append_escaped(text_, name);
  text_ += ':';
}

Object& Object::text(std::string_view name, std::string_view value) {
  key(name);
  append_escaped(text_, value);
  return *this;
}

Object& Object::number(std::string_view name, std::uint64_t value) {
  key(name);
  text_ += std::to_string(value);
  return *this;
}

Object& Object::seconds(std::string_view name, std::optional<double> value) {
  key(name);
  if (value)
    append_seconds(text_, *value);
  else
    text_ += "null";
  return *this;
}

std::string Object::take() {
  text_ += '}';
  return std::move(text_);
}

Nested::Nested() noexcept {
  ++depth;
}

Nested::~Nested() {
  --depth;
}

Inside::Inside() noexcept {
  ++inside;
}

Inside::~Inside() {
  --inside;
}

} // namespace cunumpy::Impl::recording
