// The pure rules of src/core/recorder/kokkos_rules.hpp, for the Kokkos Tools
// interfaces of Kokkos 3.4, 3.5, 3.6 to 4.4 and 4.5 on, whatever Kokkos this
// test is built with; and the interface the in-process hooks give the
// recorder.

#include <cstdint>
#include <gtest/gtest.h>
#include <string>

#include <Kokkos_Core.hpp>

#include <cunumpy/spaces.hpp>

#include "recorder/kokkos_rules.hpp"
#include "recorder/recorder.hpp"

namespace {

using cunumpy::EventKind;
using cunumpy::SpaceSide;
using cunumpy::Impl::KokkosTraits;
namespace rules = cunumpy::Impl;

namespace kokkosp = cunumpy::Impl::kokkosp;
constexpr KokkosTraits kokkos3{kokkosp::interface_3_4};
constexpr KokkosTraits kokkos4{kokkosp::interface_4_5};

/// Kokkos 4's device id of `instance` of an execution space of `type`.
constexpr std::uint32_t device_id(std::uint32_t type, std::uint32_t instance) {
  return (type << 24) | instance;
}

TEST(KokkosRules, Kokkos35AndLaterReportFences) {
  EXPECT_FALSE(KokkosTraits{}.reports_fences()); // not known yet
  EXPECT_FALSE(KokkosTraits{kokkosp::interface_3_4}.reports_fences());
  EXPECT_TRUE(KokkosTraits{kokkosp::interface_3_5}.reports_fences());
  EXPECT_TRUE(KokkosTraits{kokkosp::interface_3_6}.reports_fences());
  EXPECT_TRUE(KokkosTraits{kokkosp::interface_4_5}.reports_fences());
}

TEST(KokkosRules, TheKnownInterfacesAreTheReleasedOnes) {
  for (std::uint64_t version : {20210225u, 20210623u, 20211015u, 20240906u})
    EXPECT_TRUE(kokkosp::known_interface(version)) << version;
  for (std::uint64_t version : {0u, 20200625u, 20211016u, 20991231u})
    EXPECT_FALSE(kokkosp::known_interface(version)) << version;
}

TEST(KokkosRules, TheInProcessHooksGiveTheInterfaceOfTheirKokkos) {
  // This test is built with the Kokkos the library was built with.
  cunumpy::Impl::ensure_hooks();
  EXPECT_EQ(rules::Recorder::instance().kokkos().interface,
            std::uint64_t(KOKKOSP_INTERFACE_VERSION));
}

TEST(KokkosRules, OnKokkos3EveryCopyBlocksButCunumpysAsynchronousOnes) {
  for (bool saw_fence : {false, true})
    for (bool scalar : {false, true}) {
      SCOPED_TRACE("saw_fence=" + std::to_string(saw_fence) +
                   " scalar=" + std::to_string(scalar));
      EXPECT_TRUE(rules::copy_is_blocking(false, saw_fence, scalar, kokkos3));
      EXPECT_FALSE(rules::copy_is_blocking(true, saw_fence, scalar, kokkos3));
    }
}

TEST(KokkosRules, OnKokkos4ACopyBlocksIffFencedInsideOrAScalarRead) {
  for (const KokkosTraits& kokkos :
       {KokkosTraits{kokkosp::interface_3_5}, kokkos4}) {
    SCOPED_TRACE("interface " + std::to_string(kokkos.interface));
    EXPECT_FALSE(rules::copy_is_blocking(false, false, false, kokkos));
    EXPECT_TRUE(rules::copy_is_blocking(false, true, false, kokkos));
    EXPECT_TRUE(rules::copy_is_blocking(false, false, true, kokkos));
    EXPECT_TRUE(rules::copy_is_blocking(false, true, true, kokkos));
    for (bool saw_fence : {false, true})
      for (bool scalar : {false, true})
        EXPECT_FALSE(rules::copy_is_blocking(true, saw_fence, scalar, kokkos));
  }
}

TEST(KokkosRules, HostExecutionSpaceFencesAreNeverWaitsForADevice) {
  // Serial 0, OpenMP 1, Cuda 2, HIP 3, OpenMPTarget 4, HPX 5, Threads 6,
  // SYCL 7, OpenACC 8.
  const bool host_type[] = {true, true, false, false, false,
                            true, true, false, false};
  for (std::uint32_t type = 0; type < 9; ++type)
    for (std::uint32_t instance : {0u, 1u, 0x00ffffffu}) {
      SCOPED_TRACE("type " + std::to_string(type) + " instance " +
                   std::to_string(instance));
      const std::uint32_t id = device_id(type, instance);
      // Kokkos 3.4 reports no fences, nor their execution spaces.
      EXPECT_FALSE(rules::is_host_execution_space_fence(id, kokkos3));
      EXPECT_EQ(rules::is_host_execution_space_fence(id, kokkos4),
                host_type[type]);
    }
}

TEST(KokkosRules, ToolFencesAreNamedSo) {
  EXPECT_TRUE(rules::is_tool_fence(
      "Kokkos::Tools::invoke_kokkosp_callback: Kokkos Profile Tool Fence"));
  EXPECT_TRUE(rules::is_tool_fence("Kokkos Profile Tool Fence"));
  EXPECT_FALSE(rules::is_tool_fence("Kokkos::fence: Unnamed Global Fence"));
  EXPECT_FALSE(rules::is_tool_fence("Kokkos Profile Tool"));
  EXPECT_FALSE(rules::is_tool_fence(""));
}

TEST(KokkosRules, ImplicitFencesAreTheOnesKokkosNamesAfterWhatNeedsThem) {
  for (const char* name :
       {"Kokkos::deep_copy: copy between contiguous views, post deep copy "
        "fence",
        "Kokkos::Impl::ParallelReduce<Serial>: fence after reduction",
        "Kokkos::Cuda: backend fence after async malloc",
        "HostSpace::impl_deallocate before free",
        "CudaSpace::impl_allocate: post allocation fence",
        "SharedAllocationRecord<Kokkos::CudaSpace, void>::"
        "SharedAllocationRecord(): fence after copying header from "
        "HostSpace"}) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(rules::is_implicit_fence(name));
  }
  for (const char* name :
       {"Kokkos::fence: Unnamed Global Fence",
        "Kokkos::Cuda::fence: Unnamed Instance Fence",
        "Kokkos::Serial::fence: Unnamed Instance Fence", "cunumpy::synchronize",
        "my solver: wait for the halo", "kokkos::lower case",
        "MySharedAllocationRecord", ""}) {
    SCOPED_TRACE(name);
    EXPECT_FALSE(rules::is_implicit_fence(name));
  }
}

