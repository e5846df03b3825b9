#include "report/format.hpp"

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "support/excerpt.hpp"

namespace cunumpy::Impl {

using profiling::KindTable;
using profiling::KindTotals;

namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

} // namespace

std::uint64_t transfers(const KindTable& totals) noexcept {
  std::uint64_t sum = 0;
  for (EventKind kind : all_event_kinds)
    if (is_transfer(kind))
      sum += totals[index_of(kind)].count;
  return sum;
}

std::uint64_t host_device_transfers(const KindTable& totals) noexcept {
  std::uint64_t sum = 0;
  for (EventKind kind : all_event_kinds)
    if (is_host_device_transfer(kind))
      sum += totals[index_of(kind)].count;
  return sum;
}

std::string unchecked_text(const profiling::DeviceStatus& device) {
  if (!device.unchecked)
    return {};
  return device.reason + "; nothing was checked: " + device.fix;
}

std::vector<std::string>
site_problems(const std::vector<profiling::SiteSummary>& summaries) {
  std::vector<std::string> problems;
  for (const profiling::SiteSummary& summary : summaries) {
    const std::string& problem = summary.site.problem;
    if (!problem.empty() &&
        std::find(problems.begin(), problems.end(), problem) == problems.end())
      problems.push_back(problem);
  }
  return problems;
}

std::string format_site_line(const profiling::SiteSummary& summary) {
  // A migration CUDA's record reports has no call site: its bytes say more.
  // Names come from the program (labels, file names): a control character
  // in one must not start a line of its own.
  std::string line =
      summary.kind == EventKind::migration && !summary.site.known()
          ? printable(summary.what) + " (x" + std::to_string(summary.count) +
                "), " + std::to_string(summary.nbytes) + " bytes"
          : printable(summary.site.str()) + ": " + printable(summary.what) +
                " (x" + std::to_string(summary.count) + ")";
  if (summary.async)
    line += " [async]";
  if (summary.implicit)
    line += " [implicit]";
  if (summary.source != "kokkos") // seen by another source only
    line += " [" + printable(summary.source) + "]";
  return line;
}

std::string summary_line(const KindTable& totals) {
  const auto count = [&](EventKind kind) {
    return std::to_string(totals[index_of(kind)].count);
  };
  return std::to_string(transfers(totals)) + " transfer(s) through cunumpy (" +
         count(EventKind::to_host) + " to_host, " +
         count(EventKind::to_device) + " to_device, " +
         count(EventKind::kernel_conversion) + " kernel_conversion, " +
         count(EventKind::fallback) + " fallback, " +
         count(EventKind::device_copy) + " device_copy)" +
         migration_text(totals) + kokkos_own_text(totals);
}

std::string kokkos_own_text(const KindTable& totals) {
  const profiling::KindTotals& own = totals[index_of(EventKind::kokkos_own)];
  if (own.count == 0)
    return {};
  return "; Kokkos' own CUDA copies " + std::to_string(own.count) + " (" +
         std::to_string(own.nbytes) + " bytes, not transfers of the program)";
}

std::string migration_text(const KindTable& totals) {
  const profiling::KindTotals& migrations =
      totals[index_of(EventKind::migration)];
  if (migrations.count == 0)
    return {};
  return "; unified memory migrated " + std::to_string(migrations.nbytes) +
         " bytes (" + std::to_string(migrations.count) + " record(s))";
}

std::string printf_text(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string time_text(double seconds) {
  if (seconds >= 1.0)
    return printf_text("%.2f s", seconds);
  if (seconds >= 1e-3)
    return printf_text("%.2f ms", seconds * 1e3);
  if (seconds >= 1e-6)
    return printf_text("%.1f us", seconds * 1e6);
  return printf_text("%.0f ns", seconds * 1e9);
}

std::string bytes_text(std::uint64_t bytes) {
  const double value = static_cast<double>(bytes);
  if (bytes < 1024)
    return std::to_string(bytes) + " bytes";
  if (bytes < (std::uint64_t(1) << 20))
    return printf_text("%.1f KiB", value / 1024.0);
  if (bytes < (std::uint64_t(1) << 30))
    return printf_text("%.1f MiB", value / 1048576.0);
  return printf_text("%.2f GiB", value / 1073741824.0);
}

std::string bandwidth_text(double bytes_per_second) {
  return printf_text("%.1f GB/s", bytes_per_second / 1e9);
}

std::string quoted_list(const std::vector<std::string>& names,
                        std::size_t limit) {
  std::string text;
  const std::size_t shown = std::min(limit, names.size());
  for (std::size_t i = 0; i < shown; ++i)
    text += (i == 0 ? "'" : ", '") + names[i] + "'";
  if (names.size() > shown)
    text += " and " + std::to_string(names.size() - shown) + " more";
  return text;
}

std::string closest_names(const std::string& name,
                          std::vector<std::string> names, std::size_t limit) {
  std::stable_sort(names.begin(), names.end(),
                   [&](const std::string& a, const std::string& b) {
                     return edit_distance(name, a) < edit_distance(name, b);
                   });
  return quoted_list(names, limit);
}

} // namespace cunumpy::Impl
