"""host_call, @evaluate_on_host and @setup_on_host: host-only code called
with device arrays, every copy counted."""

import numpy as np

import cunumpy as xp
from helpers import next_site

count_transfers = xp.profiling.count_transfers


def spline(x):
    """A host-only function (think scipy.interpolate)."""
    assert type(x) is np.ndarray
    assert xp.get_backend() == "numpy"  # fun runs on the NumPy backend
    return x**2


def test_host_call_copies_device_arguments_down_and_results_up(device_space):
    x = xp.to_device(np.arange(5.0))
    with count_transfers() as counter:
        site = next_site()
        values = xp.host_call(spline, x)  # x on the device -> values on the device
    assert isinstance(values, xp.DeviceArray)
    np.testing.assert_array_equal(xp.to_numpy(values), np.arange(5.0) ** 2)
    assert (counter.to_host, counter.to_device, counter.total) == (1, 1, 2)
    assert {(e.site, e.what) for e in counter.events} == {
        (site, "host_call(shape=(5,), dtype=float64)")
    }
    assert xp.get_backend() == "kokkos"


def test_host_call_handles_keywords_containers_and_non_arrays(device_space):
    a = xp.to_device(np.ones(2))
    b = xp.to_device(np.full(2, 2.0))

    def combine(pair, scale, offset=None):
        first, second = pair
        return first * scale + offset["value"], "label", 3

    with count_transfers() as counter:
        result, label, number = xp.host_call(combine, (a, b), 2.0, offset={"value": b})
    np.testing.assert_array_equal(xp.to_numpy(result), [4.0, 4.0])
    assert (label, number) == ("label", 3)
    assert (counter.to_host, counter.to_device) == (3, 1)


def test_host_call_on_the_numpy_backend_copies_nothing():
    with count_transfers() as counter:
        values = xp.host_call(spline, np.arange(3.0))
    assert type(values) is np.ndarray and counter.total == 0


def read_spline(path):
    assert xp.get_backend() == "numpy"
    return lambda x: x * 2.0 + float(path)


class Equilibrium:
    @xp.setup_on_host
    def __init__(self, path):
        self.spline = read_spline(path)  # NumPy and SciPy

    @xp.evaluate_on_host
    def pressure(self, x):
        return self.spline(x)


def test_the_documented_equilibrium_class(device_space):
    with count_transfers() as setup:
        equilibrium = Equilibrium("1")
    assert setup.total == 0
    assert Equilibrium.pressure.__name__ == "pressure"
    x = xp.to_device(np.arange(3.0))
    with count_transfers() as counter:
        pressure = equilibrium.pressure(x)
    assert isinstance(pressure, xp.DeviceArray)
    np.testing.assert_array_equal(xp.to_numpy(pressure), np.arange(3.0) * 2.0 + 1.0)
    assert (counter.to_host, counter.to_device) == (1, 1)


class Grid:
    @xp.setup_on_host
    def __init__(self, points, scale=1.0):
        assert xp.get_backend() == "numpy"
        self.points = xp.to_cunumpy(points) * scale  # a host array


def test_setup_on_host_copies_device_arguments_to_the_host(device_space):
    points = xp.to_device(np.arange(3.0))
    with count_transfers() as counter:
        grid = Grid(points, scale=2.0)
    assert type(grid.points) is np.ndarray  # the object holds only host data
    np.testing.assert_array_equal(grid.points, np.arange(3.0) * 2.0)
    assert counter.to_host == 1 and counter.to_device == 0
    assert xp.get_backend() == "kokkos"
    assert Grid.__init__.__wrapped__.__name__ == "__init__"
