"""dtypes (bool, integers of 8 to 64 bits, float32/64, complex64/128) and
ranks 0 to 8 round-trip exactly; anything else is refused with an error that
names the problem."""

import numpy as np
import pytest

import cunumpy as xp

count_transfers = xp.profiling.count_transfers

DTYPES = [
    np.bool_,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float32,
    np.float64,
    np.complex64,
    np.complex128,
]


def sample(dtype, shape, rng):
    values = rng.integers(-100, 100, size=shape)
    if np.dtype(dtype).kind == "c":
        return (values + 1j * rng.integers(-5, 5, size=shape)).astype(dtype)
    if np.dtype(dtype).kind == "u":
        values = np.abs(values)
    return values.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_supported_dtype_round_trips(device_space, dtype, rng):
    a = sample(dtype, (7, 3), rng)
    with count_transfers() as counter:
        device = xp.to_device(a)
        back = xp.to_numpy(device)
    assert device.dtype == np.dtype(dtype)
    assert back.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(back, a)
    assert [event.nbytes for event in counter.events] == [a.nbytes, a.nbytes]
    assert np.dtype(dtype).name in counter.events[0].what
    assert xp.SUPPORTED_DTYPES.count(np.dtype(dtype).name) == 1


@pytest.mark.parametrize("ndim", range(0, 9))
@pytest.mark.parametrize("order", ["C", "F"])
def test_ranks_zero_to_eight_round_trip_in_both_orders(device_space, ndim, order, rng):
    shape = tuple(2 + (d % 2) for d in range(ndim))
    a = np.asarray(rng.standard_normal(shape), order=order)
    with count_transfers() as counter:
        device = xp.to_device(a)
        back = xp.to_numpy(device)
    assert device.shape == shape and device.ndim == ndim
    np.testing.assert_array_equal(back, a)
    assert back.flags.c_contiguous == a.flags.c_contiguous
    assert back.flags.f_contiguous == a.flags.f_contiguous
    assert device.strides == a.strides
    assert (counter.to_device, counter.to_host) == (1, 1)


def test_empty_arrays(device_space):
    a = np.zeros((0, 3))
    device = xp.to_device(a)
    assert device.shape == (0, 3) and device.nbytes == 0
    assert xp.to_numpy(device).shape == (0, 3)


def test_object_arrays_raise_type_error_naming_object(device_space):
    objects = np.array([1, "two", None], dtype=object)
    for convert in (xp.to_device, xp.to_cunumpy):
        with pytest.raises(TypeError, match="object"):
            convert(objects)
    with pytest.raises(TypeError, match="object"):
        xp.as_device_array(objects, np.float64)
    with pytest.raises(TypeError, match="object"):
        xp.as_device_array([1.0], object)


@pytest.mark.parametrize(
    "array",
    [
        np.zeros(3, np.float16),
        np.zeros(3, np.longdouble),
        np.array(["a", "b"]),
        np.array([b"a"]),
        np.zeros(2, "datetime64[s]"),
        np.zeros(2, dtype=[("x", np.float64), ("y", np.int32)]),
    ],
    ids=lambda a: str(a.dtype),
)
def test_unsupported_dtypes_raise_type_error_naming_the_dtype(device_space, array):
    with pytest.raises(TypeError, match="unsupported dtype") as error:
        xp.to_device(array)
    assert str(array.dtype) in str(error.value)
    assert "float64" in str(error.value)  # the supported ones are listed


def test_rank_nine_raises_value_error_naming_the_rank(device_space):
    a = np.zeros((1,) * 9)
    for convert in (xp.to_device, xp.to_cunumpy):
        with pytest.raises(ValueError, match="rank 9"):
            convert(a)
    with pytest.raises(ValueError, match="rank 9"):
        xp.as_device_array(a, np.float64)
    with pytest.raises(ValueError, match="rank 9"):
        xp.DeviceArray((1,) * 9)


def test_bad_input_copies_nothing(device_space):
    with count_transfers() as counter:
        for bad in (np.zeros((1,) * 9), np.array([None]), np.zeros(2, np.float16)):
            with pytest.raises((TypeError, ValueError)):
                xp.to_device(bad)
    assert counter.total == 0


def test_unsupported_dtype_names_in_device_array_constructor(device_space):
    with pytest.raises(TypeError, match="unsupported dtype float16"):
        xp.DeviceArray(3, np.float16)


def test_set_backend_rejects_unknown_names():
    with pytest.raises(ValueError, match="'numpy', 'kokkos' or 'cupy'"):
        xp.set_backend("torch")
    assert xp.get_backend() == "numpy"


def test_set_backend_cupy_raises_import_error_without_cupy():
    if xp.cuda.is_available():
        pytest.skip("CuPy and CUDA are usable here")
    with pytest.raises(ImportError, match="CuPy"):
        xp.set_backend("cupy")
    assert xp.get_backend() == "numpy"


def test_backends_switch():
    for name in ("kokkos", "numpy"):
        xp.set_backend(name)
        assert xp.get_backend() == name


@pytest.mark.parametrize(
    "copy", [xp._core.to_host, xp._core.copy_into, xp._core.to_host_async]
)
def test_host_buffers_of_another_shape_dtype_or_order_are_refused(device_space, copy):
    device = xp.to_device(np.ones((2, 3)))
    with count_transfers() as counter:
        with pytest.raises(ValueError, match="api: the host buffer has another shape"):
            copy(device, np.empty((3, 2)), "api")
        with pytest.raises((ValueError, TypeError), match="api"):
            copy(device, np.empty((2, 3), dtype=np.float32), "api")
        with pytest.raises((ValueError, TypeError), match="api"):
            copy(device, np.empty((2, 3), order="F"), "api")
    assert counter.total == 0  # nothing copied
