#ifndef CUNUMPY_TRANSFER_ERROR_HPP
#define CUNUMPY_TRANSFER_ERROR_HPP

#include <stdexcept>
#include <string>

namespace cunumpy {

/// Thrown when a transfer rule is broken: by `assert_no_transfers` when a
/// host/device copy happened, and by `TransferBudget::check` when a phase
/// broke its rule. `what()` is the full report, with the offending call sites.
class TransferError : public std::runtime_error {
public:
  explicit TransferError(const std::string& report)
      : std::runtime_error(report) {}
};

} // namespace cunumpy

#endif
