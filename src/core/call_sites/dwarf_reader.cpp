#include "call_sites/dwarf_reader.hpp"

#include <algorithm>

#include "call_sites/dwarf_lines.hpp"

namespace cunumpy::Impl::dwarf {
namespace {

/// How deep the walks go into nested entries (namespaces, inlined calls,
/// blocks): far more than compilers nest, and a bound on a hostile file.
constexpr int max_depth = 64;

struct AttributeSpec {
  std::uint32_t name; ///< DWARF's names and forms fit in 16 bits
  std::uint32_t form;
  std::int64_t implicit; ///< DW_FORM_implicit_const's value
};

/// How a unit's entries of one kind are written: their tag, whether they
/// have children, their attributes (in the unit's list of specs).
struct Abbreviation { // 24 bytes: a unit has hundreds
  std::uint32_t code = 0;
  std::uint16_t tag = 0;
  bool children = false;
  /// It has addresses (low_pc or ranges): a function with none is a
  /// declaration or an abstract instance, passed over by the index.
  bool has_addresses = false;
  std::uint32_t first = 0; ///< its first attribute in Unit::specs
  std::uint16_t count = 0;
  std::uint16_t sibling_form = 0;
  /// The attributes' size when each form has a fixed one, else -1, and
  /// where DW_AT_sibling's value lies in them (-1: nowhere fixed): an entry
  /// the walks only pass over is skipped in one step.
  std::int32_t fixed_size = -1;
  std::int32_t sibling_at = -1;
};

/// An attribute's value, as its form gives it: an index into .debug_addr
/// or .debug_str_offsets is looked up only when the value is used.
struct Value {
  enum class Kind : std::uint8_t {
    none,
    constant,
    address,
    address_index,
    reference,          ///< an offset in .debug_info
    string,             ///< number: the string's address
    string_offset,      ///< in .debug_str
    line_string_offset, ///< in .debug_line_str
    string_index,
    offset, ///< in another section
    list_index,
  };
  Kind kind = Kind::none;
  std::uint64_t number = 0;
};

/// What the walks use of one entry of .debug_info.
struct Entry {
  std::uint64_t offset = 0;
  std::uint64_t tag = 0;
  bool children = false;
  std::uint64_t sibling = 0; ///< 0: none given
  Value low, high, ranges;
  Value call_file, call_line;
  Value name, linkage_name, decl_file;
  std::uint64_t origin = 0, specification = 0;
  // A unit's own entry.
  Value stmt_list, comp_dir, str_offsets_base, addr_base, rnglists_base;
};

} // namespace

struct Reader::Unit {
  std::uint64_t offset = 0; ///< of its header
  std::uint64_t end = 0;    ///< past its last entry
  std::uint64_t first_entry = 0;
  std::uint16_t version = 0;
  std::uint8_t address_size = 8;
  bool dwarf64 = false;
  std::uint64_t abbreviation_offset = 0;

  // Read with its entry, at the first use.
  bool read = false;
  bool usable = false;
  std::uint64_t base_address = 0; ///< ranges' base: the unit's low_pc
  std::uint64_t str_offsets_base = 0;
  std::uint64_t addr_base = 0;
  std::uint64_t rnglists_base = 0;
  bool has_lines = false;
  std::uint64_t stmt_list = 0;
  std::string comp_dir;
  std::vector<Abbreviation> abbreviations; // by code
  bool dense = true;                       ///< code i + 1 at index i
  std::vector<AttributeSpec> specs;

  /// Its functions' address ranges (target: the function's entry), sorted
  /// by low, and the longest; made at the first address looked up in it.
  std::vector<Range> functions;
  std::uint64_t longest = 0;
  int indexed = 0; ///< 0: not yet; 1: top level and namespaces; 2: all
  std::unique_ptr<LineTable> lines;
  bool lines_read = false;

  unsigned offset_size() const noexcept { return dwarf64 ? 8 : 4; }
};

namespace {

using Unit = Reader::Unit;

/// Reads units' entries: values, entries, ranges, the walks.
class UnitReader {
public:
  UnitReader(const DwarfSections& sections, Unit& unit)
      : sections_(sections), unit_(unit) {}

  /// A cursor over the unit's entries at `offset` in .debug_info: reads
  /// stop at the unit's end.
  Cursor at(std::uint64_t offset) const {
    return Cursor(Bytes{sections_.info.data, unit_.end}, offset);
  }

