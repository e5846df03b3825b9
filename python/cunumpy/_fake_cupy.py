"""A CuPy stand-in over host memory: the module that
cunumpy.testing.use_fake_cupy() installs as ``cupy``.

Its ``ndarray`` holds a NumPy array and behaves as CuPy's does where
cunumpy and the code under test can tell: no implicit conversion to NumPy
(``numpy.asarray`` raises), NumPy arrays refused as operands, ``get()`` and
``set()`` for explicit copies, streams and events, page-locked memory. Array
functions and operators are NumPy's, with the results wrapped again. What
the real CuPy does without telling anyone when code reads an array on the
host (``float()``, ``int()``, ``bool()``, ``complex()``, ``item()``,
``tolist()``, ``str()``, ``repr()``, ``format()``, so ``print`` and
f-strings, pickling), a blocking copy of the whole array and an implicit wait
for the device, is recorded here: a ``to_host`` and an implicit ``sync`` at
the caller's line.
"""

from __future__ import annotations

import pickle
import types
import warnings
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

import numpy as np

from . import _core

__version__ = "0.0.0+fake"

_HostArray = np.ndarray[tuple[int, ...], np.dtype[Any]]

_MESSAGE_IMPLICIT = (
    "Implicit conversion to a NumPy array is not allowed. Please use `.get()` "
    "to construct a NumPy array explicitly."
)


def _describe(api: str, array: np.ndarray[Any, Any]) -> str:
    return _core.describe_call(api, list(array.shape), array.dtype.name)


def _refuse_host(value: object, where: str) -> NoReturn:
    raise TypeError(
        f"cupy.{where}: unsupported type {type(value).__module__}."
        f"{type(value).__qualname__} (host memory); copy it to the device "
        "first with cunumpy.to_cupy() (the fake CuPy refuses it as CuPy does)"
    )


def _unwrap(value: Any, where: str) -> Any:
    """The NumPy arrays behind fake arrays in `value` (also in tuples, lists
    and dicts); NumPy arrays, which CuPy refuses, raise TypeError."""
    if isinstance(value, ndarray):
        return value._array
    if isinstance(value, np.ndarray):
        _refuse_host(value, where)
    kind = type(value)
    if kind is tuple or kind is list:
        return kind(_unwrap(item, where) for item in value)
    if kind is dict:
        return {key: _unwrap(item, where) for key, item in value.items()}
    return value


def _wrap(value: Any) -> Any:
    """NumPy arrays and scalars as fake arrays (CuPy returns 0-d arrays
    where NumPy returns scalars); tuples and lists of them too."""
    if isinstance(value, np.ndarray):
        return ndarray._of(value)
    if isinstance(value, np.generic):
        return ndarray._of(np.asarray(value))
    kind = type(value)
    if kind is tuple or kind is list:
        return kind(_wrap(item) for item in value)
    return value


def _implicit_wait(api: str) -> None:
    """Records the wait for the device that CuPy makes in a scalar read, as
    an implicit sync at the caller's line (nothing runs on Kokkos: no fence
    stands for it)."""
    with _core.RecordedWait(api, True):
        pass


def _device_function(function: Callable[..., Any], name: str) -> Callable[..., Any]:
    """NumPy's `function` on fake arrays, returning fake arrays."""

    def on_device(*args: Any, **kwargs: Any) -> Any:
        return _wrap(function(*_unwrap(args, name), **_unwrap(kwargs, name)))

    on_device.__name__ = name.rsplit(".", 1)[-1]
    on_device.__qualname__ = name
    on_device.__doc__ = f"cupy.{name} of the fake CuPy: numpy.{name} on device arrays."
    return on_device


def _binary(name: str) -> Callable[[ndarray, Any], Any]:
    def operator(self: ndarray, other: Any) -> Any:
        if isinstance(other, np.ndarray):
            _refuse_host(other, f"ndarray.{name}")
        operand = other._array if isinstance(other, ndarray) else other
        result = getattr(self._array, name)(operand)
        if result is NotImplemented:
            return NotImplemented
        return _wrap(result)

    operator.__name__ = name
    return operator


