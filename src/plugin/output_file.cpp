#include "output_file.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cunumpy::plugin {

std::FILE* open_replacing(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0)
    return nullptr;
  std::FILE* file = ::fdopen(fd, "w");
  if (file == nullptr) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
  }
  return file;
}

bool close_replacing(std::FILE* file) {
  bool ok = std::fflush(file) == 0 && std::ferror(file) == 0;
  int saved = errno;
  struct stat info {};
  if (ok) {
    // Only a regular file is cut: a terminal, a pipe or /dev/null has no
    // old content (and ftruncate fails on it). A file that cannot be told
    // is a failure: its old tail might be left after the new text.
    ok = ::fstat(::fileno(file), &info) == 0;
    if (ok && S_ISREG(info.st_mode)) {
      const long end = std::ftell(file);
      ok =
          end >= 0 && ::ftruncate(::fileno(file), static_cast<off_t>(end)) == 0;
    }
    saved = errno;
  }
  if (std::fclose(file) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  // A write that failed earlier may have left no errno to tell.
  errno = !ok && saved == 0 ? EIO : saved;
  return ok;
}

} // namespace cunumpy::plugin
