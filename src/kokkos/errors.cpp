#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>

#include <cunumpy/as_device_array.hpp>
#include <cunumpy/impl/view_utilities.hpp>

namespace cunumpy::Impl {

void throw_unallocated(const char* function, const char* argument,
                       const std::string& label) {
  std::string message = std::string(function) + ": '" + argument + "'";
  if (!label.empty())
    message += " (view \"" + label + "\")";
  message += " is not allocated; construct the view with a label and extents "
             "(e.g. Kokkos::View<double*>(\"x\", n)) before converting it";
  throw std::invalid_argument(message);
}

void throw_allocation_too_large(const char* function, const char* argument,
                                const std::string& label,
                                const ArrayShape& shape, bool overflows) {
  std::string message = function;
  if (message.rfind("cunumpy::", 0) != 0)
    message = "cunumpy::" + message;
  message += ": '" + std::string(argument) + "'";
  if (!label.empty())
    message += " (view \"" + label + "\")";
  message += " has shape " + shape_string(shape) + " of " + shape.dtype;
  if (overflows)
    message += ", whose size in bytes overflows 64 bits";
  else
    message += ", more than the " +
               std::to_string(std::numeric_limits<std::ptrdiff_t>::max()) +
               " bytes an allocation can have";
  message += "; nothing was allocated: check the extents (an unmanaged view "
             "made with the wrong ones?)";
  if (overflows)
    throw std::invalid_argument(message);
  throw std::length_error(message);
}

void throw_no_device_backend(const char* function, const char* name) {
  throw std::runtime_error(
      std::string(function) + ": '" + name +
      "': this Kokkos build has no device backend (the default execution "
      "space is " +
      Kokkos::DefaultExecutionSpace::name() +
      "), and host data is never copied to a device by accident; use the host "
      "view directly, or pass a device memory space as the third template "
      "argument");
}

void throw_rank_mismatch(const char* function, const char* name, int rank,
                         int expected) {
  throw std::invalid_argument(std::string(function) + ": '" + name +
                              "' has rank " + std::to_string(rank) +
                              ", expected " + std::to_string(expected));
}

void throw_dtype_mismatch(const char* function, const char* name,
                          const char* dtype, const char* expected) {
  throw std::invalid_argument(std::string(function) + ": '" + name +
                              "' has dtype " + dtype +
                              ", which does not convert to " + expected);
}

} // namespace cunumpy::Impl
