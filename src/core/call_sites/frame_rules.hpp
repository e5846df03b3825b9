#ifndef CUNUMPY_SRC_FRAME_RULES_HPP
#define CUNUMPY_SRC_FRAME_RULES_HPP

#include <cstdint>

namespace cunumpy::Impl {

/// How to step from one x86-64 frame to its caller, read from the DWARF call
/// frame information (.eh_frame) at one code address: the canonical frame
/// address (CFA) is %rsp or %rbp plus an offset, the return address is saved
/// at CFA + ra_offset, and %rbp is either unchanged or saved at CFA +
/// rbp_offset. These cover the frames compilers emit for ordinary code;
/// anything else (CFA expressions, realigned stacks, signal frames) is
/// `unsupported`, and the caller unwinds that stack the portable way.
struct FrameRule {
  enum class Kind : std::uint8_t { step, end_of_stack, unsupported };
  Kind kind = Kind::unsupported;
  bool cfa_from_rbp = false;
  bool rbp_saved = false;
  std::int32_t cfa_offset = 0;
  std::int32_t ra_offset = 0;
  std::int32_t rbp_offset = 0;
};

/// The rule that holds at `pc`, an address inside a function (a return
/// address minus one for callers). Reads the FDE libgcc finds for it; takes
/// a few microseconds, so callers cache the result per address.
FrameRule read_frame_rule(std::uintptr_t pc) noexcept;

} // namespace cunumpy::Impl

#endif