def _in_place(name: str) -> Callable[[ndarray, Any], ndarray]:
    def operator(self: ndarray, other: Any) -> ndarray:
        getattr(self._array, name)(_unwrap(other, f"ndarray.{name}"))
        return self

    operator.__name__ = name
    return operator


def _unary(name: str) -> Callable[[ndarray], Any]:
    def operator(self: ndarray) -> Any:
        return _wrap(getattr(self._array, name)())

    operator.__name__ = name
    return operator


class ndarray:  # noqa: N801 (CuPy's name)
    """A device array of the fake CuPy: host memory behind CuPy's type."""

    __slots__ = ("_array",)
    __module__ = "cupy"
    __hash__ = None  # type: ignore[assignment]  # arrays are unhashable
    __array_priority__ = 100.0

    def __init__(
        self, shape: int | tuple[int, ...], dtype: Any = float, order: Any = "C"
    ) -> None:
        self._array: _HostArray = np.empty(shape, dtype, order=order)

    @classmethod
    def _of(cls, array: np.ndarray[Any, Any]) -> ndarray:
        made = cls.__new__(cls)
        made._array = array
        return made

    # Attributes that need no copy.
    @property
    def shape(self) -> tuple[int, ...]:
        return self._array.shape

    @property
    def dtype(self) -> np.dtype[Any]:
        return self._array.dtype

    @property
    def ndim(self) -> int:
        return self._array.ndim

    @property
    def size(self) -> int:
        return self._array.size

    @property
    def nbytes(self) -> int:
        return self._array.nbytes

    @property
    def itemsize(self) -> int:
        return self._array.itemsize

    @property
    def strides(self) -> tuple[int, ...]:
        return self._array.strides

    @property
    def flags(self) -> Any:
        return self._array.flags

    @property
    def T(self) -> ndarray:  # noqa: N802 (NumPy's name)
        return ndarray._of(self._array.T)

    @property
    def real(self) -> ndarray:
        return ndarray._of(self._array.real)

    @property
    def imag(self) -> ndarray:
        return ndarray._of(self._array.imag)

    @property
    def device(self) -> _Device:
        return _Device(0)

    # Explicit copies (not recorded: with the real CuPy they are invisible to
    # cunumpy; cunumpy's own conversions announce them).
    def get(
        self,
        stream: Any = None,
        order: Any = "C",
        out: np.ndarray[Any, Any] | None = None,
        blocking: bool = True,
    ) -> np.ndarray[Any, Any]:
        """A NumPy copy (into `out` when given); at once, whatever the
        stream."""
        if out is None:
            return np.array(self._array, order=order, copy=True)
        if out.shape != self.shape or out.dtype != self.dtype:
            raise ValueError(
                "ndarray.get: `out` must have the shape and dtype of the array"
            )
        np.copyto(out, self._array)
        return out

    def set(self, arr: np.ndarray[Any, Any], stream: Any = None) -> None:
        """Copies the host array `arr` (same shape and dtype) into this one."""
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"ndarray.set: only numpy.ndarray is supported, not {type(arr).__name__}")
        if arr.shape != self.shape:
            raise ValueError(f"ndarray.set: shape mismatch {arr.shape} != {self.shape}")
        if arr.dtype != self.dtype:
            raise TypeError(f"ndarray.set: {arr.dtype} array cannot be set to {self.dtype} array")
        np.copyto(self._array, arr)

    def copy(self, order: Any = "C") -> ndarray:
        return ndarray._of(self._array.copy(order=order))

    def astype(self, dtype: Any, order: Any = "K", copy: bool = True) -> ndarray:
        return ndarray._of(self._array.astype(dtype, order=order, copy=copy))

    # Reads that the real CuPy makes silently: ndarray.get() inside the
    # method, a blocking copy of the whole array and an implicit wait for the
    # device, recorded here; what follows is NumPy's, on the host copy, so
    # values, text and errors are CuPy's.
    def _to_host(self, api: str, order: Any = "C") -> _HostArray:
        with _core.AnnouncedCopy(_describe(api, self._array), "Host", "Cuda", self.nbytes):
            host = np.array(self._array, order=order, copy=True)
        _implicit_wait(api)
        return host

    def __float__(self) -> float:
        return float(self._to_host("float"))

    def __int__(self) -> int:
        return int(self._to_host("int"))

    def __complex__(self) -> complex:
        return complex(self._to_host("complex"))

    def __bool__(self) -> bool:
        # CuPy decides empty and larger arrays from the shape, without a copy.
        if self.size == 0:
            warnings.warn(
                "The truth value of an empty array is ambiguous. Returning "
                "False, but in future this will result in an error. Use "
                "`array.size > 0` to check that an array is not empty.",
                DeprecationWarning,
                stacklevel=2,
            )
            return False
        if self.size > 1:
            raise ValueError(
                "The truth value of an array with more than one element is "
                "ambiguous. Use a.any() or a.all()"
            )
        return bool(self._to_host("bool"))

    def __bytes__(self) -> bytes:
        return bytes(self._to_host("bytes"))

    def __repr__(self) -> str:
        return repr(self._to_host("repr"))

    def __str__(self) -> str:
        return str(self._to_host("str"))

    def __format__(self, format_spec: str) -> str:
        return format(self._to_host("format"), format_spec)

    def item(self) -> Any:
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self._to_host("item").item()

    def tolist(self) -> Any:
        return self._to_host("tolist").tolist()

    def tobytes(self, order: Any = "C") -> bytes:
        return self._to_host("tobytes").tobytes(order)

    def tofile(self, fid: Any, sep: str = "", format: str = "%s") -> None:  # noqa: A002 (NumPy's name)
        self._to_host("tofile").tofile(fid, sep, format)

    def __reduce__(self) -> tuple[Callable[..., ndarray], tuple[_HostArray]]:
        return array, (self._to_host("pickle", order="A"),)

    def dumps(self) -> bytes:
        return pickle.dumps(self, -1)

    def dump(self, file: Any) -> None:
        pickle.dump(self, file, -1)

    # Copies on the device (without them copy.copy would go through pickle).
    def __copy__(self) -> ndarray:
        return self.copy()

    def __deepcopy__(self, memo: Any) -> ndarray:
        return self.copy()

    # No __index__, as with CuPy: range(x) and list[x] raise TypeError rather
    # than copy.

    # No implicit conversion to NumPy, as with CuPy.
    def __array__(self, dtype: Any = None, copy: Any = None) -> NoReturn:
        raise TypeError(_MESSAGE_IMPLICIT)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        where = f"{ufunc.__name__}"
        return _wrap(getattr(ufunc, method)(*_unwrap(inputs, where), **_unwrap(kwargs, where)))

    def __array_function__(self, function: Any, types: Any, args: Any, kwargs: Any) -> Any:
        where = getattr(function, "__name__", "function")
        return _wrap(function(*_unwrap(args, where), **_unwrap(kwargs, where)))

    # Indexing and iteration stay on the device.
    def __getitem__(self, key: Any) -> ndarray:
        return _wrap(self._array[_unwrap(key, "ndarray.__getitem__")])  # type: ignore[no-any-return]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._array[_unwrap(key, "ndarray.__setitem__")] = _unwrap(value, "ndarray.__setitem__")

    def __len__(self) -> int:
        return len(self._array)

    def __iter__(self) -> Iterator[ndarray]:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[index] for index in range(len(self._array)))

    # Methods forwarded to NumPy's (reshape, sum, argmax, ...), results wrapped.
    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(f"'cupy.ndarray' object has no attribute {name!r}")
        value = getattr(self._array, name)
        if callable(value):
            return _device_function(value, f"ndarray.{name}")
        return _wrap(value)

    __add__ = _binary("__add__")
    __radd__ = _binary("__radd__")
    __sub__ = _binary("__sub__")
    __rsub__ = _binary("__rsub__")
    __mul__ = _binary("__mul__")
    __rmul__ = _binary("__rmul__")
    __truediv__ = _binary("__truediv__")
    __rtruediv__ = _binary("__rtruediv__")
    __floordiv__ = _binary("__floordiv__")
    __rfloordiv__ = _binary("__rfloordiv__")
    __mod__ = _binary("__mod__")
    __rmod__ = _binary("__rmod__")
    __pow__ = _binary("__pow__")
    __rpow__ = _binary("__rpow__")
    __matmul__ = _binary("__matmul__")
    __rmatmul__ = _binary("__rmatmul__")
    __and__ = _binary("__and__")
    __rand__ = _binary("__rand__")
    __or__ = _binary("__or__")
    __ror__ = _binary("__ror__")
    __xor__ = _binary("__xor__")
    __rxor__ = _binary("__rxor__")
    __lshift__ = _binary("__lshift__")
    __rshift__ = _binary("__rshift__")
    __lt__ = _binary("__lt__")
    __le__ = _binary("__le__")
    __gt__ = _binary("__gt__")
    __ge__ = _binary("__ge__")
    __eq__ = _binary("__eq__")
    __ne__ = _binary("__ne__")
    __iadd__ = _in_place("__iadd__")
    __isub__ = _in_place("__isub__")
    __imul__ = _in_place("__imul__")
    __itruediv__ = _in_place("__itruediv__")
    __ipow__ = _in_place("__ipow__")
    __neg__ = _unary("__neg__")
    __pos__ = _unary("__pos__")
    __abs__ = _unary("__abs__")
    __invert__ = _unary("__invert__")


