"""The conversion functions: to_numpy, to_cupy, to_cunumpy, to_device and
as_device_array. Every copy between host and device is one of these calls,
counted with the caller's file and line."""

from __future__ import annotations

import operator
from typing import Any, Literal

import numpy as np

from . import _core
from ._backend import is_cupy_array, require_cupy, state
from ._core import DeviceArray

_ndarray = np.ndarray
_MAX_BYTES = 2**63 - 1

#: The memory order of an array: row-major (C) or column-major (F).
Order = Literal["C", "F"]

SUPPORTED_DTYPES: tuple[str, ...] = _core.dtype_names
_supported = frozenset(SUPPORTED_DTYPES)
MAX_NDIM: int = _core.max_ndim


def checked_shape(shape: Any, dtype: np.dtype[Any], function: str) -> tuple[tuple[int, ...], int]:
    """`shape` (an int or a sequence of ints) as a tuple, and its size in
    bytes: ValueError naming `function` and the shape for extents that are
    not integers or are negative, and for sizes of 2**63 bytes or more."""
    try:
        extents = (operator.index(shape),) if not hasattr(shape, "__iter__") else tuple(
            operator.index(extent) for extent in shape
        )
    except TypeError:
        raise ValueError(
            f"{function}: shape {shape!r} is not an integer or a sequence of "
            "integers"
        ) from None
    if any(extent < 0 for extent in extents):
        raise ValueError(f"{function}: shape {extents!r} has a negative extent")
    nbytes = dtype.itemsize
    for extent in extents:
        nbytes *= extent
    if nbytes > _MAX_BYTES:
        raise ValueError(
            f"{function}: shape {extents!r} of {dtype.name} is too large "
            f"({nbytes} bytes, at most 2**63 - 1)"
        )
    return extents, nbytes


def check_dtype(dtype: np.dtype[Any], function: str) -> None:
    """TypeError naming `function` for dtypes the device cannot hold."""
    if dtype.hasobject:
        raise TypeError(
            f"{function}: object arrays cannot be copied to the device "
            f"(dtype={dtype}); convert them to a numeric dtype first"
        )
    if dtype.name not in _supported or dtype.fields is not None:
        raise TypeError(
            f"{function}: unsupported dtype {dtype} "
            f"(supported: {', '.join(SUPPORTED_DTYPES)})"
        )


def check_ndim(ndim: int, function: str) -> None:
    if ndim > MAX_NDIM:
        raise ValueError(
            f"{function}: rank {ndim} is not supported "
            f"(at most {MAX_NDIM} dimensions)"
        )


def check_real_target(source: np.dtype[Any], target: np.dtype[Any], function: str) -> None:
    """TypeError for a conversion that would lose the imaginary part."""
    if source.kind == "c" and target.kind != "c":
        raise TypeError(
            f"{function}: cannot convert {source.name} to {target.name}, the "
            "imaginary part would be lost; take the real part first "
            "(a.real) or ask for a complex dtype"
        )


def host_array(
    value: Any, function: str, dtype: np.dtype[Any] | None = None, order: str = "K"
) -> tuple[np.ndarray[Any, Any], bool]:
    """`value` as a NumPy array the core can copy, and whether it is F-ordered.

    F-contiguous arrays stay F-contiguous; everything else becomes
    C-contiguous (packed on the host, which is no transfer). The source is
    never modified. A conversion to `dtype` that would drop an imaginary
    part is a TypeError.
    """
    if isinstance(value, _ndarray):
        check_dtype(value.dtype, function)
    if dtype is not None:
        source = value if isinstance(value, _ndarray) else np.asarray(value)
        check_real_target(source.dtype, dtype, function)
        value = source
    array = np.asarray(value, dtype=dtype)
    check_dtype(array.dtype, function)
    check_ndim(array.ndim, function)
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    if order == "C" or not array.flags.f_contiguous:
        return np.ascontiguousarray(array), False
    return array, not array.flags.c_contiguous


def describe(api: str, shape: tuple[int, ...], dtype: Any) -> str:
    """"to_cupy(shape=(100000,), dtype=float64)", written by the core."""
    return _core.describe_call(api, list(shape), np.dtype(dtype).name)


