"""Test helpers: the fake device and the fake CuPy."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

from . import _backend, _core
from ._backend import state

__all__ = ["has_fake_device", "use_fake_cupy", "use_fake_device"]

#: True when this Kokkos version has logical memory spaces (Kokkos < 4.3),
#: on which the fake device is built.
has_fake_device: bool = _core.has_fake_device


@contextlib.contextmanager
def use_fake_device() -> Iterator[None]:
    """Makes the "kokkos" backend use the fake device while the block runs,
    and makes "kokkos" the active backend.

    The fake device is host memory that Kokkos treats as a distinct device
    space ("FakeDevice"): copies to and from it go through Kokkos::deep_copy
    and are real, counted transfers, so the whole API runs on a CPU-only
    machine. The previous device space and backend are restored at the end;
    arrays made on the fake device stay valid. Raises RuntimeError where
    Kokkos has no logical memory spaces (Kokkos 4.3 and later).
    """
    if not has_fake_device:
        raise RuntimeError(
            "use_fake_device: this Kokkos version has no logical memory "
            "spaces (removed in Kokkos 4.3), so there is no fake device"
        )
    previous_space = _core.device_space()
    previous_backend = state.name
    _core.set_device_space("fake")
    state.name = "kokkos"
    try:
        yield
    finally:
        _core.set_device_space(previous_space)
        state.name = previous_backend


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