# Creating arrays: the host-to-device copies (not recorded, as with the real
# CuPy; cunumpy's conversions announce theirs).
def array(obj: Any, dtype: Any = None, copy: bool = True, order: Any = "K", ndmin: int = 0) -> ndarray:
    """A device copy of `obj` (a host array, a list, a device array)."""
    if isinstance(obj, ndarray):
        obj = obj._array
    return ndarray._of(np.array(obj, dtype=dtype, copy=True, order=order, ndmin=ndmin))


def asarray(a: Any, dtype: Any = None, order: Any = None) -> ndarray:
    """`a` itself when it is a device array of `dtype`, else a device copy."""
    if isinstance(a, ndarray):
        if (dtype is None or np.dtype(dtype) == a.dtype) and order in (None, "K", "A"):
            return a
        return ndarray._of(np.asarray(a._array, dtype=dtype, order=order))
    return ndarray._of(np.array(a, dtype=dtype, order=order or "K", copy=True))


def ascontiguousarray(a: Any, dtype: Any = None) -> ndarray:
    if not isinstance(a, ndarray):
        _refuse_host(a, "ascontiguousarray")
    result = np.ascontiguousarray(a._array, dtype=dtype)
    return a if result is a._array else ndarray._of(result)


def asfortranarray(a: Any, dtype: Any = None) -> ndarray:
    if not isinstance(a, ndarray):
        _refuse_host(a, "asfortranarray")
    result = np.asfortranarray(a._array, dtype=dtype)
    return a if result is a._array else ndarray._of(result)


