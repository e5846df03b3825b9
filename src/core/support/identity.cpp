// The core's identity, for the front ends' check (support/identity.hpp).
#include "build_identity.hpp"

extern "C" __attribute__((visibility("default"))) const char*
cunumpy_core_identity() noexcept {
  return CUNUMPY_BUILD_IDENTITY;
}
