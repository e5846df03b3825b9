"""Reading device values without waiting: to_host_async and PendingHost."""

import numpy as np

from . import _core
from ._backend import is_cupy_array
from ._conversions import describe, device_to_numpy
from ._core import DeviceArray


class PendingHost:
    """The result of an asynchronous copy to the host (to_host_async(),
    HostStaging.copy()).

    ready() tells whether the copy has finished, without waiting; result()
    returns the host value (a NumPy scalar for a 0-d array, else a NumPy
    array) and waits only if the copy has not finished, a wait counted as a
    sync.
    """

    __slots__ = ("_value", "_copy", "_scalar")

    def __init__(self, value, copy=None, scalar=None):
        self._value = value
        self._copy = copy  # a _core.AsyncCopy that may still run, or None
        self._scalar = value.ndim == 0 if scalar is None else scalar

    def ready(self):
        """True once the copy has finished: result() will not wait."""
        if self._copy is not None and self._copy.ready():
            self._copy = None
        return self._copy is None

    def result(self):
        """The host value; waits (a recorded sync) if the copy still runs."""
        if self._copy is not None:
            self._copy.wait("PendingHost.result")
            self._copy = None
        return self._value[()] if self._scalar else self._value

    def __repr__(self):
        state = "ready" if self.ready() else "pending"
        return f"<PendingHost {state} shape={self._value.shape} dtype={self._value.dtype}>"


def pinned_empty(shape, dtype, order="C"):
    """An uninitialized NumPy array in page-locked host memory, which copies
    from the device fill while the host runs on (ordinary host memory on a
    build without a device). Arrays of at most 64 bytes come from a pool."""
    dtype = np.dtype(dtype)
    shape = (int(shape),) if np.isscalar(shape) else tuple(int(e) for e in shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes <= 64:
        raw = _core.pinned_scalar_buffer()
    else:
        raw = _core.pinned_buffer(nbytes)
    return raw[:nbytes].view(dtype).reshape(shape, order=order)


def copy_to_host_async(value, api, out=None):
    """Starts copying `value` to the host (into `out` when given); a
    PendingHost. Host values are copied at once, without an event. A device
    array is copied after the work queued so far, on an instance of its
    own, into page-locked memory when `out` is not given."""
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
        with _core.AnnouncedCopy(
            describe(api, value.shape, value.dtype), "Host", "Cuda", value.nbytes
        ):
            host = value.get()
    else:
        host = np.array(value, copy=True)
    if out is None:
        return PendingHost(host)
    np.copyto(out, host)
    return PendingHost(out)


def to_host_async(a):
    """Starts copying `a` to the host and returns at once: a PendingHost.

    The copy of a device array is counted as a non-blocking to_host, shown
    [async] in reports. On the NumPy backend and on the fake device the
    value is copied at once and ready() is always true.

        pending = xp.to_host_async(residual_norm)
        ...  # queue the next iteration's kernels
        if pending.ready() and pending.result() < tol:
            break
    """
    return copy_to_host_async(a, "to_host_async")