def asnumpy(a: Any, stream: Any = None, order: Any = "C", out: Any = None) -> np.ndarray[Any, Any]:
    """A host copy of `a` (not recorded, as with the real CuPy)."""
    if isinstance(a, ndarray):
        return a.get(stream=stream, order=order, out=out)
    return np.asarray(a, order=order)


def get_array_module(*args: Any) -> types.ModuleType:
    import sys

    if any(isinstance(arg, ndarray) for arg in args):
        return sys.modules[__name__]
    return np


def is_available() -> bool:
    return True


# cupy.cuda: one device, streams and events that complete at once, and
# page-locked memory that is ordinary host memory.
class _Device:
    def __init__(self, device: int = 0) -> None:
        self.id = device

    def __enter__(self) -> _Device:
        return self

    def __exit__(self, *args: object) -> None:
        pass

    def use(self) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"<CUDA Device {self.id} (fake)>"


class _Event:
    def __init__(self, block: bool = False, disable_timing: bool = False, interprocess: bool = False) -> None:
        self.recorded = False

    @property
    def done(self) -> bool:
        return True

    def record(self, stream: Any = None) -> None:
        self.recorded = True

    def synchronize(self) -> None:
        pass


class _Stream:
    null: _Stream

    def __init__(self, null: bool = False, non_blocking: bool = False, ptds: bool = False) -> None:
        self.non_blocking = non_blocking
        self._previous: list[_Stream] = []

    def __enter__(self) -> _Stream:
        self._previous.append(_current_stream[0])
        _current_stream[0] = self
        return self

    def __exit__(self, *args: object) -> None:
        _current_stream[0] = self._previous.pop()

    @property
    def done(self) -> bool:
        return True

    def record(self, event: _Event | None = None) -> _Event:
        event = event or _Event()
        event.record(self)
        return event

    def wait_event(self, event: _Event) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def use(self) -> _Stream:
        _current_stream[0] = self
        return self