  /// Reads the unit's own entry and its abbreviations; false when it
  /// cannot be read.
  bool read_unit() {
    if (!read_abbreviations())
      return false;
    Cursor cursor = at(unit_.first_entry);
    Entry entry;
    if (!read_entry(cursor, entry))
      return false;
    unit_.str_offsets_base = entry.str_offsets_base.number;
    unit_.addr_base = entry.addr_base.number;
    unit_.rnglists_base = entry.rnglists_base.number;
    unit_.base_address = address(entry.low);
    unit_.has_lines = entry.stmt_list.kind == Value::Kind::offset ||
                      entry.stmt_list.kind == Value::Kind::constant;
    unit_.stmt_list = entry.stmt_list.number;
    if (const char* dir = text(entry.comp_dir))
      unit_.comp_dir = dir;
    return true;
  }

  /// Reads the code of the entry at `cursor`: its abbreviation, null at
  /// the end of a list of siblings (a null entry, cursor.ok() still true)
  /// or when it cannot be read.
  const Abbreviation* next(Cursor& cursor) {
    const std::uint64_t code = cursor.uleb();
    if (!cursor.ok() || code == 0)
      return nullptr;
    const Abbreviation* abbreviation = find(code);
    if (abbreviation == nullptr)
      cursor.skip(~std::uint64_t(0)); // fails: the entry cannot be read
    return abbreviation;
  }

  /// Reads the entry at `cursor`; false at the end of a list of siblings
  /// or when it cannot be read.
  bool read_entry(Cursor& cursor, Entry& entry) {
    const std::uint64_t offset = cursor.offset();
    const Abbreviation* abbreviation = next(cursor);
    if (abbreviation == nullptr)
      return false;
    read_attributes(cursor, *abbreviation, offset, entry);
    return cursor.ok();
  }

  void read_attributes(Cursor& cursor, const Abbreviation& abbreviation,
                       std::uint64_t offset, Entry& entry) {
    entry = Entry();
    entry.offset = offset;
    entry.tag = abbreviation.tag;
    entry.children = abbreviation.children;
    for (std::uint32_t i = 0; i < abbreviation.count && cursor.ok(); ++i) {
      const AttributeSpec& spec = unit_.specs[abbreviation.first + i];
      const Value value = read_value(cursor, spec.form, spec.implicit);
      switch (spec.name) {
      case at_sibling:
        if (value.kind == Value::Kind::reference)
          entry.sibling = value.number;
        break;
      case at_low_pc:
        entry.low = value;
        break;
      case at_high_pc:
        entry.high = value;
        break;
      case at_ranges:
        entry.ranges = value;
        break;
      case at_call_file:
        entry.call_file = value;
        break;
      case at_call_line:
        entry.call_line = value;
        break;
      case at_name:
        entry.name = value;
        break;
      case at_decl_file:
        entry.decl_file = value;
        break;
      case at_linkage_name:
      case at_mips_linkage_name:
        entry.linkage_name = value;
        break;
      case at_abstract_origin:
        if (value.kind == Value::Kind::reference)
          entry.origin = value.number;
        break;
      case at_specification:
        if (value.kind == Value::Kind::reference)
          entry.specification = value.number;
        break;
      case at_stmt_list:
        entry.stmt_list = value;
        break;
      case at_comp_dir:
        entry.comp_dir = value;
        break;
      case at_str_offsets_base:
        entry.str_offsets_base = value;
        break;
      case at_addr_base:
      case at_gnu_addr_base:
        entry.addr_base = value;
        break;
      case at_rnglists_base:
        entry.rnglists_base = value;
        break;
      default:
        break;
      }
    }
  }

  /// Passes over an entry's attributes; returns its sibling's offset when
  /// it names one, else 0.
  std::uint64_t skip_attributes(Cursor& cursor,
                                const Abbreviation& abbreviation) {
    std::uint64_t sibling = 0;
    if (abbreviation.fixed_size >= 0) {
      if (abbreviation.sibling_at >= 0) {
        Cursor at = cursor;
        at.skip(std::uint64_t(abbreviation.sibling_at));
        const Value value = read_value(at, abbreviation.sibling_form, 0);
        if (at.ok() && value.kind == Value::Kind::reference)
          sibling = value.number;
      }
      cursor.skip(std::uint64_t(abbreviation.fixed_size));
      return sibling;
    }
    for (std::uint32_t i = 0; i < abbreviation.count && cursor.ok(); ++i) {
      const AttributeSpec& spec = unit_.specs[abbreviation.first + i];
      const Value value = read_value(cursor, spec.form, spec.implicit);
      if (spec.name == at_sibling && value.kind == Value::Kind::reference)
        sibling = value.number;
    }
    return sibling;
  }

