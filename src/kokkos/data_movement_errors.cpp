// Errors of the data-movement API (pin_memory, DeviceMirror): each names the
// function, the argument and what to do.

#include <stdexcept>
#include <string>

#include <Kokkos_Core.hpp>

#include <cunumpy/device_mirror.hpp>
#include <cunumpy/pin_memory.hpp>

namespace cunumpy::Impl {
namespace {

std::string argument_text(const char* argument, const std::string& label) {
  std::string text = std::string("'") + argument + "'";
  if (!label.empty())
    text += " (view \"" + label + "\")";
  return text;
}

} // namespace

void throw_pin_memory_without_device(const char* argument,
                                     const std::string& label) {
  throw std::runtime_error(
      "cunumpy::pin_memory: " + argument_text(argument, label) +
      ": this Kokkos build has no device backend (the default execution "
      "space is " +
      Kokkos::DefaultExecutionSpace::name() +
      "), so there is no page-locked memory to copy into; use the host view "
      "as it is, or pin only where cunumpy::has_device_backend is true");
}

void throw_not_contiguous(const char* function, const char* argument,
                          const std::string& label) {
  throw std::invalid_argument(
      std::string(function) + ": " + argument_text(argument, label) +
      " is not contiguous (a padded allocation); pass a view without padding, "
      "e.g. an unmanaged view of the buffer or one made without "
      "Kokkos::AllowPadding");
}

} // namespace cunumpy::Impl
