#ifndef CUNUMPY_CUNUMPY_HPP
#define CUNUMPY_CUNUMPY_HPP

// cunumpy: explicit, counted and enforceable host/device copies for Kokkos.

#include <cunumpy/advice.hpp>
#include <cunumpy/as_device_array.hpp>
#include <cunumpy/assert_no_transfers.hpp>
#include <cunumpy/budget_snapshot.hpp>
#include <cunumpy/conversions.hpp>
#include <cunumpy/cuda_view.hpp>
#include <cunumpy/debug_sync.hpp>
#include <cunumpy/device_mirror.hpp>
#include <cunumpy/event.hpp>
#include <cunumpy/host_call.hpp>
#include <cunumpy/host_staging.hpp>
#include <cunumpy/pin_memory.hpp>
#include <cunumpy/source_location.hpp>
#include <cunumpy/spaces.hpp>
#include <cunumpy/synchronize.hpp>
#include <cunumpy/to_host_async.hpp>
#include <cunumpy/transfer_budget.hpp>
#include <cunumpy/transfer_counter.hpp>
#include <cunumpy/transfer_error.hpp>
#include <cunumpy/version.hpp>

#endif
