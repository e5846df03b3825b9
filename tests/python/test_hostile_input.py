"""Hostile or mistaken input at the Python boundary: shapes that overflow,
arguments of the wrong type, reads of device data that Python would make
implicitly. Each raises an exception naming what was wrong and what to do,
before anything is allocated or copied; none shows pybind11's
overload-resolution dump."""

import copy
import pickle
import warnings

import numpy as np
import pytest

import cunumpy as xp

count_transfers = xp.profiling.count_transfers

PYBIND11_DUMP = ("incompatible function arguments", "Unable to cast", "C++ type")


@pytest.fixture
def device():
    """The fake device where this Kokkos has one, else the build's device
    space (the host on a host-only build): DeviceArrays either way."""
    if xp.testing.has_fake_device:
        with xp.testing.use_fake_device():
            yield xp._core.device_space_name()
    else:
        xp.set_backend("kokkos")
        yield xp._core.device_space_name()


def message_of(error):
    text = str(error.value)
    assert not any(dump in text for dump in PYBIND11_DUMP), text
    return text


@pytest.mark.parametrize(
    "shape, expected",
    [
        ((2**61 + 1,), r"shape \(2305843009213693953,\) of 8-byte items is too large"),
        ((2**62,), r"shape \(4611686018427387904,\) of 8-byte items is too large"),
        ((2**32,) * 3, r"shape \(4294967296, 4294967296, 4294967296\) of 8-byte items is too large"),
        ((0, 2**62, 2**62), r"shape \(0, 4611686018427387904, 4611686018427387904\) of 8-byte"),
        ((2**63,), r"shape \(9223372036854775808,\) has an extent beyond 2\*\*63 - 1"),
        (2**63, r"shape 9223372036854775808 has an extent beyond"),
        ((2.5,), r"shape \(2.5,\) has an extent that is not an integer: 2.5"),
        ((3, -1), r"shape \(3, -1\) has a negative extent"),
        (-(2**70), r"has a negative extent"),
        ("33", r"shape '33' is not an integer or a sequence of integers"),
        (iter([1, 2]), r"is not an integer or a sequence of integers"),
        ((1,) * 9, r"has rank 9 or more"),
    ],
    ids=repr,
)
def test_impossible_shapes_raise_value_error_naming_the_shape(device, shape, expected):
    before = xp._core.live_device_arrays()
    with count_transfers() as counter:
        with pytest.raises(ValueError, match=expected) as error:
            xp.DeviceArray(shape)
    assert message_of(error).startswith("cunumpy.DeviceArray: shape ")
    assert xp._core.live_device_arrays() == before  # nothing allocated
    assert counter.total == 0


def test_a_shape_that_does_not_fit_in_memory_is_a_memory_error_naming_it(device):
    with pytest.raises(MemoryError) as error:
        xp.DeviceArray((2**60,), np.int8)
    assert message_of(error) == (
        "cunumpy.DeviceArray: shape (1152921504606846976,) of int8: cannot "
        f"allocate 1152921504606846976 bytes in {device} (out of memory); use "
        "a smaller shape"
    )


def test_extents_with_index_are_shapes(device):
    array = xp.DeviceArray((np.int64(2), np.uint8(3)), np.float32)
    assert array.shape == (2, 3) and array.nbytes == 24
    assert xp.DeviceArray(np.int32(4)).shape == (4,)
    assert xp.DeviceArray([]).shape == ()


def test_pinned_buffers_check_their_shape():
    from cunumpy._async import pinned_empty

    with pytest.raises(ValueError, match=r"pinned memory: shape \(4611686018427387904,\) of float64 is too large"):
        pinned_empty((2**62,), np.float64)
    with pytest.raises(ValueError, match=r"pinned memory: shape \(-2,\) has a negative extent"):
        pinned_empty(-2, np.float64)
    with pytest.raises(ValueError, match=r"pinned memory: shape 2.5 is not an integer"):
        pinned_empty(2.5, np.float64)
    for size in (2**64, -1, 2.5):
        with pytest.raises(ValueError, match="pinned_buffer: shape") as error:
            xp._core.pinned_buffer(size)
        message_of(error)
    assert pinned_empty((2, 3), np.int16).shape == (2, 3)


def test_pin_memory_and_host_staging_check_their_shape():
    from cunumpy.cuda import empty_pinned

    with xp.testing.use_fake_cupy():
        with pytest.raises(ValueError, match=r"pin_memory: shape \(4294967296, 4294967296\) of float32 is too large"):
            empty_pinned((2**32, 2**32), np.float32)
        staging = xp.memory.HostStaging()
        assert staging.copy(xp.to_cupy(np.ones((2, 2)))).result().shape == (2, 2)