  /// Moves `cursor`, just after the attributes of an entry with children,
  /// past them: to its `sibling` when it names one, else through them.
  void skip_children(Cursor& cursor, std::uint64_t sibling) {
    if (sibling > cursor.offset() && sibling < unit_.end) {
      cursor.seek(sibling);
      return;
    }
    int depth = 1;
    while (depth > 0 && cursor.ok()) {
      const Abbreviation* child = next(cursor);
      if (child == nullptr) {
        --depth; // a null entry ends a list (a failed read ends the walk)
        continue;
      }
      const std::uint64_t next_sibling = skip_attributes(cursor, *child);
      if (!child->children)
        continue;
      if (next_sibling > cursor.offset() && next_sibling < unit_.end)
        cursor.seek(next_sibling);
      else
        ++depth;
    }
  }

  /// Calls `range(low, high)` for each address range of an entry (its
  /// low_pc and high_pc, or its ranges) until it returns true; returns
  /// whether it did.
  template <class RangeFunction>
  bool any_range(const Entry& entry, RangeFunction&& range) {
    if (entry.low.kind != Value::Kind::none &&
        entry.high.kind != Value::Kind::none) {
      const std::uint64_t low = address(entry.low);
      const std::uint64_t high = entry.high.kind == Value::Kind::constant
                                     ? low + entry.high.number
                                     : address(entry.high);
      return range(low, high);
    }
    if (entry.ranges.kind == Value::Kind::none)
      return false;
    return unit_.version >= 5 ? any_range_list(entry.ranges, range)
                              : any_range_pair(entry.ranges, range);
  }

  bool holds(const Entry& entry, std::uint64_t address) {
    return any_range(entry, [address](std::uint64_t low, std::uint64_t high) {
      return low <= address && address < high;
    });
  }

  /// Indexes the functions defined in the entries at `cursor` (a list of
  /// siblings) and in the namespaces among them: a class holds only
  /// declarations, an abstract inline instance no addresses. With
  /// `everywhere`, also those in any other entry: a lambda's operator(),
  /// not inlined, is defined in its closure type, inside the function that
  /// made it.
  void index_functions(Cursor& cursor, int depth, bool everywhere) {
    Entry entry;
    for (;;) {
      const std::uint64_t offset = cursor.offset();
      const Abbreviation* abbreviation = next(cursor);
      if (abbreviation == nullptr)
        return;
      std::uint64_t sibling = 0;
      if (abbreviation->tag == tag_subprogram && abbreviation->has_addresses) {
        read_attributes(cursor, *abbreviation, offset, entry);
        sibling = entry.sibling;
        any_range(entry, [&](std::uint64_t low, std::uint64_t high) {
          // A function the linker dropped lies at address 0.
          if (low != 0 && high > low) {
            unit_.functions.push_back({low, high, offset});
            unit_.longest = std::max(unit_.longest, high - low);
          }
          return false;
        });
      } else {
        sibling = skip_attributes(cursor, *abbreviation);
      }
      if (!cursor.ok())
        return;
      if (!abbreviation->children)
        continue;
      const std::uint64_t tag = abbreviation->tag;
      if ((everywhere || tag == tag_namespace || tag == tag_compile_unit ||
           tag == tag_partial_unit) &&
          depth < max_depth)
        index_functions(cursor, depth + 1, everywhere);
      else
        skip_children(cursor, sibling);
    }
  }

  /// Appends to `chain` the function or inlined call among the entries at
  /// `cursor` (a list of siblings, blocks entered) that holds `address`,
  /// and the ones inside it; false when none does.
  bool containing(Cursor& cursor, std::uint64_t address,
                  std::vector<Entry>& chain, int depth) {
    Entry entry;
    for (;;) {
      const std::uint64_t offset = cursor.offset();
      const Abbreviation* abbreviation = next(cursor);
      if (abbreviation == nullptr)
        return false;
      const std::uint64_t tag = abbreviation->tag;
      std::uint64_t sibling = 0;
      if (tag == tag_subprogram || tag == tag_inlined_subroutine) {
        read_attributes(cursor, *abbreviation, offset, entry);
        sibling = entry.sibling;
        if (cursor.ok() && holds(entry, address)) {
          chain.push_back(entry);
          if (entry.children && depth < max_depth)
            containing(cursor, address, chain, depth + 1);
          return true;
        }
      } else {
        sibling = skip_attributes(cursor, *abbreviation);
        // Blocks may have no ranges of their own: look inside.
        if ((tag == tag_lexical_block || tag == tag_try_block ||
             tag == tag_catch_block) &&
            abbreviation->children && depth < max_depth) {
          if (containing(cursor, address, chain, depth + 1))
            return true;
          continue; // their list was read to its end
        }
      }
      if (!cursor.ok())
        return false;
      if (abbreviation->children)
        skip_children(cursor, sibling);
    }
  }