TEST(KokkosRules, AGlobalFenceHasNoInstanceBits) {
  EXPECT_TRUE(rules::is_global_fence(0));
  EXPECT_TRUE(rules::is_global_fence(device_id(2, 0)));
  EXPECT_TRUE(rules::is_global_fence(device_id(0xff, 0)));
  EXPECT_FALSE(rules::is_global_fence(device_id(2, 1)));
  EXPECT_FALSE(rules::is_global_fence(device_id(0, 1u << 17))); // device 1
  // Kokkos' DeepCopyResourceSynchronization: a fence of the deep copy's
  // own instance, not a global one.
  EXPECT_FALSE(rules::is_global_fence(device_id(2, 0x00ffffff)));
}

TEST(KokkosRules, TheKindOfACopyFollowsItsSides) {
  EventKind kind = EventKind::sync;
  EXPECT_FALSE(rules::copy_kind(SpaceSide::host, SpaceSide::host, kind));
  EXPECT_EQ(kind, EventKind::sync); // left alone
  ASSERT_TRUE(rules::copy_kind(SpaceSide::host, SpaceSide::device, kind));
  EXPECT_EQ(kind, EventKind::to_host);
  ASSERT_TRUE(rules::copy_kind(SpaceSide::device, SpaceSide::host, kind));
  EXPECT_EQ(kind, EventKind::to_device);
  ASSERT_TRUE(rules::copy_kind(SpaceSide::device, SpaceSide::device, kind));
  EXPECT_EQ(kind, EventKind::device_copy);
}

TEST(KokkosRules, AScalarReadIsACopyToTheHostLabelledScalar) {
  EXPECT_TRUE(rules::is_scalar_read(EventKind::to_host, "Scalar"));
  EXPECT_FALSE(rules::is_scalar_read(EventKind::to_device, "Scalar"));
  EXPECT_FALSE(rules::is_scalar_read(EventKind::device_copy, "Scalar"));
  EXPECT_FALSE(rules::is_scalar_read(EventKind::to_host, nullptr));
  EXPECT_FALSE(rules::is_scalar_read(EventKind::to_host, "scalar"));
  EXPECT_FALSE(rules::is_scalar_read(EventKind::to_host, "Scalars"));
  EXPECT_FALSE(rules::is_scalar_read(EventKind::to_host, ""));
  EXPECT_FALSE(rules::is_scalar_read(EventKind::to_host, "S"));
  EXPECT_FALSE(rules::is_scalar_read(EventKind::to_host, "Scala"));
  EXPECT_FALSE(rules::is_scalar_read(EventKind::to_host, "calar"));
}

} // namespace
