"""Fixtures: every test starts on the NumPy backend and the real device
space, and gets them back whatever it changed."""

import numpy as np
import pytest

try:
    import cunumpy as xp
    from cunumpy import _backend, _core
except ImportError as error:
    # A device build on a machine without its device: nothing can run.
    if "no CUDA device is usable here" not in str(error):
        raise
    unusable = str(error)
else:
    unusable = None
from helpers import required_extension


def pytest_sessionstart(session):
    """One line and status 77 (skipped under ctest) when the build's
    device is not here."""
    if unusable is not None:
        pytest.exit(unusable, returncode=77)


@pytest.fixture(autouse=True)
def restore_backend():
    backend = _backend.state.name
    space = _core.device_space()
    _backend.state.name = "numpy"
    _core.set_device_space("device")
    yield
    _backend.state.name = backend
    _core.set_device_space(space)


@pytest.fixture
def device_space():
    """The "kokkos" backend on a device memory space, whose Kokkos name it
    gives: the fake device where this Kokkos has one (real, counted copies
    on a CPU), else the build's device space (CudaSpace on a CUDA build)."""
    if xp.testing.has_fake_device:
        with xp.testing.use_fake_device():
            yield _core.device_space_name()
    elif _core.has_device_backend:
        xp.set_backend("kokkos")
        yield _core.device_space_name()
    else:
        pytest.skip("this Kokkos version has no fake device, and this build no device")


@pytest.fixture
def fake():
    """The "kokkos" backend on the fake device, for what only it does
    (host memory behind a device space, copies that end at once)."""
    if not xp.testing.has_fake_device:
        pytest.skip("this Kokkos version has no fake device")
    with xp.testing.use_fake_device():
        yield


@pytest.fixture
def host_only_kokkos():
    """The "kokkos" backend of a host-only Kokkos build (no fake device)."""
    if _core.has_device_backend:
        pytest.skip("this Kokkos build has a device backend")
    xp.set_backend("kokkos")
    yield


@pytest.fixture
def ext():
    """The test-only extension: C++ code with raw Kokkos copies."""
    return required_extension("cunumpy_test_copies")


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
