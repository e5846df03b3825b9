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

    __slots__ = ("_value", "_done", "_scalar")

    def __init__(self, value, done=True, scalar=None):
        self._value = value
        self._done = bool(done)
        self._scalar = value.ndim == 0 if scalar is None else scalar

    def ready(self):
        """True once the copy has finished: result() will not wait."""
        return self._done

    def result(self):
        """The host value; waits (a recorded sync) if the copy still runs."""
        if not self._done:
            _core.wait("PendingHost.result")
            self._done = True
        return self._value[()] if self._scalar else self._value

    def __repr__(self):
        state = "ready" if self._done else "pending"
        return f"<PendingHost {state} shape={self._value.shape} dtype={self._value.dtype}>"


def copy_to_host_async(value, api, out=None):
    """Starts copying `value` to the host (into `out` when given); a
    PendingHost. Host values are copied at once, without an event."""
    if isinstance(value, DeviceArray):
        if value._host_accessible:
            host = device_to_numpy(value, api)
            if out is None:
                return PendingHost(host.copy(order="A"))
            np.copyto(out, host)
            return PendingHost(out)
        if out is None:
            out = np.empty(value.shape, value.dtype, order="F" if value._fortran else "C")
        done = _core.to_host(value, out, api, True)
        return PendingHost(out, done)
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