def host_view(array: DeviceArray) -> np.ndarray[Any, Any]:
    """A NumPy view of a DeviceArray in memory the host can address: host
    memory, or the fake device's (no copy)."""
    order: Order = "F" if array._fortran else "C"
    if array.nbytes == 0:
        return np.empty(array.shape, array.dtype, order=order)
    flat = np.frombuffer(array._host_buffer(), dtype=np.uint8)
    return flat.view(array.dtype).reshape(array.shape, order=order)


def device_to_numpy(array: DeviceArray, api: str) -> np.ndarray[Any, Any]:
    """One device-to-host copy of a DeviceArray into a new NumPy array."""
    if array._host_accessible:
        return host_view(array)
    out = np.empty(array.shape, array.dtype, order="F" if array._fortran else "C")
    _core.to_host(array, out, api)
    return out


def _cupy_to_numpy(array: Any, api: str) -> np.ndarray[Any, Any]:
    order: Order = "F" if array.flags.f_contiguous and not array.flags.c_contiguous else "C"
    with _core.AnnouncedCopy(
        describe(api, array.shape, array.dtype), "Host", "Cuda", array.nbytes
    ):
        return array.get(order=order)  # type: ignore[no-any-return]


def numpy_of(value: Any, api: str) -> np.ndarray[Any, Any]:
    """`value` on the host, copied (and counted) only when it is on a device."""
    if isinstance(value, _ndarray):
        return value
    if isinstance(value, DeviceArray):
        return device_to_numpy(value, api)
    if is_cupy_array(value):
        return _cupy_to_numpy(value, api)
    return np.asarray(value)


def device_of(value: Any, api: str, label: str | None = None) -> DeviceArray:
    """`value` as a DeviceArray in the current device space."""
    if isinstance(value, DeviceArray):
        if value.space == _core.device_space_name():
            return value
        value = device_to_numpy(value, api)  # made in another device space
    elif is_cupy_array(value):
        shared = _share_cupy(value)
        if shared is not None:
            return shared
        value = _cupy_to_numpy(value, api)
    array, fortran = host_array(value, api)
    return _core.to_device(array, array.dtype.name, fortran, api, label)


def _share_cupy(value: Any) -> DeviceArray | None:
    """A DeviceArray over the memory of a contiguous CuPy array (no copy), on
    a CUDA build of Kokkos; None where Kokkos cannot address CuPy memory."""
    if _core.device_space() != "device" or _core.device_space_name() != "Cuda":
        return None
    if value.flags.c_contiguous:
        fortran = False
    elif value.flags.f_contiguous:
        fortran = True
    else:
        return None
    check_dtype(value.dtype, "to_device")
    pointer = value.__cuda_array_interface__["data"][0]
    return _core.wrap_device_memory(
        pointer, value.shape, value.dtype.name, fortran, value
    )


def cupy_of(value: Any, api: str) -> Any:
    """`value` as a CuPy array: one counted host-to-device copy unless it is
    one already (or a DeviceArray in CUDA memory, shared without a copy)."""
    cupy = require_cupy(f"{api}()")
    if isinstance(value, cupy.ndarray):
        return value
    if isinstance(value, DeviceArray):
        if hasattr(value, "__cuda_array_interface__") and not value._host_accessible:
            try:
                return cupy.asarray(value)  # the same memory, no copy
            except AttributeError:
                pass
        value = device_to_numpy(value, api)
    array, fortran = host_array(value, api)
    with _core.AnnouncedCopy(
        describe(api, array.shape, array.dtype), "Cuda", "Host", array.nbytes
    ):
        return cupy.asarray(array, order="F" if fortran else "C")


def to_numpy(a: Any) -> np.ndarray[Any, Any]:
    """`a` as a NumPy array (host).

    Accepts anything numpy.asarray accepts; a NumPy array is returned as it
    is, without a copy. A device array (DeviceArray, CuPy array) is copied
    once to the host, counted as to_host at the caller's line: F-contiguous
    arrays stay F-contiguous, everything else arrives C-contiguous. The
    source and the active backend are never changed.
    """
    if type(a) is _ndarray:
        return a
    return numpy_of(a, "to_numpy")


