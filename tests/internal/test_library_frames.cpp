// Which frames are never a call site: those of Kokkos, the runtimes and the
// CUDA libraries (a copy CUDA's record reports is captured under them, in
// CUPTI's callback), by their modules' names. cunumpy's own modules are
// known by their addresses (call_sites.modules_named_like_cunumpys).

#include <gtest/gtest.h>
#include <string>

#include "call_sites/call_sites.hpp"

namespace {

using cunumpy::Impl::is_library_frame;
using cunumpy::Impl::SourceFrame;

SourceFrame in_module(std::string module) {
  SourceFrame frame;
  frame.module = std::move(module);
  return frame;
}

TEST(LibraryFrames, TheCudaLibrariesAreSkipped) {
  for (const char* module :
       {"/usr/lib/x86_64-linux-gnu/libcuda.so.1",
        "/usr/local/cuda/lib64/libcudart.so.13",
        "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
        "/usr/local/cuda/lib64/libcublas.so.13",
        "/usr/local/cuda/lib64/libcublasLt.so.13",
        "/usr/local/cuda/lib64/libcusparse.so.12",
        "/opt/nccl/lib/libnccl.so.2"})
    EXPECT_TRUE(is_library_frame(in_module(module))) << module;
}

TEST(LibraryFrames, TheProgramIsNot) {
  SourceFrame frame = in_module("/home/user/solver/build/solver");
  frame.file = "/home/user/solver/src/solver.cpp";
  frame.line = 88;
  EXPECT_FALSE(is_library_frame(frame));
  EXPECT_FALSE(is_library_frame(in_module("/home/user/lib/libcudaish.so")))
      << "a name that only starts like one";
  EXPECT_TRUE(is_library_frame(in_module("/usr/lib/libkokkoscore.so.4.6")));
}

TEST(LibraryFrames, CunumpysNamesAreNotEnough) {
  // PyPI's pet-kokkos names its extension as cunumpy names its own.
  for (const char* module :
       {"/venv/lib/python3.11/site-packages/pet/_core.cpython-311-x86_64-"
        "linux-gnu.so",
        "/home/user/lib/libcunumpy_solver.so"})
    EXPECT_FALSE(is_library_frame(in_module(module))) << module;
}

} // namespace