@pytest.mark.parametrize(
    "call, error, expected",
    [
        (lambda b: b.require("phase", allow={"to_host": {"max_nbytes": 2**70}}), ValueError,
         r"TransferBudget.require: to_host.max_nbytes must be a non-negative integer of at most 2\*\*64 - 1, not 1180591620717411303424"),
        (lambda b: b.require("phase", calls=2**64), ValueError, "calls must be a non-negative integer of at most"),
        (lambda b: b.require(5), TypeError, "TransferBudget.require: the phase name must be a str, not int 5"),
        (lambda b: b.require("phase", allow={5: None}), TypeError, "event kinds in allow are str such as 'to_host', not int 5"),
        (lambda b: b.require("phase", ignore=5), TypeError, "ignore must be a kind or a sequence of kinds"),
        (lambda b: b.phase(3), TypeError, "TransferBudget.phase: the phase name must be a str, not int 3"),
        (lambda b: b[3], TypeError, "TransferBudget.__getitem__: the phase name must be a str"),
        (lambda b: b.calls[3], TypeError, "TransferBudget.calls: the phase name must be a str"),
        (lambda b: b.rule(None), TypeError, "TransferBudget.rule: the phase name must be a str, not NoneType"),
        (lambda b: b.require_toml(b"[phases.a]"), TypeError, "require_toml: toml and source must be str"),
        (lambda b: xp.profiling.TransferBudget(started="no"), TypeError,
         "TransferBudget: started must be True or False, not str 'no'"),
        (lambda b: xp.profiling.record_marker("fallback", None), TypeError,
         "record_marker: what must be a str describing the marker in reports"),
        (lambda b: xp.profiling.record_marker(None, "spline"), TypeError,
         "record_marker: kind must be 'kernel_conversion' or 'fallback', not NoneType"),
        (lambda b: xp.profiling.count_transfers(5), TypeError,
         "count_transfers: counter must be a TransferCounter"),
    ],
    ids=lambda value: value.__name__ if isinstance(value, type) else None,
)
def test_wrong_arguments_name_the_argument_and_the_expected_type(call, error, expected):
    budget = xp.profiling.TransferBudget()
    with pytest.raises(error, match=expected) as raised:
        call(budget)
    message_of(raised)
    assert budget.rule("phase") is None


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: xp.profiling.count_transfers(), "count_transfers"),
        (lambda: xp.profiling.assert_no_transfers(), "assert_no_transfers"),
        (lambda: xp.profiling.TransferBudget().phase("io"), r"TransferBudget.phase\('io'\)"),
    ],
    ids=["count_transfers", "assert_no_transfers", "phase"],
)
def test_exit_without_enter_is_an_error(make, name):
    block = make()
    with pytest.raises(ValueError, match=f"{name}: __exit__ without __enter__"):
        block.__exit__(None, None, None)
    with block:
        pass
    with pytest.raises(ValueError, match="__exit__ without __enter__ .or called twice."):
        block.__exit__(None, None, None)


def test_device_data_is_never_read_implicitly(device):
    residual = xp.to_device(np.array(1e-9))
    with count_transfers() as counter:
        with pytest.raises(TypeError, match="device memory, never read implicitly") as error:
            range(residual)  # CuPy's arrays have no __index__ either
        with pytest.raises(TypeError, match="to_numpy"):
            np.asarray(residual)
    text = message_of(error)
    assert "cunumpy.to_numpy(a)" in text and "cunumpy.to_host_async(a)" in text
    assert counter.total == counter.syncs == 0


def test_device_arrays_stay_hashable_by_identity(device):
    a, b = xp.to_device(np.ones(2)), xp.to_device(np.ones(2))
    assert {a: 1, b: 2}[a] == 1 and hash(a) == hash(a) and a in {a} and b not in {a}


def test_as_device_array_refuses_host_complex_to_real_as_on_the_device(device_space):
    host = np.array([1 + 2j, 3 - 1j])
    with count_transfers() as counter:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no ComplexWarning
            with pytest.raises(TypeError, match="as_device_array: cannot convert complex128 to float64, the imaginary part would be lost"):
                xp.as_device_array(host, np.float64)
            with pytest.raises(TypeError, match="imaginary part would be lost"):
                xp.as_device_array([1j, 2], np.float32)
            with pytest.raises(TypeError, match="imaginary part would be lost"):
                xp.as_device_array(xp.to_device(host), np.float64)
    assert counter.to_device == 1  # only the to_device() of the test
    real = xp.as_device_array(host.real, np.float64)
    np.testing.assert_array_equal(xp.to_numpy(real), [1.0, 3.0])
    widened = xp.as_device_array(np.array([1 + 2j], np.complex64), np.complex128)
    assert widened.dtype == np.complex128


def test_device_mirror_refuses_a_read_only_host_array_before_copying(device_space):
    host = np.arange(3.0)
    mirror = xp.DeviceMirror(host)
    host.flags.writeable = False
    with count_transfers() as counter:
        with pytest.raises(ValueError, match="DeviceMirror.to_host: the host array is read-only") as error:
            mirror.to_host()
    assert "cunumpy.to_numpy(mirror.device)" in message_of(error)
    assert counter.total == 0  # no copy recorded that never landed
    np.testing.assert_array_equal(mirror.to_device() is mirror.device, True)
