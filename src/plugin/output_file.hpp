#ifndef CUNUMPY_SRC_PLUGIN_OUTPUT_FILE_HPP
#define CUNUMPY_SRC_PLUGIN_OUTPUT_FILE_HPP

// The report and the trace replace what their file held. Opened without
// O_TRUNC and cut to what was written when closed: on ext4 a file
// truncated to zero and written again is flushed to disk at close
// (auto_da_alloc), 0.12 ms of CPU time per run for the 23 KB report of
// an earlier run (docs/performance.md); written over and cut, it is
// written back later like any other file.

#include <cstdio>
#include <string>

namespace cunumpy::plugin {

/// `path` opened for writing, made if missing (0666 less the umask), its
/// old content kept until close_replacing; nullptr with errno set.
std::FILE* open_replacing(const std::string& path);

/// Flushes `file`, cuts it at what was written and closes it; false with
/// errno set when any of it failed (the file is closed either way).
bool close_replacing(std::FILE* file);

} // namespace cunumpy::plugin

#endif
