"""The "kokkos" backend on the real device of a device build (CudaSpace on
CUDA): copies, their spaces in events, asynchronous reads that finish while
the host runs on, and staging. Skipped on host-only builds, where the fake
device tests (the `fake` fixture) cover the same calls."""

import time

import numpy as np
import pytest

import cunumpy as xp
from cunumpy import _core

pytestmark = pytest.mark.skipif(
    not _core.has_device_backend, reason="this Kokkos build has no device"
)

count_transfers = xp.profiling.count_transfers


@pytest.fixture
def device():
    xp.set_backend("kokkos")
    yield


def wait_until_ready(pending, seconds=10.0):
    """Polls ready() (never waits) until the copy has finished."""
    deadline = time.monotonic() + seconds
    while not pending.ready():
        assert time.monotonic() < deadline, "the copy never finished"
        time.sleep(1e-4)


def test_a_round_trip_is_two_copies_between_host_and_device(device):
    host = np.arange(100000.0)
    with count_transfers() as counter:
        on_device = xp.to_device(host)
        back = xp.to_numpy(on_device)
    np.testing.assert_array_equal(back, host)
    assert (counter.to_device, counter.to_host, counter.total) == (1, 1, 2)
    assert counter.syncs == 0  # the waits inside the conversions are theirs
    spaces = [(event.src_space, event.dst_space) for event in counter.events]
    assert spaces == [("Host", _core.device_space_name()),
                      (_core.device_space_name(), "Host")]


def test_an_async_read_finishes_without_a_wait(device):
    big = xp.to_device(np.ones(1 << 24, dtype=np.float64))
    norm = xp.to_device(np.array(2.5))
    # Device arrays of 40 kB or more are freed with a device-wide fence
    # (Kokkos' cudaFreeAsync), an implicit sync: none is freed in the block.
    with count_transfers() as counter:
        converted = big.astype(np.float32)  # device work queued before the read
        pending = xp.to_host_async(norm)
        wait_until_ready(pending)
        assert pending.result() == 2.5
    assert counter.to_host == 1 and counter.async_count("to_host") == 1
    assert counter.syncs == 0  # polled until ready: result() did not wait
    del converted


def test_a_result_before_the_copy_finished_is_one_sync(device):
    big = xp.to_device(np.ones(1 << 24, dtype=np.float64))
    with count_transfers() as counter:
        converted = big.astype(np.float32)
        pending = xp.to_host_async(big)
        value = pending.result()
        assert pending.ready()
    assert value.shape == (1 << 24,) and value[-1] == 1.0
    assert counter.to_host == 1 and counter.async_count("to_host") == 1
    syncs = [event for event in counter.events if event.kind == "sync"]
    assert len(syncs) <= 1  # none when the copy won the race
    assert all(event.what == "PendingHost.result()" for event in syncs)
    del converted


def test_staging_buffers_are_reused_on_the_device(device):
    staging = xp.memory.HostStaging()
    state = xp.to_device(np.arange(1 << 20, dtype=np.float64))
    with count_transfers() as counter:
        for _ in range(4):
            snapshot = staging.copy(state)
            wait_until_ready(snapshot)
            assert snapshot.result()[-1] == (1 << 20) - 1
            del snapshot
    assert staging.allocations == 1
    assert counter.to_host == 4 and counter.async_count("to_host") == 4
