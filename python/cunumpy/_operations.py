"""Array operations of the "kokkos" backend: xp.<function>, and the methods
and operators of DeviceArray, run by the array library of the memory, on the
same memory.

NumPy runs them where the host can address the memory (the fake device,
whose memory is host memory under a device's name, and a host-only build);
CuPy runs them on CUDA memory, on the stream of Kokkos' default instance, so
they are ordered with Kokkos kernels without a wait. A DeviceArray reaches
the library as a NumPy view of its bytes or through
__cuda_array_interface__, and array results come back as DeviceArrays over
the library's memory, which they keep alive: nothing is copied. What would
need a copy between host and device is refused, naming what to call:
host data where the library reads data, a DeviceArray where it reads host
numbers. Host values made from device data come back as 0-d DeviceArrays,
as CuPy returns them, so that reading them is a counted copy.
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from . import _core
from . import _backend
from ._backend import cupy_or_none, is_cupy_array
from ._conversions import SUPPORTED_DTYPES, describe, device_of, device_to_numpy, host_view
from ._boundary import (
    HOST_CALL,
    METADATA_FUNCTIONS,
    OPERANDS,
    PYTHON_FUNCTIONS,
    UNNAMED,
    Names,
    check_arguments,
    check_key,
    holds_device_array,
    holds_host_value,
    host_values_as_arrays,
    numpy_names,
)
from ._core import DeviceArray

#: Functions that read or write array data on the host (files, text), which
#: CuPy too runs with a hidden copy: on device data they are refused.
HOST_FUNCTIONS = frozenset(
    {
        "array2string", "array_repr", "array_str", "asnumpy",
        "format_float_positional", "format_float_scientific", "fromfile",
        "genfromtxt", "load", "loadtxt", "save", "savetxt", "savez",
        "savez_compressed",
    }
)

#: Functions that make an array of their first argument: host data there (a
#: list, a tuple, a scalar, a NumPy array) is copied to the device once, a
#: counted to_device, as CuPy copies it.
CREATION_FUNCTIONS = frozenset(
    {
        "array", "asanyarray", "asarray", "asarray_chkfinite",
        "ascontiguousarray", "asfortranarray", "copy", "from_dlpack",
        "frombuffer", "fromiter", "require",
    }
)

def _space_library(name: str) -> tuple[Any, str]:
    """The array library of the current device space, and the space's name;
    an error naming the function `name` where there is none."""
    space = _core.device_space_name()
    if _core.device_space() == "fake" or _core.device_is_host():
        return np, space
    if space.startswith("Cuda"):
        cupy = cupy_or_none()
        if cupy is None:
            raise RuntimeError(
                f"cunumpy.{name}: the 'kokkos' backend's arrays are in {space} "
                "memory, where array operations are CuPy's, and CuPy is not "
                f"usable ({_backend.cupy_error}); install CuPy "
                f"(pip install cupy-cuda13x), or {HOST_CALL}"
            )
        return cupy, space
    raise RuntimeError(
        f"cunumpy.{name}: the 'kokkos' backend has no array library for "
        f"{space} memory; run Kokkos kernels on DeviceArrays, or {HOST_CALL}"
    )


def _to_library(value: Any, name: str, library: Any, space: str) -> Any:
    """`value` with its DeviceArrays (also in tuples, lists and dicts) as
    arrays of `library` over the same memory; arrays in other memory raise."""
    if isinstance(value, DeviceArray):
        if value.space != space:
            raise TypeError(
                f"cunumpy.{name}: an argument is a DeviceArray in {value.space} "
                f"and the device space is {space}; convert it with "
                "cunumpy.to_device() (counted)"
            )
        if library is np:
            return host_view(value)
        return library.asarray(value)  # __cuda_array_interface__, no copy
    if is_cupy_array(value) and library is np:
        raise TypeError(
            f"cunumpy.{name}: an argument is a CuPy array and the 'kokkos' "
            f"backend's arrays are in {space}; convert it with "
            "cunumpy.to_device() (counted)"
        )
    kind = type(value)
    if kind is tuple or kind is list:
        return kind(_to_library(item, name, library, space) for item in value)
    if kind is dict:
        return {key: _to_library(item, name, library, space) for key, item in value.items()}
    if isinstance(value, PYTHON_FUNCTIONS) and name != "frompyfunc":
        return _called_with_device_arrays(value, name, library, space)
    return value


def _called_with_device_arrays(
    function: Callable[..., Any], name: str, library: Any, space: str
) -> Callable[..., Any]:
    """A Python function the library calls back (apply_along_axis,
    piecewise, fromfunction) gets DeviceArrays, as CuPy's get CuPy arrays,
    so what it reads on the host is counted."""

    def called_by_library(*args: Any, **kwargs: Any) -> Any:
        result = function(
            *_to_device_arrays(args, name, library, space),
            **{key: _to_device_arrays(item, name, library, space) for key, item in kwargs.items()},
        )
        return _to_library(result, name, library, space)

    return called_by_library


def _to_device_arrays(value: Any, name: str, library: Any, space: str) -> Any:
    """Array results of `library` (also in tuples and lists) as DeviceArrays
    over their memory; NumPy scalars as 0-d arrays, as CuPy returns them."""
    if isinstance(value, np.generic) and library is np:
        value = np.asarray(value)
    if isinstance(value, library.ndarray):
        if value.dtype.name not in SUPPORTED_DTYPES:
            raise TypeError(
                f"cunumpy.{name}: the result has dtype {value.dtype}, which a "
                f"DeviceArray cannot hold (supported: {', '.join(SUPPORTED_DTYPES)})"
            )
        if not (value.flags.c_contiguous or value.flags.f_contiguous):
            # A DeviceArray is contiguous: a strided view becomes a copy on
            # the device, counted as one.
            with _core.AnnouncedCopy(
                describe(name, value.shape, value.dtype), space, space, value.nbytes
            ):
                value = library.ascontiguousarray(value)
        pointer = value.ctypes.data if library is np else value.data.ptr
        fortran = not value.flags.c_contiguous
        return _core.wrap_device_memory(pointer, value.shape, value.dtype.name, fortran, value)
    kind = type(value)
    if kind is tuple or kind is list:
        return kind(_to_device_arrays(item, name, library, space) for item in value)
    if isinstance(value, tuple) and hasattr(value, "_make"):  # a named tuple
        return value._make(_to_device_arrays(item, name, library, space) for item in value)
    return value


@contextlib.contextmanager
def _on_kokkos_stream(library: Any) -> Iterator[None]:
    """CuPy's work on the stream of Kokkos' default instance: ordered with
    Kokkos kernels, so neither waits for the other."""
    stream = _core.device_stream()
    if library is np or stream is None:
        yield
        return
    with library.cuda.ExternalStream(stream):
        yield


def call(
    name: str,
    function: Callable[[Any], Any],
    args: Any,
    kwargs: Any,
    names: Names | None = UNNAMED,
    on_device: bool = False,
) -> Any:
    """`function(library)` (the callable of the library to run) on `args`,
    with DeviceArrays in and out. `names` names the positional arguments
    (None: the caller checked them); `on_device`: the call reads a
    DeviceArray that is not among `args` (a method's array)."""
    library, space = _space_library(name)
    if name.rsplit(".", 1)[-1] in HOST_FUNCTIONS:
        raise TypeError(
            f"cunumpy.{name} reads or writes the data on the host, which "
            f"would copy device memory without counting it; {HOST_CALL}, or "
            "copy the arrays with cunumpy.to_numpy() first"
        )
    if names is not None and not _core.device_is_host():
        if name in CREATION_FUNCTIONS and args and not holds_device_array(args[0]):
            return _copy_to_device(name, args, kwargs)
        check_arguments(name, names, args, kwargs, space)
    target = function(library)
    library_args = _to_library(args, name, library, space)
    library_kwargs = _to_library(kwargs, name, library, space)
    with _on_kokkos_stream(library):
        result = target(*library_args, **library_kwargs)
    if (
        library is np
        and name not in METADATA_FUNCTIONS
        and holds_host_value(result)
        and (on_device or holds_device_array(args) or holds_device_array(kwargs))
    ):
        result = host_values_as_arrays(result, name)
    return _to_device_arrays(result, name, library, space)


def _copy_to_device(name: str, args: Any, kwargs: Any) -> DeviceArray:
    """xp.asarray(host data) and the other creation functions: NumPy makes
    the array on the host, and one counted to_device copies it."""
    if kwargs.get("copy") is False:
        raise ValueError(
            f"cunumpy.{name}: copy=False, and host data reaches the 'kokkos' "
            "backend's arrays only through a copy; leave copy unset"
        )
    return device_of(getattr(np, name)(*args, **kwargs), name)


def _library_attribute(path: str) -> Callable[[Any], Any]:
    """The attribute `path` ("fft.rfft") of a library; AttributeError naming
    the library where it has none (a host-only NumPy function on CUDA)."""

    def find(library: Any) -> Any:
        value = library
        for part in path.split("."):
            if not hasattr(value, part):
                raise AttributeError(
                    f"cunumpy.{path}: {library.__name__} has no {path}, so it "
                    f"cannot run on the 'kokkos' backend's arrays; {HOST_CALL}"
                )
            value = getattr(value, part)
        return value

    return find


def _has_attribute(module: Any, path: str) -> bool:
    for part in path.split("."):
        if not hasattr(module, part):
            return False
        module = getattr(module, part)
    return True


_functions: dict[str, Callable[..., Any]] = {}


def function(path: str) -> Callable[..., Any]:
    """xp.<path> on the "kokkos" backend: the library's function of that
    name on DeviceArrays, returning DeviceArrays."""
    forwarded = _functions.get(path)
    if forwarded is None:
        find = _library_attribute(path)

        numpy_function = find(np) if _has_attribute(np, path) else None
        names = numpy_names(numpy_function) if numpy_function is not None else UNNAMED

        def forwarded(*args: Any, **kwargs: Any) -> Any:
            return call(path, find, args, kwargs, names)

        forwarded.__name__ = path.rsplit(".", 1)[-1]
        forwarded.__qualname__ = path
        forwarded.__doc__ = (
            f"cunumpy.{path} on the 'kokkos' backend: numpy.{path} or "
            f"cupy.{path}, where the arrays' memory is, without a copy."
        )
        _functions[path] = forwarded
    return forwarded


class Namespace(types.ModuleType):
    """xp.fft, xp.linalg, xp.random on the "kokkos" backend: their functions
    forwarded, their types and constants NumPy's."""

    def __init__(self, path: str, numpy_module: types.ModuleType) -> None:
        super().__init__(f"cunumpy.{path}")
        self._path = path
        self._numpy_module = numpy_module

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return forwarded_attribute(f"{self._path}.{name}", getattr(self._numpy_module, name))


def forwarded_attribute(path: str, numpy_value: Any) -> Any:
    """What xp.<path> is on the "kokkos" backend, given NumPy's attribute of
    that name: a forwarded function, a forwarding namespace, or the value."""
    if isinstance(numpy_value, types.ModuleType):
        return Namespace(path, numpy_value)
    if callable(numpy_value) and not isinstance(numpy_value, type):
        return function(path)
    return numpy_value


#: The names of the arguments of the methods whose NumPy function of the
#: same name takes them otherwise: a.reshape(2, 3), a.transpose(1, 0).
_METHOD_NAMES: dict[str, Names] = {"reshape": ((), "shape"), "transpose": ((), "axes")}


def _method_names(name: str) -> Names:
    """The names of a method's arguments: an operator's are operands, the
    others NumPy's function of the same name's, after the array."""
    if name.startswith("__"):
        return OPERANDS
    if name in _METHOD_NAMES:
        return _METHOD_NAMES[name]
    numpy_function = getattr(np, name, None)
    if numpy_function is None:
        return UNNAMED
    positional, rest = numpy_names(numpy_function)
    return positional[1:], rest


def _method(name: str) -> Callable[..., Any]:
    """DeviceArray.<name>: the library array's method on the same memory."""
    where = f"DeviceArray.{name}"
    names = _method_names(name)

    def method(self: DeviceArray, *args: Any, **kwargs: Any) -> Any:
        def bound(library: Any) -> Any:
            return getattr(_to_library(self, where, library, self.space), name)

        if name in ("__getitem__", "__setitem__") and args and not _core.device_is_host():
            check_key(where, args[0], self.space)
            args_checked = args[1:]
        else:
            args_checked = args
        if not _core.device_is_host():
            check_arguments(where, names, args_checked, kwargs, self.space)
        return call(where, bound, args, kwargs, None, on_device=True)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"ndarray.{name} of NumPy or CuPy, on the array's memory (no copy)."
    return method


def _property(name: str) -> property:
    """DeviceArray.<name> (T, real, imag): a view, as the library's."""
    where = f"DeviceArray.{name}"

    def get(self: DeviceArray) -> Any:
        def read(library: Any) -> Callable[[], Any]:
            return lambda: getattr(_to_library(self, where, library, self.space), name)

        return call(where, read, (), {})

    return property(get, doc=f"ndarray.{name} of NumPy or CuPy, on the array's memory (no copy).")


def _in_place(name: str) -> Callable[..., Any]:
    operator = _method(name)

    def method(self: DeviceArray, other: Any) -> DeviceArray:
        operator(self, other)
        return self

    method.__name__ = method.__qualname__ = name
    return method


def _read_on_host(array: DeviceArray, name: str) -> np.ndarray[Any, Any]:
    """The data of `array` read by the host as CuPy reads it: one blocking
    copy of the whole array and a wait for the device, here counted: a
    to_host and an implicit sync at the caller's line."""
    host = device_to_numpy(array, name)
    if not array._host_accessible:
        with _core.RecordedWait(name, True):
            pass
    return host


def _host_read(name: str, convert: Callable[[np.ndarray[Any, Any]], Any]) -> Callable[..., Any]:
    """int(), float(), item(), ...: a counted read of the data by the host."""

    def read(self: DeviceArray) -> Any:
        if name != "tolist" and self.size != 1:
            # Decided from the shape, before any copy, as NumPy and CuPy do.
            error = ValueError if name in ("bool", "item") else TypeError
            raise error(
                f"{name}() of a DeviceArray of shape {self.shape}: only an "
                "array of one element converts to a Python scalar"
            )
        return convert(_read_on_host(self, name))

    read.__name__ = read.__qualname__ = f"__{name}__"
    return read


def _format(self: DeviceArray, spec: str) -> str:
    """format(a, spec), f"{a:.3f}": the value of a 0-d array, a counted read
    as float() is; without a spec, str(a) (no data)."""
    if not spec:
        return str(self)
    if self.ndim != 0:
        raise TypeError(
            f"format() of a DeviceArray of shape {self.shape} with format "
            f"{spec!r}: only a 0-d array formats its value, as NumPy's; copy "
            "it with cunumpy.to_numpy(a) (counted) and format that"
        )
    return format(_read_on_host(self, "format")[()], spec)


def _len(self: DeviceArray) -> int:
    """len(a): the first extent, from the shape (no data)."""
    if self.ndim == 0:
        raise TypeError("len() of a 0-d DeviceArray")
    return int(self.shape[0])


def _iterate(self: DeviceArray) -> Iterator[Any]:
    """for row in a: the rows, as DeviceArrays on the same memory (no data
    read on the host)."""
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d DeviceArray")
    return (self[index] for index in range(self.shape[0]))


_OPERATORS = [
    f"__{prefix}{name}__"
    for name in (
        "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
        "and", "or", "xor", "lshift", "rshift", "divmod",
    )
    for prefix in ("", "r")
] + [
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
    "__neg__", "__pos__", "__abs__", "__invert__", "__getitem__", "__setitem__",
    "__contains__",
]

_IN_PLACE = [
    f"__i{name}__"
    for name in (
        "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
        "and", "or", "xor", "lshift", "rshift",
    )
]

#: Methods NumPy's and CuPy's arrays share (astype and copy are DeviceArray's
#: own: a device_copy made by Kokkos).
METHODS = [
    "all", "any", "argmax", "argmin", "argsort", "choose", "clip", "conj",
    "conjugate", "cumprod", "cumsum", "diagonal", "dot", "fill", "flatten",
    "max", "mean", "min", "nonzero", "prod", "ptp", "ravel", "repeat",
    "reshape", "round", "sort", "squeeze", "std", "sum", "swapaxes", "take",
    "trace", "transpose", "var", "view",
]

PROPERTIES = ["T", "real", "imag"]


def install() -> None:
    """Gives DeviceArray the operators, methods and properties above."""
    for name in _OPERATORS + METHODS:
        setattr(DeviceArray, name, _method(name))
    for name in _IN_PLACE:
        setattr(DeviceArray, name, _in_place(name))
    for name in PROPERTIES:
        setattr(DeviceArray, name, _property(name))
    for name, convert in (
        ("bool", bool), ("int", int), ("float", float), ("complex", complex),
    ):
        setattr(DeviceArray, f"__{name}__", _host_read(name, convert))
    setattr(DeviceArray, "item", _host_read("item", lambda host: host.item()))
    setattr(DeviceArray, "tolist", _host_read("tolist", lambda host: host.tolist()))
    setattr(DeviceArray, "__format__", _format)
    setattr(DeviceArray, "__len__", _len)
    setattr(DeviceArray, "__iter__", _iterate)
    # NumPy defers to DeviceArray's reflected operators, which refuse host
    # arrays with what to call instead of reading the device data.
    setattr(DeviceArray, "__array_ufunc__", None)