  /// The string a value names; null when none.
  const char* text(const Value& value) const {
    if (value.kind == Value::Kind::string)
      return reinterpret_cast<const char*>(value.number);
    if (value.kind == Value::Kind::string_offset)
      return string_at(sections_.str, value.number);
    if (value.kind == Value::Kind::line_string_offset)
      return string_at(sections_.line_str, value.number);
    if (value.kind != Value::Kind::string_index)
      return nullptr;
    Cursor cursor(sections_.str_offsets,
                  unit_.str_offsets_base + value.number * unit_.offset_size());
    const std::uint64_t offset = cursor.fixed(unit_.offset_size());
    return cursor.ok() ? string_at(sections_.str, offset) : nullptr;
  }

private:
  bool read_abbreviations() {
    Cursor cursor(sections_.abbrev, unit_.abbreviation_offset);
    // At most: an attribute takes 2 bytes or more, an abbreviation 4.
    // Reserved once, not copied as they grow (each copy touches pages).
    const std::uint64_t bytes =
        sections_.abbrev.size -
        std::min<std::uint64_t>(sections_.abbrev.size,
                                unit_.abbreviation_offset);
    unit_.specs.reserve(std::min<std::uint64_t>(bytes / 2, 1u << 20));
    unit_.abbreviations.reserve(std::min<std::uint64_t>(bytes / 4, 1u << 18));
    for (;;) {
      const std::uint64_t code = cursor.uleb();
      if (!cursor.ok() || code == 0)
        break;
      const std::uint64_t tag = cursor.uleb();
      if (code > UINT32_MAX || tag > 0xffff)
        return false; // not DWARF
      Abbreviation abbreviation;
      abbreviation.code = static_cast<std::uint32_t>(code);
      abbreviation.tag = static_cast<std::uint16_t>(tag);
      abbreviation.children = cursor.u8() != 0;
      abbreviation.first = static_cast<std::uint32_t>(unit_.specs.size());
      std::int64_t size = 0;
      for (;;) {
        const std::uint64_t name = cursor.uleb();
        const std::uint64_t form = cursor.uleb();
        const std::int64_t implicit =
            form == form_implicit_const ? cursor.sleb() : 0;
        if (!cursor.ok() || (name == 0 && form == 0))
          break;
        if (name > 0xffff || form > 0xffff)
          return false; // not DWARF
        unit_.specs.push_back(
            {std::uint32_t(name), std::uint32_t(form), implicit});
        abbreviation.has_addresses = abbreviation.has_addresses ||
                                     name == at_low_pc || name == at_ranges;
        if (name == at_sibling && size >= 0) {
          abbreviation.sibling_at = static_cast<std::int32_t>(size);
          abbreviation.sibling_form = static_cast<std::uint16_t>(form);
        }
        const int form_size = fixed_size(form);
        size = size < 0 || form_size < 0 || size > (1 << 20) ? -1
                                                             : size + form_size;
      }
      if (!cursor.ok())
        return false;
      if (unit_.specs.size() - abbreviation.first > 0xffff)
        return false;
      abbreviation.count =
          static_cast<std::uint16_t>(unit_.specs.size() - abbreviation.first);
      abbreviation.fixed_size = static_cast<std::int32_t>(size);
      unit_.dense = unit_.dense && code == unit_.abbreviations.size() + 1;
      unit_.abbreviations.push_back(std::move(abbreviation));
    }
    if (!unit_.dense)
      std::sort(unit_.abbreviations.begin(), unit_.abbreviations.end(),
                [](const Abbreviation& a, const Abbreviation& b) {
                  return a.code < b.code;
                });
    return !unit_.abbreviations.empty();
  }

