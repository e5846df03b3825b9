"""xp.testing's fake device: for one block (use_fake_device) or from now on
(enable_fake_device), however the context is entered."""

import gc

import numpy as np
import pytest

import cunumpy as xp
from cunumpy import _core

needs_fake_device = pytest.mark.skipif(
    not xp.testing.has_fake_device, reason="this Kokkos version has no fake device"
)


@needs_fake_device
def test_enable_fake_device_lasts():
    xp.testing.enable_fake_device()
    gc.collect()
    assert xp.get_backend() == "kokkos"
    assert _core.device_space() == "fake"
    with xp.profiling.count_transfers() as counter:
        xp.to_numpy(xp.to_cunumpy(np.zeros(4)))
    assert (counter.to_device, counter.to_host) == (1, 1)


@needs_fake_device
def test_a_context_entered_on_one_line_keeps_the_fake_device():
    # Its object is collected at once: the fake device stays, as
    # enable_fake_device() leaves it, never the numpy backend in silence.
    xp.testing.use_fake_device().__enter__()
    gc.collect()
    assert xp.get_backend() == "kokkos"
    assert _core.device_space() == "fake"


@needs_fake_device
def test_a_block_restores_what_was_there():
    xp.set_backend("numpy")
    space = _core.device_space()
    with xp.testing.use_fake_device():
        assert xp.get_backend() == "kokkos" and _core.device_space() == "fake"
    assert xp.get_backend() == "numpy" and _core.device_space() == space


@needs_fake_device
def test_exit_without_enter_says_how_to_use_it():
    with pytest.raises(RuntimeError, match=r"use it as `with use_fake_device\(\):`"):
        xp.testing.use_fake_device().__exit__(None, None, None)


@pytest.mark.skipif(xp.testing.has_fake_device, reason="this Kokkos has a fake device")
def test_without_a_fake_device_both_say_why():
    for function in (xp.testing.enable_fake_device, xp.testing.use_fake_device):
        with pytest.raises(RuntimeError, match="no fake device"):
            function()
