"""Test helpers: the fake device and the fake CuPy."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

from . import _backend, _core
from ._backend import state

__all__ = ["enable_fake_device", "has_fake_device", "use_fake_cupy", "use_fake_device"]

#: True when this Kokkos version has logical memory spaces (Kokkos < 4.3),
#: on which the fake device is built.
has_fake_device: bool = _core.has_fake_device


def _require_fake_device(function: str) -> None:
    if not has_fake_device:
        raise RuntimeError(
            f"{function}: this Kokkos version has no logical memory "
            "spaces (removed in Kokkos 4.3), so there is no fake device"
        )


def enable_fake_device() -> None:
    """Makes the "kokkos" backend use the fake device from now on, and makes
    "kokkos" the active backend: for a script or a test session that runs on
    the fake device throughout (use_fake_device() for one block).

    The fake device is host memory that Kokkos treats as a distinct device
    space ("FakeDevice"): copies to and from it go through Kokkos::deep_copy
    and are real, counted transfers, so the whole API runs on a CPU-only
    machine. Raises RuntimeError where Kokkos has no logical memory spaces
    (Kokkos 4.3 and later).
    """
    _require_fake_device("enable_fake_device")
    _core.set_device_space("fake")
    state.name = "kokkos"


class use_fake_device:  # noqa: N801  (used as a function: with use_fake_device():)
    """Makes the "kokkos" backend use the fake device while the block runs,
    and makes "kokkos" the active backend (see enable_fake_device()).

        with xp.testing.use_fake_device():
            ...

    The previous device space and backend are restored when the block ends,
    and only then: a ``use_fake_device().__enter__()`` whose object is
    collected keeps the fake device, as enable_fake_device() does. Arrays
    made on the fake device stay valid. Raises RuntimeError where Kokkos
    has no logical memory spaces (Kokkos 4.3 and later).
    """

    def __init__(self) -> None:
        _require_fake_device("use_fake_device")
        self._previous: tuple[str, str] | None = None

    def __enter__(self) -> None:
        self._previous = (_core.device_space(), state.name)
        enable_fake_device()

    def __exit__(self, *exception: object) -> None:
        if self._previous is None:
            raise RuntimeError(
                "use_fake_device: __exit__ without __enter__; use it as "
                "`with use_fake_device():`"
            )
        space, backend = self._previous
        self._previous = None
        _core.set_device_space(space)
        state.name = backend


@contextlib.contextmanager
def use_fake_cupy() -> Iterator[None]:
    """Makes a CuPy over host memory the CuPy of cunumpy (and `import cupy`)
    while the block runs, and makes "cupy" the active backend.

    Code written for the "cupy" backend runs on a machine without CUDA:
    set_backend("cupy") works, device arrays are ``cupy.ndarray`` (host
    memory behind CuPy's type, refusing implicit conversion to NumPy and
    NumPy operands as CuPy does), and to_cupy, to_numpy, to_cunumpy,
    as_device_array, DeviceMirror, HostStaging, to_host_async and
    cuda.pin_memory make and count their copies as with CuPy. Array
    operations (``xp.abs``, ``xp.fft.rfft``, ...) are NumPy's on the
    wrapped arrays, uncounted like CuPy's. ``float()``, ``int()``,
    ``bool()``, ``complex()``, ``item()``, ``tolist()``, ``str()``,
    ``repr()``, ``format()`` (``print``, f-strings) and pickling of a device
    array, which CuPy answers with a blocking copy and an implicit wait,
    are recorded as a ``to_host`` and a ``sync`` marked ``[implicit]``.

    The previous CuPy (the real one, or none), the modules in sys.modules
    and the backend are restored at the end.
    """
    from . import _fake_cupy

    previous_cupy = _backend._cupy
    previous_error = _backend.cupy_error
    previous_backend = state.name
    absent = object()
    replaced = _fake_cupy._modules()
    previous_modules = {name: sys.modules.get(name, absent) for name in replaced}
    sys.modules.update(replaced)
    _backend._cupy = _fake_cupy
    try:
        _backend.set_backend("cupy")
        yield
    finally:
        for name, module in previous_modules.items():
            if module is absent:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module  # type: ignore[assignment]
        _backend._cupy = previous_cupy
        _backend.cupy_error = previous_error
        state.name = previous_backend
