"""Fixtures: every test starts on the NumPy backend and the real device
space, and gets them back whatever it changed."""

import numpy as np
import pytest

import cunumpy as xp
from cunumpy import _backend, _core
from helpers import required_extension


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
def fake():
    """The "kokkos" backend on the fake device: real, counted copies."""
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
