"""The three conversion functions and to_device: when they copy, what they
return, and that every copy is one counted, attributed transfer."""

import numpy as np
import pytest

import cunumpy as xp
from helpers import next_site

count_transfers = xp.profiling.count_transfers


# "The three conversion functions" table and the sentences under it.


def test_to_numpy_of_a_numpy_array_is_the_array_itself_without_a_copy():
    a = np.arange(10.0)
    with count_transfers() as counter:
        assert xp.to_numpy(a) is a
        view = a[::2]
        assert xp.to_numpy(view) is view
    assert counter.total == 0
    assert counter.events == []


@pytest.mark.parametrize(
    "value, expected",
    [
        ([1.0, 2.0, 3.0], np.array([1.0, 2.0, 3.0])),
        ((1, 2, 3), np.array([1, 2, 3])),
        ([[1, 2], [3, 4]], np.array([[1, 2], [3, 4]])),
        (2.5, np.array(2.5)),
    ],
)
def test_to_numpy_accepts_what_numpy_asarray_accepts(value, expected):
    with count_transfers() as counter:
        result = xp.to_numpy(value)
    assert type(result) is np.ndarray
    np.testing.assert_array_equal(result, expected)
    assert result.dtype == expected.dtype
    assert counter.total == 0


def test_to_numpy_of_a_numpy_subclass_returns_it_as_it_is():
    matrix = np.ma.masked_array([1.0, 2.0], mask=[False, True])
    assert xp.to_numpy(matrix) is matrix


def test_to_numpy_of_a_device_array_is_one_counted_copy(device_space):
    a = np.linspace(0.0, 1.0, 100000)
    device = xp.to_device(a)
    with count_transfers() as counter:
        site = next_site()
        host = xp.to_numpy(device)
    assert type(host) is np.ndarray
    np.testing.assert_array_equal(host, a)
    assert host is not a
    assert counter.total == 1
    assert counter.to_host == 1
    assert counter.bytes_to_host == a.nbytes
    (event,) = counter.events
    assert event.kind == "to_host"
    assert event.nbytes == 800000
    assert event.site == site
    assert event.what == "to_numpy(shape=(100000,), dtype=float64)"
    assert event.src_space == device_space
    assert event.dst_space == "Host"
    assert event.blocking and not getattr(event, "async")


def test_to_device_of_a_host_array_is_one_counted_copy(device_space):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    with count_transfers() as counter:
        site = next_site()
        device = xp.to_device(a)
    assert isinstance(device, xp.DeviceArray)
    assert device.space == device_space
    assert (device.shape, device.dtype, device.ndim) == ((3, 4), np.int32, 2)
    assert (device.size, device.nbytes, device.itemsize) == (12, 48, 4)
    assert counter.to_device == 1 and counter.total == 1
    assert counter.bytes_to_device == 48
    (event,) = counter.events
    assert (event.kind, event.site) == ("to_device", site)
    assert event.what == "to_device(shape=(3, 4), dtype=int32)"
    assert (event.src_space, event.dst_space) == ("Host", device_space)
    np.testing.assert_array_equal(xp.to_numpy(device), a)


def test_to_device_of_a_device_array_is_the_array_itself(device_space):
    device = xp.to_device(np.ones(5))
    with count_transfers() as counter:
        assert xp.to_device(device) is device
        assert xp.to_cunumpy(device) is device
    assert counter.total == 0


def test_to_device_of_lists_and_scalars(device_space):
    with count_transfers() as counter:
        listed = xp.to_device([[1.0, 2.0], [3.0, 4.0]])
        scalar = xp.to_device(7)
    assert listed.shape == (2, 2) and scalar.shape == ()
    assert scalar.dtype == np.array(7).dtype
    assert counter.to_device == 2
    assert xp.to_numpy(scalar) == 7


def test_to_cunumpy_on_the_numpy_backend_behaves_like_to_numpy(device_space):
    device = xp.to_device(np.arange(3.0))
    xp.set_backend("numpy")
    a = np.arange(4.0)
    with count_transfers() as counter:
        assert xp.to_cunumpy(a) is a
        site = next_site()
        host = xp.to_cunumpy(device)
    assert type(host) is np.ndarray
    np.testing.assert_array_equal(host, [0.0, 1.0, 2.0])
    (event,) = counter.events
    assert (event.kind, event.site) == ("to_host", site)
    assert event.what == "to_cunumpy(shape=(3,), dtype=float64)"