_Stream.null = _Stream(null=True)
_current_stream = [_Stream.null]


def _get_current_stream() -> _Stream:
    return _current_stream[0]


def _alloc_pinned_memory(size: int) -> np.ndarray[Any, Any]:
    """`size` bytes of "page-locked" memory: a buffer NumPy can view."""
    return np.empty(int(size), np.uint8)


class _Runtime(types.ModuleType):
    @staticmethod
    def getDeviceCount() -> int:  # noqa: N802 (CUDA's name)
        return 1

    @staticmethod
    def deviceSynchronize() -> None:  # noqa: N802 (CUDA's name)
        pass

    @staticmethod
    def runtimeGetVersion() -> int:  # noqa: N802 (CUDA's name)
        return 12000


cuda = types.ModuleType("cupy.cuda", "CUDA of the fake CuPy: one device, streams that finish at once.")
cuda.runtime = _Runtime("cupy.cuda.runtime")  # type: ignore[attr-defined]
cuda.Device = _Device  # type: ignore[attr-defined]
cuda.Stream = _Stream  # type: ignore[attr-defined]
cuda.Event = _Event  # type: ignore[attr-defined]
cuda.get_current_stream = _get_current_stream  # type: ignore[attr-defined]
cuda.alloc_pinned_memory = _alloc_pinned_memory  # type: ignore[attr-defined]
cuda.is_available = is_available  # type: ignore[attr-defined]


class _Forwarding(types.ModuleType):
    """A namespace of NumPy's (numpy.fft, numpy.linalg, ...) on fake arrays."""

    def __init__(self, name: str, numpy_module: types.ModuleType) -> None:
        super().__init__(name, f"{name} of the fake CuPy: {numpy_module.__name__} on device arrays.")
        self._numpy_module = numpy_module

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(self._numpy_module, name)
        if callable(value) and not isinstance(value, type):
            prefix = self.__name__.removeprefix("cupy").lstrip(".")
            value = _device_function(value, f"{prefix}.{name}" if prefix else name)
            setattr(self, name, value)
        return value


fft = _Forwarding("cupy.fft", np.fft)
linalg = _Forwarding("cupy.linalg", np.linalg)
random = _Forwarding("cupy.random", np.random)

_numpy_namespace = _Forwarding("cupy", np)


def __getattr__(name: str) -> Any:
    # Everything else (abs, argmax, zeros, float64, pi, ...) is NumPy's, on
    # fake arrays.
    return getattr(_numpy_namespace, name)


def _modules() -> dict[str, types.ModuleType]:
    """The entries of sys.modules the fake CuPy takes while installed."""
    import sys

    this = sys.modules[__name__]
    return {
        "cupy": this,
        "cupy.cuda": cuda,
        "cupy.cuda.runtime": cuda.runtime,
        "cupy.fft": fft,
        "cupy.linalg": linalg,
        "cupy.random": random,
    }
