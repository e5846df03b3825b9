#ifndef CUNUMPY_SRC_SUPPORT_FILE_KIND_HPP
#define CUNUMPY_SRC_SUPPORT_FILE_KIND_HPP

// What a path is, checked before cunumpy opens or loads it: opening a FIFO
// blocks until a writer comes, reading a device such as /dev/zero never
// ends, and dlopen does both.

#include <string>
#include <sys/stat.h>

namespace cunumpy::Impl {

/// "" for a regular file; otherwise what it is: "a directory", "a FIFO
/// (named pipe)", "a character device", "a block device", "a socket".
std::string not_regular(const struct stat& info);

/// Before dlopen: "" when `path` may be loaded (a regular file, a path that
/// does not exist, which dlopen reports itself, or a name without a slash,
/// which the loader searches for); otherwise why not ("is a FIFO (named
/// pipe), not a library").
std::string library_file_problem(const std::string& path);

} // namespace cunumpy::Impl

#endif
