"""Host-only code and host-owned buffers: host_call, evaluate_on_host,
setup_on_host, DeviceMirror and synchronize."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from . import _core
from ._backend import is_cupy_array, state, using
from ._conversions import (
    Order,
    cupy_of,
    describe,
    device_of,
    device_to_numpy,
    numpy_of,
)
from ._conversions import host_array as packed_host_array
from ._core import DeviceArray

_Result = TypeVar("_Result")


def _is_device_array(value: Any) -> bool:
    return isinstance(value, DeviceArray) or is_cupy_array(value)


def _to_host(value: Any) -> Any:
    if _is_device_array(value):
        return numpy_of(value, "host_call")
    kind = type(value)
    if kind is tuple or kind is list:
        return kind(_to_host(item) for item in value)
    if kind is dict:
        return {key: _to_host(item) for key, item in value.items()}
    return value


def _to_backend(value: Any, backend: str) -> Any:
    if isinstance(value, np.ndarray):
        if backend == "kokkos":
            return device_of(value, "host_call")
        if backend == "cupy":
            return cupy_of(value, "host_call")
        return value
    kind = type(value)
    if kind is tuple or kind is list:
        return kind(_to_backend(item, backend) for item in value)
    if kind is dict:
        return {key: _to_backend(item, backend) for key, item in value.items()}
    return value


def host_call(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Calls host-only `fun` with arguments of either backend.

    Device arrays among the arguments (also inside tuples, lists and dicts)
    are copied to the host, `fun` runs on the NumPy backend, and its array
    results are copied back to the active backend, once per call. The copies
    are counted at the caller's line as host_call(shape=..., dtype=...).
    Use it for setup and diagnostics, not in a time loop.

        values = xp.host_call(spline, x)  # x on the device -> values on the device
    """
    backend = state.name
    host_args = _to_host(args)
    host_kwargs = _to_host(kwargs)
    with using("numpy"):
        result = fun(*host_args, **host_kwargs)
    return _to_backend(result, backend)


def evaluate_on_host(method: Callable[..., _Result]) -> Callable[..., _Result]:
    """Decorator: the method runs through host_call() (device arguments to
    the host, NumPy backend, array results back)."""

    @functools.wraps(method)
    def on_host(self: Any, *args: Any, **kwargs: Any) -> Any:
        return host_call(method, self, *args, **kwargs)

    return on_host


def setup_on_host(init: Callable[..., None]) -> Callable[..., None]:
    """Decorator for __init__: it runs on the NumPy backend with device
    arguments copied to the host, so the object holds only host data."""

    @functools.wraps(init)
    def on_host(self: Any, *args: Any, **kwargs: Any) -> None:
        host_args = _to_host(args)
        host_kwargs = _to_host(kwargs)
        with using("numpy"):
            init(self, *host_args, **host_kwargs)

    return on_host


def synchronize() -> None:
    """Waits for the device; counted as a sync (not a transfer)."""
    _core.synchronize()


def _wait_for(stream: Any, event: Any, api: str) -> None:
    if stream is None and event is None:
        return
    for waitable in (event, stream):
        if waitable is not None and hasattr(waitable, "synchronize"):
            waitable.synchronize()
    _core.wait(api)


class DeviceMirror:
    """Pairs a host array owned by someone else with a device copy and makes
    the two transfers explicit.

    `mirror.device` is the array kernels write into; `mirror.to_host()`
    copies it back into the original host array, in place, and
    `mirror.to_device()` copies the host array into it after CPU work
    changed it. Both directions are counted. On the NumPy backend
    `mirror.device` is the host array and the copies are no-ops.

        mirror = xp.DeviceMirror(host_buffer)  # one to_device copy
        accumulate(mirror.device)
        mirror.to_host()                       # into host_buffer, in place
    """

    device: Any
    """The device array kernels write into (a DeviceArray, a CuPy array, or
    the host array itself on the NumPy backend)."""

    def __init__(self, host_array: np.ndarray[Any, Any]) -> None:
        if not isinstance(host_array, np.ndarray):
            raise TypeError(
                "DeviceMirror: host_array must be a NumPy array (the buffer "
                f"to refresh in place), not {type(host_array).__name__}"
            )
        self.host = host_array
        self._backend = state.name
        if self._backend == "numpy":
            self.device = host_array
        elif self._backend == "kokkos":
            packed, fortran = packed_host_array(host_array, "DeviceMirror")
            self.device = _core.to_device(
                packed, packed.dtype.name, fortran, "DeviceMirror", "DeviceMirror"
            )
        else:
            self.device = cupy_of(host_array, "DeviceMirror")

    def to_host(self, stream: Any = None, event: Any = None) -> np.ndarray[Any, Any]:
        """Copies the device array into the host array, in place (one
        counted to_host); returns the host array when the data is there.
        With `stream` or `event` (the producer of the device data), waits
        for it first, counted as a sync. A read-only host array is refused
        (ValueError) before anything is copied."""
        if self._backend == "numpy":
            return self.host
        if not self.host.flags.writeable:
            raise ValueError(
                "DeviceMirror.to_host: the host array is read-only, so the "
                "device data cannot be copied into it; mirror a writable "
                "array, or copy it out with cunumpy.to_numpy(mirror.device)"
            )
        _wait_for(stream, event, "DeviceMirror.to_host")
        device = self.device
        if isinstance(device, DeviceArray):
            if device._host_accessible:
                np.copyto(self.host, device_to_numpy(device, "DeviceMirror.to_host"))
                return self.host
            if self._writes_in_place(device):
                _core.to_host(device, self.host, "DeviceMirror.to_host")
            else:
                out = np.empty(device.shape, device.dtype, order="F" if device._fortran else "C")
                _core.to_host(device, out, "DeviceMirror.to_host")
                np.copyto(self.host, out)
            return self.host
        with _core.AnnouncedCopy(
            describe("DeviceMirror.to_host", device.shape, device.dtype),
            "Host",
            "Cuda",
            device.nbytes,
        ):
            np.copyto(self.host, device.get())
        return self.host

    def to_device(self) -> Any:
        """Copies the host array into the device array, in place (one
        counted to_device); returns the device array."""
        if self._backend == "numpy":
            return self.device
        device = self.device
        if isinstance(device, DeviceArray):
            order: Order = "F" if device._fortran else "C"
            source = np.asarray(self.host, dtype=device.dtype, order=order)
            _core.copy_into(device, source, "DeviceMirror.to_device")
            return device
        with _core.AnnouncedCopy(
            describe("DeviceMirror.to_device", device.shape, device.dtype),
            "Cuda",
            "Host",
            device.nbytes,
        ):
            device.set(np.asarray(self.host, dtype=device.dtype))
        return device

    def _writes_in_place(self, device: DeviceArray) -> bool:
        host = self.host
        contiguous = host.flags.f_contiguous if device._fortran else host.flags.c_contiguous
        return (
            contiguous
            and host.flags.writeable
            and host.dtype == device.dtype
            and host.dtype.isnative
        )
