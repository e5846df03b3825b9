"""Test helpers: the fake device."""

import contextlib

from . import _core
from ._backend import state

__all__ = ["has_fake_device", "use_fake_device"]

#: True when this Kokkos version has logical memory spaces (Kokkos < 4.3),
#: on which the fake device is built.
has_fake_device = _core.has_fake_device


@contextlib.contextmanager
def use_fake_device():
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
