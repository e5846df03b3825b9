#ifndef CUNUMPY_SRC_PROCESS_INFO_HPP
#define CUNUMPY_SRC_PROCESS_INFO_HPP

// What /proc says of this process and the processes above it: where the
// launcher's environment names no launch (hydra), its proxy's command line
// does; when this process started, to tell launches apart in time.

#include <optional>
#include <string>

namespace cunumpy::Impl {

/// The value after "--control-port" on the command line of this process'
/// parent or an ancestor above it (at most 8 levels): the host:port of the
/// mpiexec of MPICH's hydra (also Intel MPI's and MVAPICH's mpiexec), which
/// its proxies on every node are given. Nothing when no ancestor has one or
/// /proc cannot be read; a value that is empty, longer than 255 characters
/// or not printable ASCII is taken for none.
std::optional<std::string> hydra_control_port();

/// When this process started (its fork; an exec keeps it), in seconds since
/// the epoch, to 1/100 s: /proc/self/stat's start after boot, on the clock
/// of CLOCK_BOOTTIME. The time of the first call when /proc cannot be read.
double process_start_time();

/// The time now, in seconds since the epoch.
double wall_clock_now();

} // namespace cunumpy::Impl

#endif
