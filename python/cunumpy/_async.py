"""Reading device values without waiting: to_host_async and PendingHost."""

from __future__ import annotations

import sys
from typing import Any, Protocol

import numpy as np

from . import _core
from ._backend import is_cupy_array
from ._conversions import Order, checked_shape, describe, device_to_numpy
from ._core import DeviceArray


class _Copy(Protocol):
    """A copy under way: _core.AsyncCopy, or _CupyCopy for CuPy arrays."""

    def ready(self) -> bool: ...

    def wait(self, api: str) -> None: ...


class PendingHost:
    """The result of an asynchronous copy to the host (to_host_async(),
    HostStaging.copy()).

    ready() tells whether the copy has finished, without waiting; result()
    returns the host value (a NumPy scalar for a 0-d array, else a NumPy
    array) and waits only if the copy has not finished, a wait counted as a
    sync.
    """

    __slots__ = ("_value", "_copy", "_scalar")

    def __init__(
        self,
        value: np.ndarray[Any, Any],
        copy: _Copy | None = None,
        scalar: bool | None = None,
    ) -> None:
        self._value = value
        self._copy = copy  # a copy that may still run, or None
        self._scalar = value.ndim == 0 if scalar is None else scalar

    def ready(self) -> bool:
        """True once the copy has finished: result() will not wait."""
        if self._copy is not None and self._copy.ready():
            self._copy = None
        return self._copy is None

    def result(self) -> Any:
        """The host value; waits (a recorded sync) if the copy still runs."""
        if self._copy is not None:
            self._copy.wait("PendingHost.result")
            self._copy = None
        return self._value[()] if self._scalar else self._value

    def __repr__(self) -> str:
        state = "ready" if self.ready() else "pending"
        return f"<PendingHost {state} shape={self._value.shape} dtype={self._value.dtype}>"


def pinned_empty(shape: Any, dtype: Any, order: Order = "C") -> np.ndarray[Any, Any]:
    """An uninitialized NumPy array in page-locked host memory, which copies
    from the device fill while the host runs on (ordinary host memory on a
    build without a device). Arrays of at most 64 bytes come from a pool."""
    dtype = np.dtype(dtype)
    shape, nbytes = checked_shape(shape, dtype, "pinned memory")
    if nbytes <= 64:
        raw = _core.pinned_scalar_buffer()
    else:
        raw = _core.pinned_buffer(nbytes)
    array: np.ndarray[Any, Any] = raw[:nbytes].view(dtype).reshape(shape, order=order)
    return array


class _CupyCopy:
    """A CuPy copy to the host under way: done when its event is."""

    __slots__ = ("_event", "_source")

    def __init__(self, event: Any, source: Any) -> None:
        self._event = event
        self._source = source  # the device array stays alive until done

    def ready(self) -> bool:
        if self._source is not None and self._event.done:
            self._source = None
        return self._source is None

    def wait(self, api: str) -> None:
        if self.ready():
            return
        with _core.RecordedWait(api):
            self._event.synchronize()
        self._source = None


def _cupy_to_host_async(value: Any, api: str, out: np.ndarray[Any, Any] | None) -> PendingHost:
    """The copy of a CuPy array into page-locked memory on a stream of its
    own, after the work queued so far on the current stream."""
    cupy = sys.modules["cupy"]
    fortran = value.flags.f_contiguous and not value.flags.c_contiguous
    order: Order = "F" if fortran else "C"
    if out is None:
        from .cuda import empty_pinned

        out = empty_pinned(value.shape, value.dtype, order)
    stream = cupy.cuda.Stream(non_blocking=True)
    stream.wait_event(cupy.cuda.get_current_stream().record())
    with _core.AnnouncedCopy(
        describe(api, value.shape, value.dtype), "Host", "Cuda", value.nbytes, async_=True
    ):
        try:
            value.get(stream=stream, order=order, out=out, blocking=False)
        except TypeError:  # CuPy before 13: a copy on a stream is asynchronous
            value.get(stream=stream, order=order, out=out)
    return PendingHost(out, _CupyCopy(stream.record(), value))


def copy_to_host_async(
    value: Any, api: str, out: np.ndarray[Any, Any] | None = None
) -> PendingHost:
    """Starts copying `value` to the host (into `out` when given); a
    PendingHost. Host values are copied at once, without an event. A device
    array is copied after the work queued so far, on an instance (a stream)
    of its own, into page-locked memory when `out` is not given."""
    if isinstance(value, DeviceArray):
        if value._host_accessible:
            host = device_to_numpy(value, api)
            if out is None:
                return PendingHost(host.copy(order="A"))
            np.copyto(out, host)
            return PendingHost(out)
        if out is None:
            out = pinned_empty(value.shape, value.dtype, "F" if value._fortran else "C")
        return PendingHost(out, _core.to_host_async(value, out, api))
    if is_cupy_array(value):
        return _cupy_to_host_async(value, api, out)
    host = np.array(value, copy=True)
    if out is None:
        return PendingHost(host)
    np.copyto(out, host)
    return PendingHost(out)


def to_host_async(a: Any) -> PendingHost:
    """Starts copying `a` to the host and returns at once: a PendingHost.

    The copy of a device array is counted as a non-blocking to_host, shown
    [async] in reports. On the NumPy backend, on the fake device and on the
    fake CuPy the value is copied at once and ready() is always true.

        pending = xp.to_host_async(residual_norm)
        ...  # queue the next iteration's kernels
        if pending.ready() and pending.result() < tol:
            break
    """
    return copy_to_host_async(a, "to_host_async")
