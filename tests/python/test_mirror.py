"""DeviceMirror: a host buffer owned by someone else, paired with a device
copy; both directions are explicit and counted."""

import numpy as np
import pytest

import cunumpy as xp
from helpers import next_site

count_transfers = xp.profiling.count_transfers


def test_mirror_round_trip_in_place(device_space, ext):
    host = np.arange(6.0)  # owned by a host library
    with count_transfers() as counter:
        site = next_site()
        mirror = xp.DeviceMirror(host)
    assert isinstance(mirror.device, xp.DeviceArray)
    assert mirror.host is host
    ext.scale(mirror.device, 10.0)  # a kernel writes into mirror.device
    np.testing.assert_array_equal(host, np.arange(6.0))
    with count_transfers() as refresh:
        back_site = next_site()
        assert mirror.to_host() is host
    np.testing.assert_array_equal(host, np.arange(6.0) * 10.0)  # in place

    host[:] = -1.0  # CPU work changes the host buffer
    with count_transfers() as upload:
        up_site = next_site()
        assert mirror.to_device() is mirror.device
    np.testing.assert_array_equal(xp.to_numpy(mirror.device), -np.ones(6))

    assert [(e.kind, e.site, e.what) for e in counter.events] == [
        ("to_device", site, "DeviceMirror(shape=(6,), dtype=float64)")
    ]
    assert [(e.kind, e.site, e.what) for e in refresh.events] == [
        ("to_host", back_site, "DeviceMirror.to_host(shape=(6,), dtype=float64)")
    ]
    assert [(e.kind, e.site) for e in upload.events] == [("to_device", up_site)]
    assert refresh.events[0].blocking


def test_mirror_of_a_non_contiguous_buffer_refreshes_it_in_place(device_space, ext):
    owner = np.zeros((4, 6))
    host = owner[:, ::2]  # a strided view of a larger buffer
    host[:] = 1.0
    mirror = xp.DeviceMirror(host)
    ext.scale(mirror.device, 3.0)
    with count_transfers() as counter:
        mirror.to_host()
    np.testing.assert_array_equal(owner[:, ::2], 3.0)
    np.testing.assert_array_equal(owner[:, 1::2], 0.0)
    assert counter.to_host == 1
    mirror.to_device()
    np.testing.assert_array_equal(xp.to_numpy(mirror.device), 3.0 * np.ones((4, 3)))


def test_mirror_keeps_f_order(device_space):
    host = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    mirror = xp.DeviceMirror(host)
    assert mirror.device.flags.f_contiguous
    with count_transfers() as counter:
        mirror.to_host()
        mirror.to_device()
    assert (counter.to_host, counter.to_device) == (1, 1)
    np.testing.assert_array_equal(host, np.arange(6.0).reshape(2, 3))


def test_waiting_for_a_producer_is_a_sync(device_space):
    class Stream:
        synchronized = 0

        def synchronize(self):
            Stream.synchronized += 1

    mirror = xp.DeviceMirror(np.ones(3))
    with count_transfers() as counter:
        mirror.to_host(stream=Stream())
        mirror.to_host(event=Stream())
        mirror.to_host()
    assert Stream.synchronized == 2
    assert counter.syncs == 2 and counter.to_host == 3


def test_on_the_numpy_backend_the_mirror_is_the_host_array():
    host = np.ones(3)
    with count_transfers() as counter:
        mirror = xp.DeviceMirror(host)
        assert mirror.device is host
        assert mirror.to_host() is host
        assert mirror.to_device() is host
    assert counter.total == 0


def test_mirror_needs_a_numpy_array(device_space):
    with pytest.raises(TypeError, match="NumPy array"):
        xp.DeviceMirror([1.0, 2.0])
