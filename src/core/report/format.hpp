#ifndef CUNUMPY_SRC_REPORT_FORMAT_HPP
#define CUNUMPY_SRC_REPORT_FORMAT_HPP

// How every report writes what it shows, in every front end: the summary
// line, a line per call site, lists of names. Plain data in, text out.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <cunumpy/budget_snapshot.hpp>
#include <cunumpy/transfer_counter.hpp>

namespace cunumpy::Impl {

constexpr std::size_t index_of(EventKind kind) noexcept {
  return static_cast<std::size_t>(kind);
}

/// The totals of `kind` in `totals`.
inline const profiling::KindTotals&
kind_totals(const profiling::KindTable& totals, EventKind kind) noexcept {
  return totals[index_of(kind)];
}

/// The count of the kinds that are transfers (is_transfer).
std::uint64_t transfers(const profiling::KindTable& totals) noexcept;

/// The count of the kinds assert_no_transfers rejects
/// (is_host_device_transfer).
std::uint64_t
host_device_transfers(const profiling::KindTable& totals) noexcept;

/// Why a count checked nothing: "<reason>; nothing was checked: <fix>"
/// when `device.unchecked`, else "".
std::string unchecked_text(const profiling::DeviceStatus& device);

/// "N transfer(s) through cunumpy (a to_host, b to_device, c
/// kernel_conversion, d fallback, e device_copy)": the first line of every
/// report, followed by migration_text and kokkos_own_text.
std::string summary_line(const profiling::KindTable& totals);

/// "; unified memory migrated B bytes (N record(s))", or "" without
/// migrations.
std::string migration_text(const profiling::KindTable& totals);

/// "; Kokkos' own CUDA copies N (B bytes, not transfers of the program)", or
/// "" without any.
std::string kokkos_own_text(const profiling::KindTable& totals);

/// Why the sites of `summaries` lack a line, once per module
/// (CallSite::problem), in order of appearance.
std::vector<std::string>
site_problems(const std::vector<profiling::SiteSummary>& summaries);

/// One report line for a site: "file:line: description (xN) [async]",
/// `[cuda]` for an event only CUDA's record saw; a migration without a call
/// site: "description (xN), B bytes".
std::string format_site_line(const profiling::SiteSummary& summary);

/// `value` written by snprintf's `format` ("%.2f").
std::string printf_text(const char* format, double value);
/// A duration for people: "3.10 s", "1.25 ms", "52.0 us", "80 ns".
std::string time_text(double seconds);
/// A size for people: "800 bytes", "781.2 KiB", "64.0 MiB", "1.50 GiB".
std::string bytes_text(std::uint64_t bytes);
/// "12.5 GB/s".
std::string bandwidth_text(double bytes_per_second);

/// "'a', 'b', 'c' and 7 more": at most `limit` names, quoted.
std::string quoted_list(const std::vector<std::string>& names,
                        std::size_t limit = 10);

/// The names in `names` closest to `name` first (edit distance), as
/// quoted_list writes them.
std::string closest_names(const std::string& name,
                          std::vector<std::string> names,
                          std::size_t limit = 10);

} // namespace cunumpy::Impl

#endif
