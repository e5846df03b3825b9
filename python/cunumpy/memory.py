"""Host memory for repeated copies: HostStaging."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ._async import PendingHost, copy_to_host_async, pinned_empty
from ._backend import cupy_or_none, is_cupy_array
from ._conversions import Order
from ._core import DeviceArray

__all__ = ["HostStaging"]


def __dir__() -> list[str]:
    return sorted(__all__)


def _empty_host(shape: tuple[int, ...], dtype: Any, order: Order) -> np.ndarray[Any, Any]:
    cupy = cupy_or_none()
    if cupy is None:
        return pinned_empty(shape, dtype, order)
    from .cuda import empty_pinned

    return empty_pinned(shape, dtype, order)


class HostStaging:
    """Reusable page-locked host buffers for large arrays copied to the host
    repeatedly, such as output snapshots.

        staging = xp.memory.HostStaging()
        for step in range(n_steps):
            advance(state)
            if step % 100 == 0:
                snapshot = staging.copy(state)    # returns at once
                write_output(snapshot.result())   # waits if not yet copied

    copy() is to_host_async() into a buffer of the staging, counted as a
    non-blocking to_host ([async] in reports). The first copy of a shape
    allocates a buffer; later copies of that shape reuse it once nobody
    holds it any more (the PendingHost, the arrays result() gave out and
    their views are gone), so a steady loop allocates nothing. A buffer
    still held is never overwritten: the copy gets another buffer.
    """

    def __init__(self) -> None:
        self._buffers: list[np.ndarray[Any, Any]] = []
        self._allocations = 0

    def copy(self, a: Any) -> PendingHost:
        """Starts copying the device array `a` into a staging buffer; a
        PendingHost whose result() is the buffer. A host array is returned
        as it is, without a copy or an event."""
        if not isinstance(a, DeviceArray) and not is_cupy_array(a):
            return PendingHost(np.asarray(a), scalar=False)
        if a.ndim == 0:
            raise ValueError(
                "HostStaging.copy: use to_host_async() to read a 0-d array"
            )
        return copy_to_host_async(a, "HostStaging.copy", out=self._buffer_for(a))

    def _buffer_for(self, a: Any) -> np.ndarray[Any, Any]:
        fortran = a.flags.f_contiguous and not a.flags.c_contiguous
        for index in range(len(self._buffers)):
            buffer = self._buffers[index]
            if (
                buffer.shape == a.shape
                and buffer.dtype == a.dtype
                and (buffer.flags.f_contiguous if fortran else buffer.flags.c_contiguous)
                # held only by this list, `buffer` and getrefcount's argument
                and sys.getrefcount(buffer) <= 3
            ):
                return buffer
        buffer = _empty_host(a.shape, a.dtype, "F" if fortran else "C")
        self._buffers.append(buffer)
        self._allocations += 1
        return buffer

    @property
    def buffers(self) -> int:
        """Number of buffers held."""
        return len(self._buffers)

    @property
    def allocations(self) -> int:
        """Number of buffers allocated since construction (or clear())."""
        return self._allocations

    @property
    def nbytes(self) -> int:
        """Bytes of host memory held."""
        return sum(buffer.nbytes for buffer in self._buffers)

    def clear(self) -> None:
        """Lets go of every buffer (arrays given out stay valid)."""
        self._buffers = []
        self._allocations = 0
