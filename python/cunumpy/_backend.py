"""The active backend and access to CuPy."""

import contextlib
import os
import sys

BACKENDS = ("numpy", "kokkos", "cupy")


class _State:
    __slots__ = ("name",)

    def __init__(self):
        self.name = "numpy"


state = _State()

_cupy = None  # the module once found usable, False once found unusable


def cupy_or_none():
    """CuPy when it is importable and sees a CUDA device, else None."""
    global _cupy
    if _cupy is None:
        try:
            import cupy

            if cupy.cuda.runtime.getDeviceCount() < 1:
                raise RuntimeError("no CUDA device")
            _cupy = cupy
        except Exception as error:  # ImportError, CUDA errors
            _cupy = False
            cupy_or_none.error = error
    return _cupy or None


cupy_or_none.error = None


def require_cupy(function):
    """CuPy, or ImportError naming `function` when CuPy or CUDA is unusable."""
    cupy = cupy_or_none()
    if cupy is None:
        raise ImportError(
            f"{function} requires CuPy and a usable CUDA device "
            f"({cupy_or_none.error})"
        )
    return cupy


def is_cupy_array(value):
    """True for a cupy.ndarray (without importing CuPy)."""
    cupy = sys.modules.get("cupy")
    return cupy is not None and isinstance(value, getattr(cupy, "ndarray", ()))


def set_backend(name):
    """Makes `name` ("numpy", "kokkos" or "cupy") the active backend.

    "kokkos": device arrays are cunumpy.DeviceArray (Kokkos views in the
    device space); "cupy" requires CuPy and a CUDA device (ImportError
    otherwise).
    """
    if name not in BACKENDS:
        raise ValueError(
            f"set_backend: unknown backend {name!r} "
            "(expected 'numpy', 'kokkos' or 'cupy')"
        )
    if name == "cupy":
        require_cupy("set_backend('cupy')")
    state.name = name


def get_backend():
    """The active backend: "numpy", "kokkos" or "cupy"."""
    return state.name


@contextlib.contextmanager
def using(name):
    """Runs the block on backend `name`, then restores the previous one."""
    previous = state.name
    state.name = name
    try:
        yield
    finally:
        state.name = previous


def _initial_backend():
    name = os.environ.get("CUNUMPY_BACKEND", "numpy")
    if name not in BACKENDS:
        raise ValueError(
            f"CUNUMPY_BACKEND={name!r}: expected 'numpy', 'kokkos' or 'cupy'"
        )
    return name


state.name = _initial_backend()
