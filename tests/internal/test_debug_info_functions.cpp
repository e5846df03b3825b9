// The function a debug location names, for code whose entry is not where
// most functions' are: compiled without optimization (this file only), GCC
// puts the code of a lambda and of a local class's member functions in the
// entry of their class, inside the function that has it; a class
// template's member functions have theirs outside the class. The reader
// skips the bodies of classes outside functions (most of a unit's entries)
// and must still name each.

#include <dlfcn.h>
#include <elf.h>
#include <gtest/gtest.h>
#include <link.h>
#include <string>

#include "call_sites/debug_info.hpp"

namespace {

/// Where it was called from: an address in its caller.
__attribute__((noinline)) const void* caller() {
  return __builtin_return_address(0);
}

template <class T> struct Holder {
  __attribute__((noinline)) const void* where() const { return caller(); }
};

/// The name of the function holding `address` (a return address).
std::string function_at(const void* address) {
  Dl_info info{};
  if (::dladdr(address, &info) == 0 || info.dli_fname == nullptr)
    return "(no module)";
  auto link_time = reinterpret_cast<std::uintptr_t>(address) - 1;
  const auto* header = static_cast<const ElfW(Ehdr)*>(info.dli_fbase);
  if (header->e_type == ET_DYN)
    link_time -= reinterpret_cast<std::uintptr_t>(info.dli_fbase);
  cunumpy::Impl::DebugInfo reader(info.dli_fname, "");
  const auto locations = reader.locations(link_time);
  return locations.empty() ? "(no location)" : locations.front().function;
}

TEST(DebugInfoFunctions, LambdasLocalClassesAndClassTemplates) {
  struct Local {
    __attribute__((noinline)) const void* where() const { return caller(); }
  };
  const auto lambda = []() __attribute__((noinline)) {
    return caller();
  };
  const std::string in_lambda = function_at(lambda());
  const std::string in_local = function_at(Local().where());
  const std::string in_template = function_at(Holder<int>().where());
  EXPECT_EQ(in_lambda, "operator()");
  EXPECT_EQ(in_local, "where");
  EXPECT_EQ(in_template, "where");
}

} // namespace
