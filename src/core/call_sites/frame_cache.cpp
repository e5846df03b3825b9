#include "call_sites/frame_cache.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include "call_sites/call_sites.hpp"
#include "support/environment.hpp"
#include "support/excerpt.hpp"

namespace cunumpy::Impl {
namespace {

constexpr const char* format_name = "cunumpy frame cache 2";
/// Larger files are not read: no module has that many call sites.
constexpr off_t max_file_bytes = off_t(64) << 20;

/// Makes `directory` and its missing parents, private to the user.
bool make_directories(const std::string& directory) {
  for (std::size_t slash = directory.find('/', 1);;
       slash = directory.find('/', slash + 1)) {
    const std::string part = directory.substr(0, slash);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST)
      return false;
    if (slash == std::string::npos)
      return true;
  }
}

/// A directory of this user that no one else may write: nobody can put
/// lines in it that reports would then show.
std::string unusable(const std::string& directory) {
  if (!make_directories(directory))
    return std::strerror(errno);
  struct stat info {};
  if (::stat(directory.c_str(), &info) != 0)
    return std::strerror(errno);
  if (!S_ISDIR(info.st_mode))
    return "not a directory";
  if (info.st_uid != ::geteuid())
    return "owned by another user";
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return "writable by others";
  return {};
}

} // namespace

FrameCache::Location FrameCache::from_environment() {
  Location location;
  if (const auto named = environment("CUNUMPY_SITE_CACHE")) {
    if (*named == "0" || *named == "off")
      return location;
    location.directory = *named;
    location.asked = true;
  } else if (const auto cache = environment("XDG_CACHE_HOME");
             cache && (*cache)[0] == '/') {
    location.directory = *cache + "/cunumpy";
  } else if (const auto home = environment("HOME"); home && (*home)[0] == '/') {
    location.directory = *home + "/.cache/cunumpy";
  }
  while (location.directory.size() > 1 && location.directory.back() == '/')
    location.directory.pop_back();
  // Relative: from the directory the program started in (it is read when
  // the recorder is made), as CUNUMPY_REPORT is.
  if (!location.directory.empty() && location.directory[0] != '/') {
    char here[4096];
    if (::getcwd(here, sizeof here) != nullptr)
      location.directory = std::string(here) + "/" + location.directory;
  }
  return location;
}

FrameCache::FrameCache(Location location) : location_(std::move(location)) {}

bool FrameCache::usable() {
  if (usable_ < 0) {
    const std::string why =
        location_.directory.empty() ? "off" : unusable(location_.directory);
    usable_ = why.empty() ? 1 : 0;
    if (!why.empty() && location_.asked)
      warn("CUNUMPY_SITE_CACHE: cannot use '" +
           excerpt(location_.directory, 256) + "' (" + why +
           "); call sites are read from debug information at every run");
  }
  return usable_ == 1;
}

std::string FrameCache::path_of(const std::string& build_id) const {
  return location_.directory + "/" + build_id + ".sites.json";
}

void FrameCache::read(const std::string& path, const std::string& build_id,
                      Entries& entries) noexcept {
  try {
    read_file(path, build_id, entries);
  } catch (...) {
    // A file of the right shape but wrong types (nlohmann::json throws on
    // them): ignored like any other that is not the format.
  }
}

