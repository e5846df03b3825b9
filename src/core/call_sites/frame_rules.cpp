#include "call_sites/frame_rules.hpp"

#include <cstring>

// libgcc (and LLVM's libunwind) export the lookup every unwinder uses: the
// FDE that covers an address, found through PT_GNU_EH_FRAME. Weak, so that a
// runtime without it leaves the portable unwinder in charge.
extern "C" {
struct dwarf_eh_bases {
  void* tbase;
  void* dbase;
  void* func;
};
const void* _Unwind_Find_FDE(void* pc, dwarf_eh_bases* bases)
    __attribute__((weak));
}

namespace cunumpy::Impl {
namespace {

// DWARF register numbers on x86-64.
constexpr unsigned rbp_register = 6;
constexpr unsigned rsp_register = 7;
constexpr unsigned return_address_register = 16;

/// What a register's rule says, reduced to what the walk needs.
struct RegisterRule {
  enum class Kind : std::uint8_t { same_value, undefined, offset, other };
  Kind kind;
  std::int64_t offset;
};

struct CfaState {
  unsigned cfa_register = rsp_register;
  std::int64_t cfa_offset = 0;
  bool cfa_is_expression = false;
  RegisterRule rbp{RegisterRule::Kind::same_value, 0};
  // No rule for the return address means we cannot step: "other".
  RegisterRule return_address{RegisterRule::Kind::other, 0};
};

/// Reads the bytes of one CIE or FDE; every read checks the end, and a
/// failed read leaves `ok` false.
struct Reader {
  const unsigned char* position;
  const unsigned char* end;
  bool ok = true;