def test_to_cunumpy_on_the_kokkos_backend_copies_host_arrays_to_the_device(device_space):
    a = np.arange(6.0)
    with count_transfers() as counter:
        site = next_site()
        device = xp.to_cunumpy(a)
    assert isinstance(device, xp.DeviceArray)
    (event,) = counter.events
    assert (event.kind, event.site) == ("to_device", site)
    assert event.what == "to_cunumpy(shape=(6,), dtype=float64)"


def test_conversions_modify_neither_the_source_nor_the_backend(device_space, ext):
    a = np.arange(8.0)
    original = a.copy()
    device = xp.to_device(a)
    ext.scale(device, -1.0)  # a kernel writes into the device array
    np.testing.assert_array_equal(a, original)
    host = xp.to_numpy(device)
    host[:] = 42.0
    np.testing.assert_array_equal(xp.to_numpy(device), -original)
    for convert in (xp.to_numpy, xp.to_device, xp.to_cunumpy):
        convert(a)
        convert(device)
        assert xp.get_backend() == "kokkos"
    np.testing.assert_array_equal(a, original)
    xp.set_backend("numpy")
    xp.to_cunumpy(device)
    xp.to_device(a)
    assert xp.get_backend() == "numpy"


def test_to_cupy_raises_import_error_without_cupy():
    if xp.cuda.is_available():
        pytest.skip("CuPy and CUDA are usable here")
    with pytest.raises(ImportError, match="to_cupy"):
        xp.to_cupy(np.ones(3))


def test_a_cupy_array_is_returned_as_it_is_by_to_cupy():
    cupy = pytest.importorskip("cupy")
    if not xp.cuda.is_available():
        pytest.skip("no usable CUDA device")
    device = cupy.arange(3.0)
    with count_transfers() as counter:
        assert xp.to_cupy(device) is device
    assert counter.total == 0


# Layout: "F-contiguous stays F-contiguous, everything else arrives
# C-contiguous", in both directions.


def test_f_contiguous_arrays_stay_f_contiguous_both_ways(device_space):
    a = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    with count_transfers() as counter:
        device = xp.to_device(a)
        back = xp.to_numpy(device)
    assert device.flags.f_contiguous and not device.flags.c_contiguous
    assert device.strides == a.strides
    assert back.flags.f_contiguous and not back.flags.c_contiguous
    np.testing.assert_array_equal(back, a)
    assert (counter.to_device, counter.to_host, counter.device_copy) == (1, 1, 0)


@pytest.mark.parametrize(
    "make",
    [
        lambda a: a,  # C-contiguous
        lambda a: a[:, ::2],  # strided
        lambda a: a.T[::-1],  # reversed transposed view
        lambda a: a[1],  # row view (contiguous)
    ],
)
def test_everything_else_arrives_c_contiguous(device_space, make):
    a = make(np.arange(24.0).reshape(4, 6))
    with count_transfers() as counter:
        device = xp.to_device(a)
        back = xp.to_numpy(device)
    assert device.flags.c_contiguous
    assert back.flags.c_contiguous
    np.testing.assert_array_equal(back, a)
    # Packing happens on the host: still exactly one transfer each way.
    assert (counter.to_device, counter.to_host, counter.device_copy) == (1, 1, 0)
    assert counter.bytes_to_device == a.size * 8


def test_non_native_byte_order_is_converted_on_the_host(device_space):
    a = np.arange(5, dtype=">f8")
    device = xp.to_device(a)
    assert device.dtype == np.float64
    np.testing.assert_array_equal(xp.to_numpy(device), a)


def test_device_array_has_no_implicit_conversion(device_space):
    device = xp.to_device(np.arange(3.0))
    with pytest.raises(TypeError, match=r"call cunumpy.to_numpy\(a\)"):
        np.asarray(device)
    with pytest.raises(TypeError, match="to_numpy"):
        np.array(device)
    with pytest.raises(TypeError):
        np.add(device, 1.0)


def test_device_array_attributes(device_space):
    device = xp.to_device(np.zeros((2, 3, 4), dtype=np.complex64))
    assert device.shape == (2, 3, 4)
    assert device.dtype == np.complex64
    assert device.ndim == 3 and device.size == 24
    assert device.itemsize == 8 and device.nbytes == 192
    assert device.strides == (96, 32, 8)
    assert device.flags.c_contiguous and not device.flags.f_contiguous
    assert device.flags["C_CONTIGUOUS"] and not device.flags["F_CONTIGUOUS"]
    assert device.space == device_space
    assert repr(device) == f"DeviceArray(shape=(2, 3, 4), dtype=complex64, space={device_space})"
    assert type(device).__module__ == "cunumpy"