  /// The size of a form's values in this unit; -1 when it varies.
  int fixed_size(std::uint64_t form) const {
    const int offset_size = int(unit_.offset_size());
    switch (form) {
    case form_flag_present:
    case form_implicit_const:
      return 0;
    case form_data1:
    case form_flag:
    case form_ref1:
      return 1;
    case form_data2:
    case form_ref2:
      return 2;
    case form_data4:
    case form_ref4:
    case form_ref_sup4:
      return 4;
    case form_data8:
    case form_ref8:
    case form_ref_sig8:
    case form_ref_sup8:
      return 8;
    case form_data16:
      return 16;
    case form_addr:
      return unit_.address_size;
    case form_ref_addr:
      return unit_.version <= 2 ? unit_.address_size : offset_size;
    case form_strp:
    case form_line_strp:
    case form_sec_offset:
    case form_strp_sup:
    case form_gnu_ref_alt:
    case form_gnu_strp_alt:
      return offset_size;
    default:
      if (form >= form_strx1 && form <= form_strx4)
        return int(form - form_strx1 + 1);
      if (form >= form_addrx1 && form <= form_addrx4)
        return int(form - form_addrx1 + 1);
      return -1; // strings, LEB128 numbers, blocks, indirect forms
    }
  }

  const Abbreviation* find(std::uint64_t code) const {
    auto& all = unit_.abbreviations;
    if (unit_.dense)
      return code - 1 < all.size() ? &all[code - 1] : nullptr;
    auto it = std::lower_bound(
        all.begin(), all.end(), code,
        [](const Abbreviation& a, std::uint64_t c) { return a.code < c; });
    return it != all.end() && it->code == code ? &*it : nullptr;
  }

  Value read_value(Cursor& cursor, std::uint64_t form, std::int64_t implicit,
                   int indirections = 0) {
    using Kind = Value::Kind;
    Value value;
    const auto set = [&value](Kind kind, std::uint64_t number) {
      value.kind = kind;
      value.number = number;
    };
    const unsigned offset_size = unit_.offset_size();
    switch (form) {
    case form_addr:
      set(Kind::address, cursor.fixed(unit_.address_size));
      break;
    case form_data1:
    case form_flag:
      set(Kind::constant, cursor.fixed(1));
      break;
    case form_data2:
      set(Kind::constant, cursor.fixed(2));
      break;
    case form_data4:
      set(Kind::constant, cursor.fixed(4));
      break;
    case form_data8:
      set(Kind::constant, cursor.fixed(8));
      break;
    case form_sdata:
      set(Kind::constant, static_cast<std::uint64_t>(cursor.sleb()));
      break;
    case form_udata:
      set(Kind::constant, cursor.uleb());
      break;
    case form_flag_present:
      set(Kind::constant, 1);
      break;
    case form_implicit_const:
      set(Kind::constant, static_cast<std::uint64_t>(implicit));
      break;
    case form_string:
      set(Kind::string, reinterpret_cast<std::uintptr_t>(cursor.string()));
      break;
    case form_strp: // read when used: names are spread over a large section
      set(Kind::string_offset, cursor.fixed(offset_size));
      break;
    case form_line_strp:
      set(Kind::line_string_offset, cursor.fixed(offset_size));
      break;
    case form_strx:
    case form_gnu_str_index:
      set(Kind::string_index, cursor.uleb());
      break;
    case form_addrx:
    case form_gnu_addr_index:
      set(Kind::address_index, cursor.uleb());
      break;
    case form_ref_addr:
      set(Kind::reference,
          cursor.fixed(unit_.version <= 2 ? unit_.address_size : offset_size));
      break;
    case form_ref1:
    case form_ref2:
    case form_ref4:
    case form_ref8:
      set(Kind::reference,
          unit_.offset + cursor.fixed(1u << (form - form_ref1)));
      break;
    case form_ref_udata:
      set(Kind::reference, unit_.offset + cursor.uleb());
      break;
    case form_sec_offset:
      set(Kind::offset, cursor.fixed(offset_size));
      break;
    case form_loclistx:
    case form_rnglistx:
      set(Kind::list_index, cursor.uleb());
      break;
    case form_block1:
      cursor.skip(cursor.fixed(1));
      break;
    case form_block2:
      cursor.skip(cursor.fixed(2));
      break;
    case form_block4:
      cursor.skip(cursor.fixed(4));
      break;
    case form_block:
    case form_exprloc:
      cursor.skip(cursor.uleb());
      break;
    case form_data16:
      cursor.skip(16);
      break;
    case form_ref_sup4:
      cursor.skip(4);
      break;
    case form_ref_sup8:
    case form_ref_sig8:
      cursor.skip(8);
      break;
    case form_strp_sup:
    case form_gnu_ref_alt: // in a supplementary file (dwz): not read
    case form_gnu_strp_alt:
      cursor.skip(offset_size);
      break;
    case form_indirect: {
      const std::uint64_t actual = cursor.uleb();
      if (indirections > 0 || actual == form_implicit_const)
        cursor.skip(~std::uint64_t(0));
      else
        return read_value(cursor, actual, 0, indirections + 1);
      break;
    }
    default:
      if (form >= form_strx1 && form <= form_strx4)
        set(Kind::string_index, cursor.fixed(unsigned(form - form_strx1 + 1)));
      else if (form >= form_addrx1 && form <= form_addrx4)
        set(Kind::address_index,
            cursor.fixed(unsigned(form - form_addrx1 + 1)));
      else
        cursor.skip(~std::uint64_t(0)); // an unknown form has no known size
    }
    return value;
  }