  bool has(std::size_t size) {
    if (static_cast<std::size_t>(end - position) < size)
      ok = false;
    return ok;
  }
  std::uint8_t u8() {
    if (!has(1))
      return 0;
    return *position++;
  }
  template <class T> T fixed() {
    T value{};
    if (!has(sizeof(T)))
      return value;
    std::memcpy(&value, position, sizeof(T));
    position += sizeof(T);
    return value;
  }
  std::uint64_t uleb() {
    std::uint64_t value = 0;
    for (unsigned shift = 0; ok; shift += 7) {
      const std::uint8_t byte = u8();
      if (shift < 64)
        value |= std::uint64_t(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0)
        break;
    }
    return value;
  }
  std::int64_t sleb() {
    std::int64_t value = 0;
    unsigned shift = 0;
    std::uint8_t byte = 0;
    do {
      byte = u8();
      if (shift < 64)
        value |= std::int64_t(byte & 0x7f) << shift;
      shift += 7;
    } while (ok && (byte & 0x80) != 0);
    if (shift < 64 && (byte & 0x40) != 0)
      value |= -(std::int64_t(1) << shift);
    return value;
  }
  void skip(std::uint64_t size) {
    if (has(size))
      position += size;
  }
  /// Skips a pointer stored with DWARF EH encoding `encoding`; false when
  /// the encoding is one this reader does not know (aligned, say).
  bool skip_encoded(std::uint8_t encoding) {
    if (encoding == 0xff) // DW_EH_PE_omit
      return true;
    if ((encoding & 0x70) == 0x50) // DW_EH_PE_aligned
      return false;
    switch (encoding & 0x0f) {
    case 0x00: // absptr
      skip(sizeof(void*));
      break;
    case 0x01: // uleb128
      uleb();
      break;
    case 0x09: // sleb128
      sleb();
      break;
    case 0x02: // udata2
    case 0x0a: // sdata2
      skip(2);
      break;
    case 0x03: // udata4
    case 0x0b: // sdata4
      skip(4);
      break;
    case 0x04: // udata8
    case 0x0c: // sdata8
      skip(8);
      break;
    default:
      return false;
    }
    return ok;
  }
};

/// The parts of a CIE the FDE needs.
struct Cie {
  std::uint64_t code_alignment = 1;
  std::int64_t data_alignment = 1;
  std::uint8_t fde_encoding = 0;
  bool has_augmentation_data = false;
  bool signal_frame = false;
  const unsigned char* instructions = nullptr;
  const unsigned char* end = nullptr;
};

/// A CIE or FDE record: its body after the 4-byte length. The 64-bit DWARF
/// format never appears in .eh_frame.
bool record_body(const unsigned char* record, const unsigned char*& body,
                 const unsigned char*& end) {
  std::uint32_t length = 0;
  std::memcpy(&length, record, sizeof length);
  if (length == 0 || length == 0xffffffffu)
    return false;
  body = record + 4;
  end = body + length;
  return true;
}

bool parse_cie(const unsigned char* record, Cie& cie) {
  const unsigned char* body = nullptr;
  const unsigned char* end = nullptr;
  if (!record_body(record, body, end))
    return false;
  Reader reader{body, end};
  if (reader.fixed<std::uint32_t>() != 0) // a CIE's id is 0 in .eh_frame
    return false;
  const std::uint8_t version = reader.u8();
  if (version != 1 && version != 3)
    return false;
  const char* augmentation = reinterpret_cast<const char*>(reader.position);
  const std::size_t augmentation_length =
      strnlen(augmentation, static_cast<std::size_t>(end - reader.position));
  reader.skip(augmentation_length + 1);
  if (!reader.ok || std::strstr(augmentation, "eh") != nullptr)
    return false;
  cie.code_alignment = reader.uleb();
  cie.data_alignment = reader.sleb();
  const std::uint64_t return_column =
      version == 1 ? reader.u8() : reader.uleb();
  if (return_column != return_address_register)
    return false;
  if (augmentation[0] == 'z') {
    cie.has_augmentation_data = true;
    const std::uint64_t data_length = reader.uleb();
    const unsigned char* data_end = reader.position + data_length;
    if (!reader.ok || data_end > end)
      return false;
    for (const char* letter = augmentation + 1; *letter != '\0'; ++letter) {
      switch (*letter) {
      case 'L': // LSDA encoding
        reader.u8();
        break;
      case 'R':
        cie.fde_encoding = reader.u8();
        break;
      case 'P': // personality routine
        if (!reader.skip_encoded(reader.u8()))
          return false;
        break;
      case 'S':
        cie.signal_frame = true;
        break;
      case 'B': // AArch64 B-key, MTE tagged frames: no data
      case 'G':
        break;
      default:
        return false;
      }
    }
    reader.position = data_end;
  } else if (augmentation[0] != '\0') {
    return false;
  }
  cie.instructions = reader.position;
  cie.end = end;
  return reader.ok;
}

/// Runs call frame instructions from `begin` to `end`, or until the location
/// passes `pc`. `initial` is the state after the CIE's instructions, which
/// DW_CFA_restore goes back to. False on an instruction this reader does
/// not interpret.
bool run_instructions(const unsigned char* begin, const unsigned char* end,
                      const Cie& cie, std::uintptr_t location,
                      std::uintptr_t pc, const CfaState& initial,
                      CfaState& state) {
  constexpr int max_remembered = 16;
  CfaState remembered[max_remembered];
  int remembered_count = 0;
  Reader reader{begin, end};
  const auto set_rule = [&](std::uint64_t column, RegisterRule rule) {
    if (column == rbp_register)
      state.rbp = rule;
    else if (column == return_address_register)
      state.return_address = rule;
  };
  const auto restore_rule = [&](std::uint64_t column) {
    if (column == rbp_register)
      state.rbp = initial.rbp;
    else if (column == return_address_register)
      state.return_address = initial.return_address;
  };
  const auto offset_rule = [&](std::int64_t factored) {
    return RegisterRule{RegisterRule::Kind::offset,
                        factored * cie.data_alignment};
  };
  const RegisterRule other{RegisterRule::Kind::other, 0};
  while (reader.position < reader.end && reader.ok && location <= pc) {
    const std::uint8_t opcode = reader.u8();
    const std::uint8_t operand = opcode & 0x3f;
    switch (opcode & 0xc0) {
    case 0x40: // DW_CFA_advance_loc
      location += operand * cie.code_alignment;
      continue;
    case 0x80: // DW_CFA_offset
      set_rule(operand, offset_rule(std::int64_t(reader.uleb())));
      continue;
    case 0xc0: // DW_CFA_restore
      restore_rule(operand);
      continue;
    default:
      break;
    }
    switch (opcode) {
    case 0x00: // DW_CFA_nop
      break;
    case 0x02: // DW_CFA_advance_loc1
      location += reader.u8() * cie.code_alignment;
      break;
    case 0x03: // DW_CFA_advance_loc2
      location += reader.fixed<std::uint16_t>() * cie.code_alignment;
      break;
    case 0x04: // DW_CFA_advance_loc4
      location += reader.fixed<std::uint32_t>() * cie.code_alignment;
      break;
    case 0x05: { // DW_CFA_offset_extended
      const std::uint64_t column = reader.uleb();
      set_rule(column, offset_rule(std::int64_t(reader.uleb())));
      break;
    }
    case 0x06: // DW_CFA_restore_extended
      restore_rule(reader.uleb());
      break;
    case 0x07: // DW_CFA_undefined
      set_rule(reader.uleb(), {RegisterRule::Kind::undefined, 0});
      break;
    case 0x08: // DW_CFA_same_value
      set_rule(reader.uleb(), {RegisterRule::Kind::same_value, 0});
      break;
    case 0x09: // DW_CFA_register
      set_rule(reader.uleb(), other);
      reader.uleb();
      break;
    case 0x0a: // DW_CFA_remember_state
      if (remembered_count == max_remembered)
        return false;
      remembered[remembered_count++] = state;
      break;
    case 0x0b: // DW_CFA_restore_state, the CFA rule included (as libgcc)
      if (remembered_count == 0)
        return false;
      state = remembered[--remembered_count];
      break;
    case 0x0c: // DW_CFA_def_cfa
      state.cfa_register = unsigned(reader.uleb());
      state.cfa_offset = std::int64_t(reader.uleb());
      state.cfa_is_expression = false;
      break;
    case 0x0d: // DW_CFA_def_cfa_register
      state.cfa_register = unsigned(reader.uleb());
      state.cfa_is_expression = false;
      break;
    case 0x0e: // DW_CFA_def_cfa_offset
      state.cfa_offset = std::int64_t(reader.uleb());
      break;
    case 0x0f: // DW_CFA_def_cfa_expression
      state.cfa_is_expression = true;
      reader.skip(reader.uleb());
      break;
    case 0x10:   // DW_CFA_expression
    case 0x16: { // DW_CFA_val_expression
      set_rule(reader.uleb(), other);
      reader.skip(reader.uleb());
      break;
    }
    case 0x11: { // DW_CFA_offset_extended_sf
      const std::uint64_t column = reader.uleb();
      set_rule(column, offset_rule(reader.sleb()));
      break;
    }
    case 0x12: // DW_CFA_def_cfa_sf
      state.cfa_register = unsigned(reader.uleb());
      state.cfa_offset = reader.sleb() * cie.data_alignment;
      state.cfa_is_expression = false;
      break;
    case 0x13: // DW_CFA_def_cfa_offset_sf
      state.cfa_offset = reader.sleb() * cie.data_alignment;
      break;
    case 0x14: // DW_CFA_val_offset
    case 0x15: // DW_CFA_val_offset_sf
      set_rule(reader.uleb(), other);
      if (opcode == 0x14)
        reader.uleb();
      else
        reader.sleb();
      break;
    case 0x2e: // DW_CFA_GNU_args_size
      reader.uleb();
      break;
    case 0x2f: { // DW_CFA_GNU_negative_offset_extended
      const std::uint64_t column = reader.uleb();
      set_rule(column, offset_rule(-std::int64_t(reader.uleb())));
      break;
    }
    default: // DW_CFA_set_loc, DW_CFA_GNU_window_save, vendor extensions
      return false;
    }
  }
  return reader.ok;
}

bool fits_slot(std::int64_t offset) {
  return offset % 8 == 0 && offset >= -4096 && offset <= 4096;
}

} // namespace

FrameRule read_frame_rule(std::uintptr_t pc) noexcept {
  FrameRule rule;
  if (_Unwind_Find_FDE == nullptr)
    return rule;
  dwarf_eh_bases bases{};
  const auto* fde = static_cast<const unsigned char*>(
      _Unwind_Find_FDE(reinterpret_cast<void*>(pc), &bases));
  if (fde == nullptr) {
    // No unwind information: the end of what any unwinder can walk.
    rule.kind = FrameRule::Kind::end_of_stack;
    return rule;
  }
  const unsigned char* body = nullptr;
  const unsigned char* end = nullptr;
  if (!record_body(fde, body, end))
    return rule;
  std::int32_t cie_delta = 0;
  std::memcpy(&cie_delta, body, sizeof cie_delta);
  Cie cie;
  if (cie_delta <= 0 || !parse_cie(body - cie_delta, cie) || cie.signal_frame)
    return rule;

  Reader reader{body + 4, end};
  if (!reader.skip_encoded(cie.fde_encoding) ||      // pc_begin
      !reader.skip_encoded(cie.fde_encoding & 0x0f)) // pc_range
    return rule;
  if (cie.has_augmentation_data)
    reader.skip(reader.uleb());
  if (!reader.ok)
    return rule;

  const auto function = reinterpret_cast<std::uintptr_t>(bases.func);
  CfaState initial;
  if (!run_instructions(cie.instructions, cie.end, cie, function,
                        ~std::uintptr_t(0), CfaState{}, initial))
    return rule;
  CfaState state = initial;
  if (!run_instructions(reader.position, end, cie, function, pc, initial,
                        state))
    return rule;

  if (state.return_address.kind == RegisterRule::Kind::undefined) {
    rule.kind = FrameRule::Kind::end_of_stack; // _start, clone: the outermost
    return rule;
  }
  if (state.cfa_is_expression ||
      (state.cfa_register != rsp_register &&
       state.cfa_register != rbp_register) ||
      state.cfa_offset < 0 || state.cfa_offset > (std::int64_t(1) << 30) ||
      state.return_address.kind != RegisterRule::Kind::offset ||
      !fits_slot(state.return_address.offset) ||
      (state.rbp.kind != RegisterRule::Kind::same_value &&
       state.rbp.kind != RegisterRule::Kind::offset) ||
      (state.rbp.kind == RegisterRule::Kind::offset &&
       !fits_slot(state.rbp.offset)))
    return rule;
  rule.kind = FrameRule::Kind::step;
  rule.cfa_from_rbp = state.cfa_register == rbp_register;
  rule.cfa_offset = static_cast<std::int32_t>(state.cfa_offset);
  rule.ra_offset = static_cast<std::int32_t>(state.return_address.offset);
  rule.rbp_saved = state.rbp.kind == RegisterRule::Kind::offset;
  rule.rbp_offset = static_cast<std::int32_t>(state.rbp.offset);
  return rule;
}

} // namespace cunumpy::Impl
