#include "support/process_info.hpp"

#include <cerrno>
#include <charconv>
#include <ctime>
#include <fcntl.h>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace cunumpy::Impl {
namespace {

/// The first `limit` bytes of a file of /proc (whose sizes are 0 to
/// stat), or nothing when it cannot be read.
std::optional<std::string> read_proc_file(const std::string& path,
                                          std::size_t limit = 65536) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  std::string text;
  char buffer[4096];
  while (text.size() < limit) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      break;
    text.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(fd);
  if (text.size() > limit)
    text.resize(limit);
  return text;
}

/// The fields of /proc/<pid>/stat after the command's name (which may hold
/// spaces and parentheses): [0] the state, [1] the parent's pid, ...
std::vector<std::string_view> stat_fields(std::string_view stat) {
  std::vector<std::string_view> fields;
  const std::size_t name_end = stat.rfind(')');
  if (name_end == std::string_view::npos)
    return fields;
  std::string_view rest = stat.substr(name_end + 1);
  while (!rest.empty()) {
    const std::size_t start = rest.find_first_not_of(" \n");
    if (start == std::string_view::npos)
      break;
    rest.remove_prefix(start);
    const std::size_t end = rest.find_first_of(" \n");
    fields.push_back(rest.substr(0, end));
    rest =
        end == std::string_view::npos ? std::string_view() : rest.substr(end);
  }
  return fields;
}

std::optional<long long> number(std::string_view text) {
  long long value = 0;
  const auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0)
    return std::nullopt;
  return value;
}

bool printable(std::string_view text) {
  for (const char c : text)
    if (c <= ' ' || c > '~')
      return false;
  return true;
}

} // namespace

std::optional<std::string> hydra_control_port() {
  long long pid = static_cast<long long>(::getppid());
  for (int level = 0; level < 8 && pid > 1; ++level) {
    const std::string proc = "/proc/" + std::to_string(pid);
    if (const auto command_line = read_proc_file(proc + "/cmdline")) {
      // Arguments end with a NUL each.
      std::string_view rest = *command_line;
      bool next_is_port = false;
      while (!rest.empty()) {
        const std::size_t end = rest.find('\0');
        const std::string_view argument = rest.substr(0, end);
        if (next_is_port) {
          if (argument.empty() || argument.size() > 255 || !printable(argument))
            return std::nullopt;
          return std::string(argument);
        }
        next_is_port = argument == "--control-port";
        rest = end == std::string_view::npos ? std::string_view()
                                             : rest.substr(end + 1);
      }
    }
    const auto stat = read_proc_file(proc + "/stat", 4096);
    const std::vector<std::string_view> fields =
        stat ? stat_fields(*stat) : std::vector<std::string_view>();
    const auto parent = fields.size() > 1 ? number(fields[1]) : std::nullopt;
    if (!parent)
      return std::nullopt;
    pid = *parent;
  }
  return std::nullopt;
}

double wall_clock_now() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<double>(now.tv_sec) +
         1e-9 * static_cast<double>(now.tv_nsec);
}

double process_start_time() {
  static const double first_call = wall_clock_now();
  const auto stat = read_proc_file("/proc/self/stat", 4096);
  const long ticks = ::sysconf(_SC_CLK_TCK);
  const std::vector<std::string_view> fields =
      stat ? stat_fields(*stat) : std::vector<std::string_view>();
  // starttime, field 22 of proc(5) (the fields here start at field 3): clock
  // ticks after boot, on the clock CLOCK_BOOTTIME reads.
  const auto started = fields.size() > 19 ? number(fields[19]) : std::nullopt;
  timespec since_boot{};
  if (!started || ticks <= 0 ||
      ::clock_gettime(CLOCK_BOOTTIME, &since_boot) != 0)
    return first_call;
  const double now = wall_clock_now();
  const double age = static_cast<double>(since_boot.tv_sec) +
                     1e-9 * static_cast<double>(since_boot.tv_nsec) -
                     static_cast<double>(*started) / static_cast<double>(ticks);
  return age >= 0 ? now - age : first_call;
}

} // namespace cunumpy::Impl