  std::uint64_t address(const Value& value) const {
    if (value.kind == Value::Kind::address)
      return value.number;
    if (value.kind == Value::Kind::address_index)
      return indexed_address(value.number);
    return 0;
  }

  std::uint64_t indexed_address(std::uint64_t index) const {
    Cursor cursor(sections_.addr, unit_.addr_base + index * unit_.address_size);
    return cursor.fixed(unit_.address_size);
  }

  /// DWARF 5's range lists (.debug_rnglists).
  template <class RangeFunction>
  bool any_range_list(const Value& ranges, RangeFunction&& range) {
    std::uint64_t offset = ranges.number;
    if (ranges.kind == Value::Kind::list_index) {
      Cursor table(sections_.rnglists,
                   unit_.rnglists_base + ranges.number * unit_.offset_size());
      offset = unit_.rnglists_base + table.fixed(unit_.offset_size());
      if (!table.ok())
        return false;
    }
    Cursor cursor(sections_.rnglists, offset);
    const unsigned size = unit_.address_size;
    std::uint64_t base = unit_.base_address;
    while (cursor.ok()) {
      std::uint64_t low = 0;
      std::uint64_t high = 0;
      switch (cursor.u8()) {
      case 0: // end_of_list
        return false;
      case 1: // base_addressx
        base = indexed_address(cursor.uleb());
        continue;
      case 2: // startx_endx
        low = indexed_address(cursor.uleb());
        high = indexed_address(cursor.uleb());
        break;
      case 3: // startx_length
        low = indexed_address(cursor.uleb());
        high = low + cursor.uleb();
        break;
      case 4: // offset_pair
        low = base + cursor.uleb();
        high = base + cursor.uleb();
        break;
      case 5: // base_address
        base = cursor.fixed(size);
        continue;
      case 6: // start_end
        low = cursor.fixed(size);
        high = cursor.fixed(size);
        break;
      case 7: // start_length
        low = cursor.fixed(size);
        high = low + cursor.uleb();
        break;
      default:
        return false;
      }
      if (cursor.ok() && range(low, high))
        return true;
    }
    return false;
  }

  /// DWARF 2 to 4's range lists (.debug_ranges).
  template <class RangeFunction>
  bool any_range_pair(const Value& ranges, RangeFunction&& range) {
    Cursor cursor(sections_.ranges, ranges.number);
    const unsigned size = unit_.address_size;
    const std::uint64_t base_selection =
        size == 8 ? ~std::uint64_t(0) : 0xffffffffu;
    std::uint64_t base = unit_.base_address;
    for (;;) {
      const std::uint64_t low = cursor.fixed(size);
      const std::uint64_t high = cursor.fixed(size);
      if (!cursor.ok() || (low == 0 && high == 0))
        return false;
      if (low == base_selection)
        base = high;
      else if (range(base + low, base + high))
        return true;
    }
  }

