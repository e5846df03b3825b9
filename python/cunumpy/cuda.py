"""CUDA helpers: page-locked memory and streams (they need CuPy, or the fake
CuPy of cunumpy.testing.use_fake_cupy())."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import _core
from ._backend import cupy_or_none
from ._conversions import Order, checked_shape

__all__ = ["debug_sync", "is_available", "pin_memory", "stream"]


def __dir__() -> list[str]:
    return sorted(__all__)


def is_available() -> bool:
    """True when CuPy is importable and sees a CUDA device."""
    return cupy_or_none() is not None


# Without CuPy: what the "kokkos" backend has instead.
_WITHOUT_CUPY = (
    "cunumpy.cuda.pin_memory requires CuPy (the \"cupy\" backend); on the "
    "\"kokkos\" backend, cunumpy.memory.HostStaging gives page-locked host "
    "buffers for repeated copies to the host"
)


def empty_pinned(shape: Any, dtype: Any, order: Order = "C") -> np.ndarray[Any, Any]:
    """An uninitialized NumPy array in page-locked memory (needs CuPy)."""
    cupy = cupy_or_none()
    if cupy is None:
        raise ImportError(_WITHOUT_CUPY)
    dtype = np.dtype(dtype)
    shape, nbytes = checked_shape(shape, dtype, "pin_memory")
    memory = cupy.cuda.alloc_pinned_memory(max(nbytes, 1))
    flat = np.frombuffer(memory, dtype, nbytes // max(dtype.itemsize, 1))
    return flat.reshape(shape, order=order)


def pin_memory(host_array: Any) -> np.ndarray[Any, Any]:
    """A copy of `host_array` in page-locked ("pinned") host memory, from
    which host-to-device copies are faster and can overlap computation.
    F-contiguous arrays stay F-contiguous. Raises ImportError without CuPy
    (on the "kokkos" backend, memory.HostStaging is the page-locked buffer).

        pinned = xp.cuda.pin_memory(np.load("snapshot.npy"))
        with xp.cuda.stream():
            device = xp.to_cupy(pinned)
    """
    if cupy_or_none() is None:
        raise ImportError(_WITHOUT_CUPY)
    array = np.asarray(host_array)
    order: Order = "F" if array.flags.f_contiguous and not array.flags.c_contiguous else "C"
    pinned = empty_pinned(array.shape, array.dtype, order)
    pinned[...] = array
    return pinned


@contextlib.contextmanager
def stream(non_blocking: bool = True) -> Iterator[Any]:
    """Runs the block on a new CUDA stream (a CuPy stream, yielded). Without
    CuPy the block runs as it is and None is yielded."""
    cupy = cupy_or_none()
    if cupy is None:
        yield None
        return
    with cupy.cuda.Stream(non_blocking=non_blocking) as current:
        yield current


@contextlib.contextmanager
def debug_sync() -> Iterator[None]:
    """While the block runs, the host waits for the device after every
    Kokkos kernel, and each wait is recorded as an implicit sync named after
    the kernel, at the line that launched it: which kernel a later wait or
    failure belongs to, as CUDA_LAUNCH_BLOCKING=1 shows for CUDA. Kernels
    no longer overlap the host: for debugging, not for timing. (CuPy's own
    kernels are not Kokkos kernels: use CUDA_LAUNCH_BLOCKING=1 for them.)

        with xp.cuda.debug_sync(), xp.profiling.count_transfers() as c:
            step(state, dt)
        print(c.report())   # sync: debug_sync(after kernel "advance") ...
    """
    _core._set_debug_sync(True)
    try:
        yield
    finally:
        _core._set_debug_sync(False)
