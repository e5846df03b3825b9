"""Where host and device meet on the "kokkos" backend: which arguments of
an array operation are host data (a copy to the device), which are host
numbers (shapes, axes, counts: a DeviceArray there would be read on the
host), and which results are host values made of device data. The array
operations (_operations.py) refuse the first two and turn the last into
0-d DeviceArrays, as CuPy returns them; docs/python.md has the table.
"""

from __future__ import annotations

import array
import functools
import inspect
import types
from typing import Any

import numpy as np

from ._backend import is_cupy_array
from ._core import DeviceArray

#: Parameters that NumPy and CuPy read as host numbers (shapes, axes, sizes,
#: counts), by NumPy's name ("function.parameter" where the name alone also
#: names data elsewhere). Host numbers there are parameters in any form (an
#: int, a tuple, a list); a DeviceArray there would be read on the host.
HOST_NUMBER_PARAMETERS = frozenset(
    {
        "M", "N", "axes", "axis", "axis1", "axis2", "ddof", "decimals", "deg",
        "destination", "dimensions", "dims", "indices_or_sections", "k", "kth",
        "n", "new_shape", "newshape", "num", "offset", "ord", "pad_width",
        "range", "repeats", "reps", "s", "seed", "shape", "shift", "size",
        "source",
        "arange.start", "arange.start_or_stop", "arange.step", "arange.stop",
        "broadcast_shapes.args", "min_scalar_type.a", "piecewise.funclist",
    }
)

#: Functions whose Python values (ints, bools, strs) describe the arguments'
#: shapes and dtypes, not their data: these stay Python values.
METADATA_FUNCTIONS = frozenset(
    {
        "can_cast", "common_type", "einsum_path", "iscomplexobj", "isdtype",
        "isfortran", "isrealobj", "isscalar", "issubdtype", "iterable",
        "may_share_memory", "mintypecode", "ndim", "result_type",
        "shape", "shares_memory", "size",
    }
)

HOST_CALL = "run host code on host data with cunumpy.host_call() (counted copies)"

PYTHON_FUNCTIONS = (types.FunctionType, types.MethodType, functools.partial)

_NUMBERS = (int, float, complex, np.generic)  # bool is an int
_NOT_DATA = (DeviceArray, str, slice, type, np.dtype, dict) + _NUMBERS
_ARRAY_PROTOCOLS = ("__array__", "__array_interface__", "__array_struct__", "__dlpack__")


def host_data(value: Any) -> str | None:
    """What `value` is when it is data in host memory that the device could
    read only through a copy: a NumPy array, a list or tuple holding host
    numbers, a buffer, an array of another library, any other sequence or
    iterable NumPy would make an array of (a range, a generator); None
    otherwise (device arrays, scalars, strings, dtypes, functions)."""
    if isinstance(value, _NOT_DATA) or value is None or value is Ellipsis:
        return None
    if isinstance(value, np.ndarray):
        return "a NumPy array"
    if isinstance(value, (list, tuple)):
        if any(_holds_host_number(item) for item in value):
            return f"a {type(value).__name__} of host numbers"
        return None
    if is_cupy_array(value) or isinstance(value, PYTHON_FUNCTIONS):
        return None  # a CuPy array is refused by _to_library, naming to_device()
    if isinstance(value, (bytes, bytearray, memoryview, array.array)) or any(
        hasattr(value, attribute) for attribute in ("__iter__", "__len__", *_ARRAY_PROTOCOLS)
    ):
        return f"a {type(value).__name__}"
    return None