def to_cupy(a: Any) -> Any:
    """`a` as a CuPy array (device): one counted host-to-device copy unless it
    is one already. Raises ImportError when CuPy or CUDA is not usable."""
    return cupy_of(a, "to_cupy")


def to_device(a: Any) -> DeviceArray:
    """`a` as a cunumpy.DeviceArray in the Kokkos device space.

    A DeviceArray is returned as it is. Anything else is copied once to the
    device (to_device at the caller's line); F-contiguous arrays stay
    F-contiguous, everything else arrives C-contiguous. On a host-only
    Kokkos build (without the fake device) the device is the host: the
    DeviceArray shares the NumPy array's memory and nothing is copied.
    """
    if isinstance(a, DeviceArray) and a.space == _core.device_space_name():
        return a
    return device_of(a, "to_device")


def to_cunumpy(a: Any) -> Any:
    """`a` as an array of the active backend: to_numpy() on "numpy",
    to_cupy() on "cupy", a DeviceArray on "kokkos". Copies (once, counted)
    only when `a` lives on the other side."""
    backend = state.name
    if backend == "numpy":
        if type(a) is _ndarray:
            return a
        return numpy_of(a, "to_cunumpy")
    if backend == "kokkos":
        return device_of(a, "to_cunumpy")
    return cupy_of(a, "to_cunumpy")


def as_device_array(
    value: Any, dtype: Any, ndim: int | None = None, *, name: str | None = None
) -> Any:
    """A C-contiguous device array of `dtype` for `value`, copying only what
    is not already in that form.

    A C-contiguous device array with the requested dtype is returned
    unchanged (the same object, so kernels write into the caller's array).
    Anything else (a tuple such as (3, 3, 3), a host array, another dtype,
    a non-contiguous or F-ordered array) becomes one C-contiguous device
    copy. `ndim` checks the rank; `name` names the argument in errors and
    labels the copy. Complex data to a real dtype is a TypeError, on the
    host as on the device. Call it when the argument object is built, never per
    kernel call. On the NumPy backend (and on a host-only Kokkos build) it
    raises RuntimeError, so host data is never copied to a device by
    accident.
    """
    label = name if name is not None else "value"
    backend = state.name
    if backend == "numpy":
        raise RuntimeError(
            f"as_device_array: {label!r}: the NumPy backend has no device, and "
            "host data is never copied to a device by accident; "
            "call set_backend('kokkos') or set_backend('cupy') first"
        )
    dtype = np.dtype(dtype)
    check_dtype(dtype, "as_device_array")

    def check_rank(rank: int) -> None:
        if ndim is not None and rank != ndim:
            raise ValueError(
                f"as_device_array: {label!r} has rank {rank}, expected {ndim}"
            )

    if backend == "cupy":
        cupy = require_cupy("as_device_array()")
        if isinstance(value, cupy.ndarray):
            check_rank(value.ndim)
            if value.dtype == dtype and value.flags.c_contiguous:
                return value
            check_real_target(value.dtype, dtype, "as_device_array")
            with _core.AnnouncedCopy(
                describe("as_device_array", value.shape, value.dtype),
                "Cuda",
                "Cuda",
                value.size * dtype.itemsize,
            ):
                return cupy.ascontiguousarray(value, dtype=dtype)
        array, _ = host_array(value, "as_device_array", dtype=dtype, order="C")
        check_rank(array.ndim)
        return cupy_of(array, "as_device_array")

    if _core.device_is_host():
        raise RuntimeError(
            f"as_device_array: {label!r}: this Kokkos build has no device "
            f"backend (the device space is {_core.device_space_name()}), and "
            "host data is never copied to a device by accident"
        )
    if isinstance(value, DeviceArray) and value.space == _core.device_space_name():
        check_rank(value.ndim)
        if value.dtype == dtype and value.flags.c_contiguous:
            return value
        return _core.convert(value, dtype.name, "as_device_array", name)
    if isinstance(value, DeviceArray) or is_cupy_array(value):
        value = numpy_of(value, "as_device_array")
    array, _ = host_array(value, "as_device_array", dtype=dtype, order="C")
    check_rank(array.ndim)
    return _core.to_device(array, dtype.name, False, "as_device_array", name)
