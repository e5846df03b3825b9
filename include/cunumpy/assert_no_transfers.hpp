#ifndef CUNUMPY_ASSERT_NO_TRANSFERS_HPP
#define CUNUMPY_ASSERT_NO_TRANSFERS_HPP

#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <cunumpy/source_location.hpp>
#include <cunumpy/transfer_counter.hpp>
#include <cunumpy/transfer_error.hpp>

namespace cunumpy {
namespace Impl {
/// The message assert_no_transfers fails with (the same in C++, GoogleTest
/// and Python, written by the report's text renderer): `function`, what it
/// rejects, `where`, then `counter.report()`; "" when `counter` holds no
/// host/device transfer (is_host_device_transfer) and is complete().
std::string no_transfers_failure(const profiling::TransferCounter& counter,
                                 std::string_view function,
                                 SourceLocation where);
/// Throws TransferError with no_transfers_failure's message, if any.
void throw_if_transfers(const profiling::TransferCounter& counter,
                        SourceLocation where);
} // namespace Impl

namespace profiling {

/// Runs `f()` and returns its result; throws cunumpy::TransferError, whose
/// message is the transfer report, when `f` copied between host and device
/// (to_host, to_device) or ran host code on the device backend
/// (kernel_conversion, fallback), whoever made the copy. Device-only copies
/// (device_copy) and syncs are allowed. An exception thrown by `f` passes
/// through unchanged.
template <class F>
decltype(auto)
assert_no_transfers(F&& f, SourceLocation where = SourceLocation::current()) {
  TransferCounter counter(TransferCounter::default_max_events,
                          AdviceRecording::off); // counts are all it needs
  auto counted = count_transfers(counter);
  if constexpr (std::is_void_v<std::invoke_result_t<F>>) {
    std::forward<F>(f)();
    counted.stop();
    cunumpy::Impl::throw_if_transfers(counted.counter(), where);
  } else {
    decltype(auto) result = std::forward<F>(f)();
    counted.stop();
    cunumpy::Impl::throw_if_transfers(counted.counter(), where);
    return static_cast<std::invoke_result_t<F>>(result);
  }
}

} // namespace profiling
} // namespace cunumpy

#endif
