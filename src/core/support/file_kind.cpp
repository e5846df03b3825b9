#include "support/file_kind.hpp"

namespace cunumpy::Impl {

std::string not_regular(const struct stat& info) {
  if (S_ISREG(info.st_mode))
    return "";
  return S_ISDIR(info.st_mode)    ? "a directory"
         : S_ISFIFO(info.st_mode) ? "a FIFO (named pipe)"
         : S_ISCHR(info.st_mode)  ? "a character device"
         : S_ISBLK(info.st_mode)  ? "a block device"
         : S_ISSOCK(info.st_mode) ? "a socket"
                                  : "not a file";
}

std::string library_file_problem(const std::string& path) {
  if (path.find('/') == std::string::npos)
    return "";
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    return "";
  const std::string kind = not_regular(info);
  return kind.empty() ? "" : "is " + kind + ", not a library";
}

} // namespace cunumpy::Impl