def _holds_host_number(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return any(_holds_host_number(item) for item in value)
    return isinstance(value, _NUMBERS) or host_data(value) is not None


def holds_device_array(value: Any) -> bool:
    if isinstance(value, DeviceArray):
        return True
    if isinstance(value, (list, tuple)):
        return any(holds_device_array(item) for item in value)
    if isinstance(value, dict):
        return any(holds_device_array(item) for item in value.values())
    return False


def _is_index_tuple(value: Any) -> bool:
    """A tuple of Python ints (nested ones too): a shape, axes or an index."""
    return isinstance(value, tuple) and all(
        _is_index_tuple(item)
        if isinstance(item, tuple)
        else isinstance(item, (int, np.integer)) and not isinstance(item, bool)
        for item in value
    )


#: The names of a call's positional arguments: NumPy's names of the
#: positional parameters and of its *args ("" where every positional argument
#: is an operand, None where NumPy does not name them).
Names = tuple[tuple[str, ...], "str | None"]

OPERANDS: Names = ((), "")
UNNAMED: Names = ((), None)


#: NumPy 1.x's functions in C without a signature whose arguments are data
#: or host numbers, with the names NumPy 2 gives them.
_NUMPY_1_NAMES: dict[str, Names] = {
    "arange": (("start", "stop", "step", "dtype"), None),
    "bincount": (("x", "weights", "minlength"), None),
    "concatenate": (("arrays", "axis", "out"), None),
    "copyto": (("dst", "src", "casting", "where"), None),
    "dot": (("a", "b", "out"), None),
    "empty": (("shape", "dtype", "order"), None),
    "empty_like": (("prototype", "dtype", "order", "subok", "shape"), None),
    "inner": (("a", "b"), None),
    "lexsort": (("keys", "axis"), None),
    "min_scalar_type": (("a",), None),
    "packbits": (("a", "axis", "bitorder"), None),
    "putmask": (("a", "mask", "values"), None),
    "ravel_multi_index": (("multi_index", "dims", "mode", "order"), None),
    "unpackbits": (("a", "axis", "count", "bitorder"), None),
    "unravel_index": (("indices", "shape", "order"), None),
    "vdot": (("a", "b"), None),
    "where": (("condition", "x", "y"), None),
    "zeros": (("shape", "dtype", "order"), None),
}


@functools.lru_cache(maxsize=None)
def numpy_names(numpy_function: Any) -> Names:
    """The names of `numpy_function`'s positional parameters, from its
    signature; unnamed where it has none (numpy.random's functions in
    NumPy 1.x)."""
    if isinstance(numpy_function, np.ufunc):
        return OPERANDS
    try:
        parameters = list(inspect.signature(numpy_function).parameters.values())
    except (TypeError, ValueError):
        name = getattr(numpy_function, "__name__", "")
        if getattr(np, name, None) is numpy_function and name in _NUMPY_1_NAMES:
            return _NUMPY_1_NAMES[name]
        return UNNAMED
    positional = tuple(
        p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    )
    rest = next((p.name for p in parameters if p.kind == p.VAR_POSITIONAL), None)
    return positional, rest


def check_argument(name: str, parameter: str | None, value: Any, space: str) -> None:
    """Refuses `value`, the argument `parameter` of `name`, where the library
    would need a copy between host and device to use it."""
    if parameter and (
        parameter in HOST_NUMBER_PARAMETERS
        or f"{name.rsplit('.', 1)[-1]}.{parameter}" in HOST_NUMBER_PARAMETERS
    ):
        if holds_device_array(value):
            raise TypeError(
                f"cunumpy.{name}: argument {parameter!r} is read as host numbers "
                "(a shape, an axis, a count) and it holds a DeviceArray, whose "
                "values would be read on the host without counting; read them "
                "with int() or cunumpy.to_numpy() (counted)"
            )
        return
    if isinstance(value, (DeviceArray, _NUMBERS)):
        return
    if parameter is None and _is_index_tuple(value):
        return  # a shape, axes or an index NumPy does not name
    what = host_data(value)
    if what is not None:
        argument = f"argument {parameter!r}" if parameter else "an argument"
        raise TypeError(
            f"cunumpy.{name}: {argument} is {what} (host memory) and the "
            f"'kokkos' backend's arrays are in {space}; copy it there with "
            f"cunumpy.to_cunumpy() (counted), or {HOST_CALL}"
        )


def check_arguments(name: str, names: Names, args: Any, kwargs: Any, space: str) -> None:
    positional, rest = names
    for index, value in enumerate(args):
        check_argument(name, positional[index] if index < len(positional) else rest, value, space)
    for parameter, value in kwargs.items():
        check_argument(name, parameter, value, space)


def check_key(name: str, key: Any, space: str) -> None:
    """An index (a[key]): ints, slices, None, Ellipsis and DeviceArrays are
    read where the data is; a list or an array in it is host data, and a
    DeviceArray as a slice bound would be read on the host."""
    for item in key if isinstance(key, tuple) else (key,):
        if isinstance(item, slice):
            if any(isinstance(bound, DeviceArray) for bound in (item.start, item.stop, item.step)):
                raise TypeError(
                    f"cunumpy.{name}: a slice bound is a DeviceArray, whose value "
                    "would be read on the host without counting (CuPy refuses it); "
                    "read it with int() (counted)"
                )
        else:
            check_argument(name, "", item, space)


_HOST_VALUES = (bool, int, float, complex, str, bytes)


def holds_host_value(value: Any) -> bool:
    if type(value) in _HOST_VALUES:
        return True
    return isinstance(value, (list, tuple)) and any(holds_host_value(item) for item in value)


def host_values_as_arrays(value: Any, name: str) -> Any:
    """Python numbers NumPy made of device data as 0-d arrays, as CuPy
    returns them, so that reading them is a counted copy; a str or bytes made
    of device data is refused."""
    kind = type(value)
    if kind is str or kind is bytes:
        raise TypeError(
            f"cunumpy.{name}: the result is a {kind.__name__} written from device "
            "data on the host, which would read it without counting; "
            f"{HOST_CALL}, or copy the arrays with cunumpy.to_numpy() first"
        )
    if kind in _HOST_VALUES:
        return np.asarray(value)
    if isinstance(value, tuple) and hasattr(value, "_make"):  # a named tuple
        return value._make(host_values_as_arrays(item, name) for item in value)
    if kind is tuple or kind is list:
        return kind(host_values_as_arrays(item, name) for item in value)
    return value