def test_device_array_constructor_makes_zeros_without_copies(device_space):
    with count_transfers() as counter:
        device = xp.DeviceArray((3, 2), np.float32, order="F")
    assert counter.total == 0
    assert device.flags.f_contiguous and device.space == device_space
    np.testing.assert_array_equal(xp.to_numpy(device), np.zeros((3, 2), np.float32))
    with pytest.raises(ValueError, match="order"):
        xp.DeviceArray(3, order="K")
    with pytest.raises(ValueError, match="negative"):
        xp.DeviceArray((-1,))


def test_dlpack_on_the_fake_device_is_not_readable_by_numpy(fake):
    device = xp.to_device(np.arange(3.0))
    assert device.__dlpack_device__() == (12, 0)  # DLPack's extension device
    with pytest.raises((RuntimeError, BufferError)):
        np.from_dlpack(device)
    with pytest.raises(BufferError, match="copy=True"):
        device.__dlpack__(copy=True)
    with pytest.raises(BufferError, match="another device"):
        device.__dlpack__(dl_device=(1, 0))


def test_dlpack_capsules_are_consumed_by_kernels_in_place(device_space, ext):
    device = xp.to_device(np.arange(4.0))
    with count_transfers() as counter:
        ext.scale(device, 3.0)
    assert counter.total == 0
    np.testing.assert_array_equal(xp.to_numpy(device), [0.0, 3.0, 6.0, 9.0])


def test_cuda_array_interface_only_on_cuda_builds(device_space):
    device = xp.to_device(np.arange(3.0))
    if not xp._core.has_device_backend:
        assert not hasattr(device, "__cuda_array_interface__")


# The "kokkos" backend of a host-only Kokkos build: the device is the host.


def test_host_only_kokkos_backend_conversions_are_no_ops(host_only_kokkos):
    a = np.arange(6.0).reshape(2, 3)
    with count_transfers() as counter:
        device = xp.to_cunumpy(a)
        host = xp.to_numpy(device)
    assert isinstance(device, xp.DeviceArray) and device.space == "Host"
    assert np.shares_memory(host, a)
    np.testing.assert_array_equal(host, a)
    assert device.__dlpack_device__() == (1, 0)
    assert np.shares_memory(np.from_dlpack(device), a)
    assert counter.total == 0


def test_host_only_kokkos_backend_refuses_as_device_array(host_only_kokkos):
    with pytest.raises(RuntimeError, match="no device backend"):
        xp.as_device_array((3, 3, 3), np.int32, ndim=1, name="degree")


def test_device_arrays_keep_their_space_when_the_device_changes(device_space):
    device = xp.to_device(np.arange(3.0))
    xp._core.set_device_space("device")
    with count_transfers() as counter:
        host = xp.to_numpy(device)
    assert counter.to_host == 1
    np.testing.assert_array_equal(host, [0.0, 1.0, 2.0])


# "Transfer at boundaries, not in loops"


def test_moving_data_once_versus_the_anti_pattern(device_space):
    state = np.ones(1000)
    n_steps = 5
    with count_transfers() as in_loop:
        for _ in range(n_steps):
            state = xp.to_cunumpy(state)  # copied up every step
            state = state.copy()  # advance(), on the device
            state = xp.to_numpy(state)  # and down again
    assert (in_loop.to_device, in_loop.to_host) == (n_steps, n_steps)
    with count_transfers() as at_boundaries:
        state = xp.to_cunumpy(state)
        for step in range(n_steps):
            state = state.copy()
            if step % 100 == 0:
                snapshot = xp.to_numpy(state)
    assert (at_boundaries.to_device, at_boundaries.to_host) == (1, 1)
    assert at_boundaries.device_copy == n_steps
    np.testing.assert_array_equal(snapshot, np.ones(1000))


def test_forwarded_backend_operations_are_not_counted():
    with count_transfers() as counter:
        a = xp.asarray([1.0, 2.0])
        b = xp.abs(xp.fft.rfft(a)) ** 2
    assert isinstance(a, np.ndarray) and b.shape == (2,)
    assert xp.float64 is np.float64
    assert counter.total == 0


def test_the_kokkos_backend_forwards_numpy_types_and_constants(device_space):
    assert xp.float32 is np.float32
    assert xp.pi == np.pi
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        xp.no_such_name
