// For LD_PRELOAD: open() of the path in SLOW_OPEN_PATH waits SLOW_OPEN_SECONDS
// (1 when unset) before it opens, as a file on a hung network file system,
// or a FIFO swapped in after a check, makes it wait. Other paths open at
// once. Lets the tests see what waits for a debug file being opened.

#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

namespace {

using Open = int (*)(const char*, int, ...);

int open_slowly(Open real, const char* path, int flags, mode_t mode) {
  const char* slow = std::getenv("SLOW_OPEN_PATH");
  if (slow != nullptr && path != nullptr && std::strcmp(path, slow) == 0) {
    const char* seconds = std::getenv("SLOW_OPEN_SECONDS");
    ::sleep(seconds != nullptr ? static_cast<unsigned>(std::atoi(seconds))
                               : 1u);
  }
  return real(path, flags, mode);
}

mode_t mode_of(int flags, va_list arguments) {
  return (flags & (O_CREAT | O_TMPFILE)) != 0
             ? static_cast<mode_t>(va_arg(arguments, int))
             : 0;
}

} // namespace

extern "C" int open(const char* path, int flags, ...) {
  va_list arguments;
  va_start(arguments, flags);
  const mode_t mode = mode_of(flags, arguments);
  va_end(arguments);
  static const auto real = reinterpret_cast<Open>(::dlsym(RTLD_NEXT, "open"));
  return open_slowly(real, path, flags, mode);
}

extern "C" int open64(const char* path, int flags, ...) {
  va_list arguments;
  va_start(arguments, flags);
  const mode_t mode = mode_of(flags, arguments);
  va_end(arguments);
  static const auto real = reinterpret_cast<Open>(::dlsym(RTLD_NEXT, "open64"));
  return open_slowly(real, path, flags, mode);
}
