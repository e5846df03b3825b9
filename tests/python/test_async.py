"""to_host_async and memory.HostStaging: copies the host does not wait for,
counted as non-blocking to_host and shown [async]."""

import numpy as np
import pytest

import cunumpy as xp
from cunumpy import _core
from helpers import next_site

count_transfers = xp.profiling.count_transfers


def test_the_documented_convergence_loop(fake):
    tol = 1e-3
    residual = 1.0
    iterations = 0
    with count_transfers() as counter:
        residual_norm = xp.to_device(np.array(residual))
        for iteration in range(100):
            pending = xp.to_host_async(residual_norm)  # a device scalar; returns at once
            residual /= 10.0  # ... queue the next iteration's kernels
            iterations += 1
            if pending.ready() and pending.result() < tol:
                break
            residual_norm = xp.to_device(np.array(residual))
    assert iterations == 5  # read one iteration late
    assert counter.to_host == 5
    assert counter.async_count("to_host") == 5
    assert counter.bytes_to_host == 5 * 8
    assert counter.syncs == 0  # the fake device copies at once: no wait


def test_result_is_a_numpy_scalar_for_0d_and_an_array_otherwise(device_space):
    scalar = xp.to_host_async(xp.to_device(np.array(2.5, dtype=np.float32))).result()
    assert type(scalar) is np.float32 and scalar == 2.5
    array = xp.to_host_async(xp.to_device(np.arange(6).reshape(2, 3))).result()
    assert type(array) is np.ndarray and array.shape == (2, 3)
    np.testing.assert_array_equal(array, np.arange(6).reshape(2, 3))
    fortran = np.asfortranarray(np.ones((2, 3)))
    assert xp.to_host_async(xp.to_device(fortran)).result().flags.f_contiguous


def test_the_async_copy_is_counted_at_the_callers_line(fake):
    norm = xp.to_device(np.array(0.25))
    with count_transfers() as counter:
        site = next_site()
        pending = xp.to_host_async(norm)
    assert pending.ready()
    (event,) = counter.events
    assert (event.kind, event.site, event.nbytes) == ("to_host", site, 8)
    assert not event.blocking and getattr(event, "async")
    assert event.what == "to_host_async(shape=(), dtype=float64)"


def test_on_the_numpy_backend_the_value_is_copied_at_once():
    value = np.array(3.0)
    with count_transfers() as counter:
        pending = xp.to_host_async(value)
        value[()] = 4.0
    assert pending.ready() and pending.result() == 3.0
    assert type(pending.result()) is np.float64
    assert counter.total == 0
    assert xp.to_host_async([1, 2]).result().tolist() == [1, 2]


def test_waiting_for_an_unfinished_copy_is_a_sync(device_space):
    # The fake device copies at once; a copy whose end is known only by
    # fencing (as on backends without event queries) is unfinished until
    # waited for.
    with count_transfers() as counter:
        pending = xp.PendingHost(np.array(1.5), _core.AsyncCopy.fenced())
        assert not pending.ready()
        site = next_site()
        assert pending.result() == 1.5
        assert pending.ready()
        pending.result()  # finished: no second wait
    (event,) = counter.events
    assert (event.kind, event.site, event.what) == ("sync", site, "PendingHost.result()")
    assert counter.syncs == 1 and counter.total == 0


def test_host_staging_copies_are_async_and_reuse_their_buffers(device_space):
    staging = xp.memory.HostStaging()
    state = xp.to_device(np.arange(1000.0))
    with count_transfers() as counter:
        site = next_site()
        first = staging.copy(state).result()
        np.testing.assert_array_equal(first, np.arange(1000.0))
        held = first  # still held: never overwritten
        second = staging.copy(state).result()
        assert second is not held
        del first, held, second
        for _ in range(5):
            staging.copy(state).result()  # a steady loop allocates nothing
    assert staging.allocations == 2 and staging.buffers == 2
    assert staging.nbytes == 2 * 8000
    assert counter.to_host == 7 and counter.async_count("to_host") == 7
    assert (
        f"    {site}: HostStaging.copy(shape=(1000,), dtype=float64) (x1) [async]"
        in counter.report().split("\n")
    )
    staging.clear()
    assert staging.buffers == 0 and staging.allocations == 0


def test_async_copies_land_in_page_locked_buffers_of_their_shape(fake):
    state = xp.to_device(np.arange(12.0).reshape(3, 4))
    scalar = xp.to_device(np.array(7, dtype=np.int16))
    with count_transfers() as counter:
        pending = xp.to_host_async(state)
        small = xp.to_host_async(scalar)
        assert pending.ready() and small.ready()  # the fake device: at once
        array = pending.result()
        assert small.result() == 7 and type(small.result()) is np.int16
    assert array.shape == (3, 4) and array.flags.c_contiguous
    np.testing.assert_array_equal(array, np.arange(12.0).reshape(3, 4))
    assert counter.to_host == 2 and counter.async_count("to_host") == 2
    assert counter.syncs == 0
    # Results live in cunumpy's pinned buffers (a pool for scalars), kept
    # alive by the arrays: they stay valid after the PendingHost is gone.
    del pending
    assert array.base is not None and array.sum() == 66.0


def test_host_staging_of_host_arrays_and_scalars(device_space):
    staging = xp.memory.HostStaging()
    host = np.ones(4)
    with count_transfers() as counter:
        assert staging.copy(host).result() is host
    assert counter.total == 0
    with pytest.raises(ValueError, match="to_host_async"):
        staging.copy(xp.to_device(np.array(1.0)))
