"""xp.cuda: pinned memory and streams need CuPy."""

import numpy as np
import pytest

import cunumpy as xp

needs_no_cupy = pytest.mark.skipif(
    xp.cuda.is_available(), reason="CuPy and CUDA are usable here"
)


@needs_no_cupy
def test_pin_memory_requires_cupy_and_names_what_kokkos_has():
    xp.set_backend("kokkos")
    with pytest.raises(ImportError) as raised:
        xp.cuda.pin_memory(np.ones(3))
    message = str(raised.value)
    assert message.startswith("cunumpy.cuda.pin_memory requires CuPy"), message
    assert "cunumpy.memory.HostStaging" in message, message


@needs_no_cupy
def test_stream_is_a_no_op_without_cupy(device_space):
    with xp.cuda.stream() as stream:
        device = xp.to_device(np.ones(2))
    assert stream is None
    assert isinstance(device, xp.DeviceArray)


@needs_no_cupy
def test_cupy_is_not_usable():
    assert not xp.cuda.is_available()
    with pytest.raises(ImportError):
        xp.to_cupy(np.ones(1))
