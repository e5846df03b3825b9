"""as_device_array(value, dtype, ndim=None, *, name=None): the device array
itself when it already is in the right form, else exactly one copy."""

import numpy as np
import pytest

import cunumpy as xp
from helpers import next_site

count_transfers = xp.profiling.count_transfers


def test_the_documented_example(device_space):
    markers = np.random.default_rng(0).standard_normal((100, 3))
    with count_transfers() as counter:
        degree = xp.as_device_array((3, 3, 3), np.int32, ndim=1, name="degree")
        markers = xp.as_device_array(markers, np.float64, ndim=2, name="markers")
    assert isinstance(degree, xp.DeviceArray)
    assert (degree.shape, degree.dtype) == ((3,), np.int32)
    assert degree.flags.c_contiguous and degree.space == device_space
    np.testing.assert_array_equal(xp.to_numpy(degree), [3, 3, 3])
    assert markers.shape == (100, 3) and markers.dtype == np.float64
    assert counter.to_device == 2 and counter.total == 2
    assert [e.what for e in counter.events] == [
        "as_device_array(shape=(3,), dtype=int32)",
        "as_device_array(shape=(100, 3), dtype=float64)",
    ]
    assert degree.label == "degree"


def test_a_c_contiguous_device_array_of_that_dtype_is_returned_unchanged(device_space, ext):
    state = xp.to_device(np.arange(6.0).reshape(2, 3))
    with count_transfers() as counter:
        same = xp.as_device_array(state, np.float64, ndim=2, name="state")
    assert same is state
    assert counter.total == 0
    ext.scale(same, 2.0)  # kernels write into the caller's array
    np.testing.assert_array_equal(xp.to_numpy(state), np.arange(6.0).reshape(2, 3) * 2)


def test_a_host_array_becomes_one_c_contiguous_device_copy(device_space):
    host = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    with count_transfers() as counter:
        site = next_site()
        device = xp.as_device_array(host, np.float32, ndim=2)
    assert device.flags.c_contiguous and device.dtype == np.float32
    np.testing.assert_array_equal(xp.to_numpy(device), host.astype(np.float32))
    (event,) = counter.events
    assert (event.kind, event.site, event.nbytes) == ("to_device", site, 48)


def test_a_strided_host_view_becomes_one_device_copy(device_space):
    host = np.arange(20.0)[::4]
    with count_transfers() as counter:
        device = xp.as_device_array(host, np.float64)
    assert counter.to_device == 1
    np.testing.assert_array_equal(xp.to_numpy(device), host)


def test_another_dtype_on_the_device_is_one_device_copy(device_space):
    state = xp.to_device(np.arange(5, dtype=np.int64))
    with count_transfers() as counter:
        site = next_site()
        converted = xp.as_device_array(state, np.float32, name="state")
    assert converted is not state and converted.dtype == np.float32
    assert converted.space == device_space
    assert (counter.device_copy, counter.to_host, counter.to_device) == (1, 0, 0)
    (event,) = counter.events
    assert (event.kind, event.site) == ("device_copy", site)
    assert event.what == "as_device_array(shape=(5,), dtype=int64)"
    np.testing.assert_array_equal(xp.to_numpy(converted), np.arange(5, dtype=np.float32))


def test_an_f_ordered_device_array_becomes_one_c_contiguous_device_copy(device_space):
    host = np.asfortranarray(np.arange(24.0).reshape(2, 3, 4))
    state = xp.to_device(host)
    assert not state.flags.c_contiguous
    with count_transfers() as counter:
        packed = xp.as_device_array(state, np.float64, ndim=3)
    assert packed.flags.c_contiguous
    assert (counter.device_copy, counter.total) == (1, 1)
    back = xp.to_numpy(packed)
    assert back.flags.c_contiguous
    np.testing.assert_array_equal(back, host)


@pytest.mark.parametrize("to", ["bool", "int8", "uint16", "float32", "complex128"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_device_conversions_match_numpy(device_space, to, order):
    host = np.asarray(np.arange(12.0).reshape(3, 4) * 1.5, order=order)
    converted = xp.to_device(host).astype(to)
    assert converted.flags.c_contiguous and converted.dtype == np.dtype(to)
    np.testing.assert_array_equal(xp.to_numpy(converted), host.astype(to))


def test_complex_to_complex_on_the_device(device_space):
    host = np.array([[1 + 2j, -3.5j], [4.25, 0]], dtype=np.complex128, order="F")
    converted = xp.to_device(host).astype(np.complex64)
    np.testing.assert_array_equal(xp.to_numpy(converted), host.astype(np.complex64))


def test_complex_to_real_on_the_device_raises_type_error(device_space):
    device = xp.to_device(np.array([1 + 2j]))
    with count_transfers() as counter:
        with pytest.raises(TypeError, match="imaginary part"):
            xp.as_device_array(device, np.float64)
    assert counter.total == 0
    assert xp.as_device_array(device, np.complex64).dtype == np.complex64


def test_rank_mismatch_raises_value_error_with_the_name(device_space):
    with pytest.raises(ValueError, match=r"as_device_array: 'degree' has rank 2, expected 1"):
        xp.as_device_array([[1, 2]], np.int32, ndim=1, name="degree")
    state = xp.to_device(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="'state' has rank 2, expected 3"):
        xp.as_device_array(state, np.float64, ndim=3, name="state")


def test_on_the_numpy_backend_it_raises_runtime_error():
    with count_transfers() as counter:
        with pytest.raises(RuntimeError, match="NumPy backend"):
            xp.as_device_array((3, 3, 3), np.int32, ndim=1, name="degree")
    assert counter.total == 0