  const DwarfSections& sections_;
  Unit& unit_;
};

/// Indexes the unit's functions (Unit::functions): those of its top level
/// and namespaces, or `everywhere`.
void index_functions(Unit& unit, UnitReader& reader, bool everywhere) {
  unit.functions.clear();
  unit.longest = 0;
  Cursor cursor = reader.at(unit.first_entry);
  Entry entry;
  if (reader.read_entry(cursor, entry) && entry.children)
    reader.index_functions(cursor, 0, everywhere);
  std::sort(unit.functions.begin(), unit.functions.end(),
            [](const Reader::Range& a, const Reader::Range& b) {
              return a.low < b.low;
            });
  unit.indexed = everywhere ? 2 : 1;
}

/// The indexed function holding `address` and the inlined calls inside it
/// that do, outermost first; empty when none does.
std::vector<Entry> function_of(const Unit& unit, UnitReader& reader,
                               std::uint64_t address) {
  std::vector<Entry> chain;
  auto it = std::upper_bound(
      unit.functions.begin(), unit.functions.end(), address,
      [](std::uint64_t a, const Reader::Range& r) { return a < r.low; });
  while (it != unit.functions.begin()) {
    --it;
    if (address < it->high) {
      Cursor cursor = reader.at(it->target);
      Entry function;
      if (reader.read_entry(cursor, function)) {
        chain.push_back(function);
        if (function.children)
          reader.containing(cursor, address, chain, 0);
      }
      break;
    }
    if (address - it->low >= unit.longest)
      break; // no function starting earlier reaches the address
  }
  return chain;
}

} // namespace

Reader::Reader(const DwarfSections& sections) : sections_(sections) {}
Reader::~Reader() = default;

void Reader::read_units() {
  units_read_ = true;
  Cursor cursor(sections_.info);
  while (cursor.ok() && !cursor.at_end()) {
    auto unit = std::make_unique<Unit>();
    unit->offset = cursor.offset();
    const std::uint64_t length = cursor.initial_length(unit->dwarf64);
    if (!cursor.ok() || length > sections_.info.size - cursor.offset())
      break;
    unit->end = cursor.offset() + length;
    unit->version = cursor.u16();
    std::uint8_t type = 1; // DW_UT_compile
    if (unit->version >= 5) {
      type = cursor.u8();
      unit->address_size = cursor.u8();
      unit->abbreviation_offset = cursor.fixed(unit->offset_size());
      if (type == 4 || type == 5) // skeleton, split_compile: a DWO id
        cursor.skip(8);
    } else {
      unit->abbreviation_offset = cursor.fixed(unit->offset_size());
      unit->address_size = cursor.u8();
    }
    unit->first_entry = cursor.offset();
    const std::uint64_t end = unit->end;
    // Compile, partial and skeleton units; type units hold no code.
    if (cursor.ok() && unit->version >= 2 && unit->version <= 5 &&
        (type == 1 || type == 3 || type == 4) &&
        (unit->address_size == 4 || unit->address_size == 8))
      units_.push_back(std::move(unit));
    cursor = Cursor(sections_.info, end);
  }
}

Reader::Unit* Reader::unit_at(std::uint64_t offset) {
  if (!units_read_)
    read_units();
  auto it =
      std::upper_bound(units_.begin(), units_.end(), offset,
                       [](std::uint64_t o, const std::unique_ptr<Unit>& u) {
                         return o < u->offset;
                       });
  if (it == units_.begin())
    return nullptr;
  Unit& unit = **(it - 1);
  if (offset >= unit.end)
    return nullptr;
  if (!unit.read) {
    unit.read = true;
    unit.usable = UnitReader(sections_, unit).read_unit();
  }
  return unit.usable ? &unit : nullptr;
}

Reader::Unit* Reader::unit_of(std::uint64_t address) {
  const auto find = [&]() -> Unit* {
    auto it = std::upper_bound(
        unit_ranges_.begin(), unit_ranges_.end(), address,
        [](std::uint64_t a, const Range& r) { return a < r.low; });
    // Ranges of different units do not overlap: the nearest start decides.
    if (it == unit_ranges_.begin() || address >= (it - 1)->high)
      return nullptr;
    return unit_at((it - 1)->target);
  };
  if (!units_read_) {
    read_units();
    read_aranges();
  }
  if (Unit* unit = find())
    return unit;
  if (unit_ranges_from_entries_)
    return nullptr;
  // No .debug_aranges, or one without this unit (Clang writes none by
  // default): the units' own ranges, read once.
  unit_ranges_from_entries_ = true;
  unit_ranges_.clear();
  for (const auto& unit : units_) {
    if (unit_at(unit->offset) == nullptr)
      continue;
    UnitReader reader(sections_, *unit);
    Cursor cursor = reader.at(unit->first_entry);
    Entry entry;
    if (!reader.read_entry(cursor, entry))
      continue;
    const std::uint64_t target = unit->offset;
    reader.any_range(entry, [&](std::uint64_t low, std::uint64_t high) {
      if (low != 0 && high > low)
        unit_ranges_.push_back({low, high, target});
      return false;
    });
  }
  sort_ranges(unit_ranges_);
  return find();
}

void Reader::read_aranges() {
  Cursor cursor(sections_.aranges);
  while (cursor.ok() && !cursor.at_end()) {
    const std::uint64_t start = cursor.offset();
    bool dwarf64 = false;
    const std::uint64_t length = cursor.initial_length(dwarf64);
    if (!cursor.ok() || length > sections_.aranges.size - cursor.offset())
      break;
    const std::uint64_t end = cursor.offset() + length;
    cursor.u16(); // version 2
    const std::uint64_t unit = cursor.fixed(dwarf64 ? 8 : 4);
    const unsigned size = cursor.u8();
    const unsigned segment_size = cursor.u8();
    if (cursor.ok() && (size == 4 || size == 8) && segment_size == 0) {
      // The pairs start at a multiple of their size from the set's start.
      const std::uint64_t header = cursor.offset() - start;
      cursor.skip((2 * size - header % (2 * size)) % (2 * size));
      while (cursor.ok() && end - cursor.offset() >= 2 * size) {
        const std::uint64_t low = cursor.fixed(size);
        const std::uint64_t length_of = cursor.fixed(size);
        if (low == 0 && length_of == 0)
          break;
        if (low != 0 && length_of != 0)
          unit_ranges_.push_back({low, low + length_of, unit});
      }
    }
    cursor = Cursor(sections_.aranges, end);
  }
  sort_ranges(unit_ranges_);
}

void Reader::sort_ranges(std::vector<Range>& ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.low < b.low; });
}

