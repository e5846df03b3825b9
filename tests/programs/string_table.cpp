// The recorder's string table keeps at most its capacity of labels and
// descriptions: past it, new strings share one "(other: ...)" id, said once
// on stderr; strings seen before keep their ids.

#include "recorder/string_table.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include "check.hpp"

int main() {
  using cunumpy::Impl::StringTable;
  StringTable table(6); // "", 4 strings, the overflow entry
  const auto first = table.intern("state");
  const std::string said = stderr_of([&] {
    for (int step = 0; step < 100; ++step)
      table.intern("snapshot_" + std::to_string(step));
  });
  CHECK_EQ(said, "cunumpy: more than 4 distinct labels, descriptions and "
                 "region names; new ones are recorded as \"" +
                     std::string(StringTable::overflow_text) +
                     "\" (label your views without step numbers)\n");
  CHECK_EQ(table.size(), 6u);
  CHECK_EQ(table.intern("state"), first); // seen before: its own id
  CHECK_EQ(table.view(first), std::string("state"));
  const auto other = table.intern("snapshot_99");
  CHECK_EQ(table.view(other), std::string(StringTable::overflow_text));
  CHECK_EQ(stderr_of([&] { CHECK_EQ(table.intern("another"), other); }),
           std::string()); // said once
  CHECK_EQ(table.view(table.intern("snapshot_2")), std::string("snapshot_2"));
  CHECK_EQ(table.size(), 6u);
  CHECK_EQ(StringTable().intern("x") != 0, true); // the default capacity
  return failures() == 0 ? 0 : 1;
}
