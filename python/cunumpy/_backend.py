"""The active backend and access to CuPy."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import types
from collections.abc import Iterator
from typing import Any, Literal, Union

BACKENDS = ("numpy", "kokkos", "cupy")

#: The names set_backend() accepts.
Backend = Literal["numpy", "kokkos", "cupy"]


class _State:
    __slots__ = ("name",)

    def __init__(self) -> None:
        self.name: str = "numpy"


state = _State()

# The module once found usable, False once found unusable; and why not.
_cupy: Union[types.ModuleType, Literal[False], None] = None
cupy_error: BaseException | None = None


def cupy_or_none() -> Any:
    """CuPy when it is importable and sees a CUDA device, else None."""
    global _cupy, cupy_error
    if _cupy is None:
        try:
            cupy = importlib.import_module("cupy")
            if cupy.cuda.runtime.getDeviceCount() < 1:
                raise RuntimeError("no CUDA device")
            _cupy = cupy
        except Exception as error:  # ImportError, CUDA errors
            _cupy = False
            cupy_error = error
    return _cupy or None


def require_cupy(function: str) -> Any:
    """CuPy, or ImportError naming `function` when CuPy or CUDA is unusable."""
    cupy = cupy_or_none()
    if cupy is None:
        raise ImportError(
            f"{function} requires CuPy and a usable CUDA device ({cupy_error}); "
            "cunumpy.testing.use_fake_cupy() gives tests a CuPy without CUDA"
        )
    return cupy


def is_cupy_array(value: object) -> bool:
    """True for a cupy.ndarray (without importing CuPy)."""
    cupy = sys.modules.get("cupy")
    return cupy is not None and isinstance(value, getattr(cupy, "ndarray", ()))


def set_backend(name: Backend) -> None:
    """Makes `name` ("numpy", "kokkos" or "cupy") the active backend.

    "kokkos": device arrays are cunumpy.DeviceArray (Kokkos views in the
    device space); "cupy" requires CuPy and a CUDA device (ImportError
    otherwise), or cunumpy.testing.use_fake_cupy().
    """
    if name not in BACKENDS:
        raise ValueError(
            f"set_backend: unknown backend {name!r} "
            "(expected 'numpy', 'kokkos' or 'cupy')"
        )
    if name == "cupy":
        require_cupy("set_backend('cupy')")
    state.name = name


def get_backend() -> Backend:
    """The active backend: "numpy", "kokkos" or "cupy"."""
    return state.name  # type: ignore[return-value]


@contextlib.contextmanager
def using(name: str) -> Iterator[None]:
    """Runs the block on backend `name`, then restores the previous one."""
    previous = state.name
    state.name = name
    try:
        yield
    finally:
        state.name = previous


def _initial_backend() -> str:
    name = os.environ.get("CUNUMPY_BACKEND", "numpy")
    if name not in BACKENDS:
        raise ValueError(
            f"CUNUMPY_BACKEND={name!r}: expected 'numpy', 'kokkos' or 'cupy'"
        )
    return name


state.name = _initial_backend()