std::vector<Location> Reader::locations(std::uint64_t address,
                                        FileFilter library_file) {
  std::vector<Location> result;
  Unit* unit = unit_of(address);
  if (unit == nullptr)
    return result;
  UnitReader reader(sections_, *unit);
  // The function holding the address, then the inlined calls inside it
  // that do: outermost first. The functions of the unit's top level and
  // namespaces first; those defined elsewhere (lambdas) only when no such
  // function holds the address, as indexing them reads every entry.
  if (unit->indexed == 0)
    index_functions(*unit, reader, false);
  std::vector<Entry> chain = function_of(*unit, reader, address);
  if (chain.empty() && unit->indexed == 1) {
    index_functions(*unit, reader, true);
    chain = function_of(*unit, reader, address);
  }
  if (!unit->lines_read) {
    unit->lines_read = true;
    if (unit->has_lines)
      unit->lines = std::make_unique<LineTable>(sections_, unit->stmt_list,
                                                unit->comp_dir);
  }
  LineTable* lines = unit->lines.get();
  Location here;
  here.function = chain.empty() ? 0 : chain.back().offset;
  // The innermost function's code is in the file it is declared in: when
  // that is a library's, so is the row, which is not read (the index of
  // a unit's line program is most of the cost of an address).
  const std::string declared = lines != nullptr && here.function != 0
                                   ? lines->file(declared_file(here.function))
                                   : std::string();
  if (!declared.empty() && library_file != nullptr && library_file(declared))
    here.file = declared;
  else if (lines != nullptr)
    lines->find(address, here.file, here.line);
  result.push_back(std::move(here));
  // Each inlined call was made in the function (or inlined call) around it.
  for (std::size_t i = chain.size(); i-- > 1;) {
    const Entry& inlined = chain[i];
    if (inlined.tag != tag_inlined_subroutine)
      break;
    Location call;
    if (lines != nullptr && inlined.call_file.kind == Value::Kind::constant)
      call.file = lines->file(inlined.call_file.number);
    if (inlined.call_line.kind == Value::Kind::constant &&
        inlined.call_line.number <= INT32_MAX)
      call.line = static_cast<int>(inlined.call_line.number);
    call.function = chain[i - 1].offset;
    result.push_back(std::move(call));
  }
  return result;
}

std::uint64_t Reader::declared_file(std::uint64_t function) {
  for (int hop = 0; hop < 8 && function != 0; ++hop) {
    Unit* unit = unit_at(function);
    if (unit == nullptr)
      break;
    UnitReader reader(sections_, *unit);
    Cursor cursor = reader.at(function);
    Entry entry;
    if (!reader.read_entry(cursor, entry))
      break;
    if (entry.decl_file.kind == Value::Kind::constant)
      return entry.decl_file.number;
    function = entry.origin != 0 ? entry.origin : entry.specification;
  }
  return ~std::uint64_t(0); // no such file
}

std::string Reader::function_name(std::uint64_t function) {
  const char* name = nullptr;
  // An inlined call names its abstract origin, a definition its
  // declaration (a member function's): the name is at the end.
  for (int hop = 0; hop < 8 && function != 0; ++hop) {
    Unit* unit = unit_at(function);
    if (unit == nullptr)
      break;
    UnitReader reader(sections_, *unit);
    Cursor cursor = reader.at(function);
    Entry entry;
    if (!reader.read_entry(cursor, entry))
      break;
    if (const char* linkage_name = reader.text(entry.linkage_name))
      return linkage_name;
    if (name == nullptr)
      name = reader.text(entry.name);
    function = entry.origin != 0 ? entry.origin : entry.specification;
  }
  return name != nullptr ? name : "";
}

} // namespace cunumpy::Impl::dwarf
