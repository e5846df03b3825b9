#ifndef CUNUMPY_SRC_REPORT_FORMAT_HPP
#define CUNUMPY_SRC_REPORT_FORMAT_HPP

// How every report writes what it shows, in every front end: the summary
// line, a line per call site, lists of names. Plain data in, text out.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <cunumpy/transfer_counter.hpp>

namespace cunumpy::Impl {

constexpr std::size_t index_of(EventKind kind) noexcept {
  return static_cast<std::size_t>(kind);
}

/// Transfers and markers: every kind but sync.
std::uint64_t transfers(const profiling::KindTable& totals) noexcept;

/// "N transfer(s) through cunumpy (a to_host, b to_device, c
/// kernel_conversion, d fallback, e device_copy)": the first line of every
/// report.
std::string summary_line(const profiling::KindTable& totals);

/// The report of `summaries`: the summary line, then one section per kind
/// with a line per call site. `indent` prefixes every line.
std::string format_report(const profiling::KindTable& totals,
                          const std::vector<profiling::SiteSummary>& summaries,
                          const std::string& indent = "");

/// One report line for a site: "file:line: description (xN) [async]".
std::string format_site_line(const profiling::SiteSummary& summary);

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