void FrameCache::read_file(const std::string& path, const std::string& build_id,
                           Entries& entries) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return;
  struct stat info {};
  const bool regular = ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) &&
                       info.st_size <= max_file_bytes;
  std::string text;
  if (regular) {
    text.resize(static_cast<std::size_t>(info.st_size));
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
      if (n <= 0)
        break;
      done += static_cast<std::size_t>(n);
    }
    text.resize(done);
  }
  ::close(fd);
  // Anything but a whole file of the format is ignored, and replaced at
  // the next save.
  const auto json = nlohmann::json::parse(text, nullptr, false);
  const auto text_of = [&json](const char* key) {
    const auto it = json.find(key);
    return it != json.end() && it->is_string() ? it->get<std::string>()
                                               : std::string();
  };
  if (json.is_discarded() || !json.is_object() ||
      text_of("format") != format_name || text_of("build_id") != build_id)
    return; // another format, or the file of another build under this name
  const auto found = json.find("addresses");
  if (found == json.end() || !found->is_object())
    return;
  Entries kept;
  for (const auto& [key, frames] : found->items()) {
    char* end = nullptr;
    const unsigned long long offset = std::strtoull(key.c_str(), &end, 16);
    if (key.empty() || *end != '\0' || !frames.is_array() || frames.empty())
      return;
    std::vector<SourceFrame> parsed;
    for (const auto& frame : frames) {
      if (!frame.is_array() || frame.size() != 4 || !frame[0].is_string() ||
          !frame[1].is_string() || !frame[2].is_number_integer() ||
          !frame[3].is_string())
        return;
      SourceFrame source;
      source.module = frame[0].get<std::string>();
      source.file = frame[1].get<std::string>();
      source.line = frame[2].get<int>();
      source.function = frame[3].get<std::string>();
      source.offset = static_cast<std::uintptr_t>(offset);
      parsed.push_back(std::move(source));
    }
    if (kept.size() < max_entries)
      kept.emplace(static_cast<std::uintptr_t>(offset), std::move(parsed));
  }
  for (auto& [offset, frames] : kept)
    entries.try_emplace(offset, std::move(frames));
}

FrameCache::File& FrameCache::file(const std::string& build_id) {
  auto found = files_.find(build_id);
  if (found != files_.end())
    return found->second;
  File& made = files_[build_id];
  read(path_of(build_id), build_id, made.entries);
  return made;
}

const std::vector<SourceFrame>* FrameCache::find(const std::string& build_id,
                                                 std::uintptr_t offset) {
  if (build_id.empty() || !usable())
    return nullptr;
  const Entries& entries = file(build_id).entries;
  const auto found = entries.find(offset);
  return found == entries.end() ? nullptr : &found->second;
}

void FrameCache::store(const std::string& build_id, std::uintptr_t offset,
                       const std::vector<SourceFrame>& frames) {
  if (build_id.empty() || frames.empty() || !usable())
    return;
  File& kept = file(build_id);
  if (kept.entries.size() >= max_entries)
    return;
  if (kept.entries.emplace(offset, frames).second)
    kept.dirty = true;
}

void FrameCache::save() noexcept {
  try {
    static std::atomic<unsigned> serial{0};
    for (auto& [build_id, kept] : files_) {
      if (!kept.dirty)
        continue;
      kept.dirty = false;
      const std::string path = path_of(build_id);
      read(path, build_id, kept.entries); // what other runs added meanwhile
      nlohmann::json addresses = nlohmann::json::object();
      for (const auto& [offset, frames] : kept.entries) {
        nlohmann::json list = nlohmann::json::array();
        for (const SourceFrame& frame : frames)
          list.push_back(
              {frame.module, frame.file, frame.line, frame.function});
        char key[32];
        std::snprintf(key, sizeof key, "%zx", static_cast<std::size_t>(offset));
        addresses[key] = std::move(list);
      }
      const std::string text =
          nlohmann::json{{"format", format_name},
                         {"build_id", build_id},
                         {"addresses", std::move(addresses)}}
              .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      const std::string aside = location_.directory + "/." + build_id + "." +
                                std::to_string(::getpid()) + "." +
                                std::to_string(serial++) + ".tmp";
      const int fd =
          ::open(aside.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd < 0)
        continue;
      std::size_t done = 0;
      while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n <= 0)
          break;
        done += static_cast<std::size_t>(n);
      }
      const bool written = ::close(fd) == 0 && done == text.size();
      if (!written || ::rename(aside.c_str(), path.c_str()) != 0)
        ::unlink(aside.c_str());
    }
  } catch (...) {
    // The cache stays as it was; the sites of this run are in its report.
  }
}

} // namespace cunumpy::Impl
