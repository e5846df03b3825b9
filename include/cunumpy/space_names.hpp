#ifndef CUNUMPY_SPACE_NAMES_HPP
#define CUNUMPY_SPACE_NAMES_HPP

// Memory spaces by name, as Kokkos Tools events name them. No Kokkos header
// is needed here, so code that only classifies names builds with any
// compiler.

#include <string>
#include <string_view>
#include <vector>

namespace cunumpy {

/// Which side of the host/device boundary a memory space is on.
enum class SpaceSide { host, device };

/// Makes the memory space called `name` (as Kokkos names it in its Tools
/// events, e.g. "FakeDevice") a device space. The environment variable
/// CUNUMPY_DEVICE_SPACES="FakeDevice,Other" does the same at start-up.
void register_device_space(std::string_view name);

/// The side of the memory space named `name`: "Cuda", "CudaUVM", "HIP",
/// "SYCLDeviceUSM", "OpenMPTargetSpace", ... and registered names are device
/// spaces; "Host", "CudaHostPinned", "HIPHostPinned", "SYCLHostUSM" and every
/// unknown name are host spaces.
SpaceSide space_side(std::string_view name);

/// The names added by register_device_space and CUNUMPY_DEVICE_SPACES.
std::vector<std::string> registered_device_spaces();

} // namespace cunumpy

#endif
