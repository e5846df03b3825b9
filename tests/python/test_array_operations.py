"""Array operations on the "kokkos" backend: xp.<function>, DeviceArray's
methods and operators run by the library of the memory (NumPy on the fake
device and on host memory, CuPy on CUDA memory), without a copy; what would
need one is refused or counted."""

import gc

import numpy as np
import pytest

import cunumpy as xp
from cunumpy import _backend, _core, _operations
from helpers import next_site

count_transfers = xp.profiling.count_transfers


def documented_spectrum(samples):
    """The signal example of docs/python.md, verbatim, on the active backend."""
    signal = xp.to_cunumpy(samples)  # one host-to-device copy
    spectrum = xp.abs(xp.fft.rfft(signal)) ** 2
    peak = int(xp.argmax(spectrum))  # one tiny device-to-host copy
    return peak, xp.to_numpy(spectrum)  # one device-to-host copy


@pytest.fixture
def tone():
    t = np.arange(4096) / 4096.0
    return np.sin(2 * np.pi * 50 * t)


def test_the_documented_spectrum_is_the_same_on_every_backend(device_space, tone):
    with count_transfers() as counter:
        peak, spectrum = documented_spectrum(tone)
    assert peak == 50
    xp.set_backend("numpy")
    numpy_peak, numpy_spectrum = documented_spectrum(tone)
    with xp.testing.use_fake_cupy():
        cupy_peak, cupy_spectrum = documented_spectrum(tone)
    assert peak == numpy_peak == cupy_peak
    np.testing.assert_allclose(spectrum, numpy_spectrum, rtol=1e-12, atol=1e-6)
    np.testing.assert_allclose(spectrum, cupy_spectrum, rtol=1e-12, atol=1e-6)
    # What the comments say, and nothing else: the operations copy nothing.
    assert (counter.to_device, counter.to_host, counter.device_copy) == (1, 2, 0)
    assert [e.what for e in counter.events if e.kind == "to_host"][0] == "int(shape=(), dtype=int64)"
    assert [(e.what, e.implicit) for e in counter.events if e.kind == "sync"] == [("int()", True)]


def test_operations_copy_nothing_and_results_share_the_memory(device_space):
    a = xp.to_device(np.arange(6.0))
    with xp.profiling.assert_no_transfers(), count_transfers() as counter:
        matrix = a.reshape(2, 3)
        matrix[0, 0] = 7.0  # written through the view into a's memory
        total = (xp.sqrt(matrix) * 2 - 1).sum(axis=0)
        a += 1
        flipped = matrix.T
    assert counter.total == counter.syncs == 0
    for result in (matrix, total, flipped):
        assert isinstance(result, xp.DeviceArray) and result.space == device_space
    np.testing.assert_array_equal(xp.to_numpy(a), [8, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(xp.to_numpy(flipped), [[8, 4], [2, 5], [3, 6]])
    assert flipped.flags.f_contiguous and not flipped.flags.c_contiguous
    expected = (np.sqrt([[7.0, 1, 2], [3, 4, 5]]) * 2 - 1).sum(axis=0)
    np.testing.assert_allclose(xp.to_numpy(total), expected)


def test_scalars_tuples_and_namespaces_come_back_as_device_arrays(device_space):
    a = xp.to_device(np.array([[2.0, 0.0], [0.0, 3.0]]))
    peak = xp.argmax(a)
    rows, columns = xp.nonzero(a)
    eigen = xp.linalg.eigh(a)
    for result in (peak, rows, columns, eigen.eigenvalues, a.max(), a[1, 1]):
        assert isinstance(result, xp.DeviceArray) and result.space == device_space
    assert peak.shape == () and xp.to_numpy(peak) == 3
    np.testing.assert_allclose(xp.to_numpy(eigen.eigenvalues), [2.0, 3.0])
    zeros = xp.zeros((2, 3), dtype=xp.int32)  # made in the device space
    assert (zeros.space, zeros.shape, zeros.dtype) == (device_space, (2, 3), np.int32)


def test_a_result_keeps_its_memory_alive(device_space):
    before = _core.live_device_arrays()
    source = xp.to_device(np.arange(12.0))
    view = source.reshape(3, 4)[1]  # a view of the source's memory
    computed = xp.abs(source - 20)  # memory of the library
    del source
    gc.collect()
    reuse = [np.full(12, -1.0) for _ in range(100)]  # takes memory freed too early
    np.testing.assert_array_equal(xp.to_numpy(view), [4, 5, 6, 7])
    np.testing.assert_array_equal(xp.to_numpy(computed), 20 - np.arange(12.0))
    del view, computed, reuse
    gc.collect()
    assert _core.live_device_arrays() == before


def test_host_arrays_are_refused_never_copied(device_space):
    a = xp.to_device(np.ones(3))
    host = np.ones(3)
    with count_transfers() as counter:
        with pytest.raises(TypeError, match=r"cunumpy\.abs: an argument is a NumPy array.*to_cunumpy\(\)"):
            xp.abs(host)
        with pytest.raises(TypeError, match=r"DeviceArray\.__add__: .*NumPy array.*to_cunumpy"):
            a + host
        with pytest.raises(TypeError, match=r"DeviceArray\.__radd__: .*NumPy array.*to_cunumpy"):
            host + a
        with pytest.raises(TypeError, match="does not support ufuncs"):
            np.abs(a)
    assert counter.total == counter.syncs == 0


def test_host_functions_on_device_data_are_refused(device_space, tmp_path):
    a = xp.to_device(np.ones(3))
    path = tmp_path / "a.npy"
    with count_transfers() as counter:
        with pytest.raises(TypeError, match=r"cunumpy\.save reads or writes the data on the host.*host_call"):
            xp.save(path, a)
        with pytest.raises(TypeError, match=r"cunumpy\.array2string .*host_call"):
            xp.array2string(a)
    assert not path.exists() and counter.total == counter.syncs == 0


@pytest.mark.parametrize(
    "read, api, dtype, value",
    [
        (float, "float", "float64", 0.5),
        (int, "int", "float64", 0),
        (complex, "complex", "float64", 0.5 + 0j),
        (bool, "bool", "float64", True),
        (lambda a: a.item(), "item", "float64", 0.5),
        (lambda a: a.tolist(), "tolist", "float64", 0.5),
        (lambda a: bool(a < 1.0), "bool", "bool", True),  # `a < 1.0` on the device
    ],
    ids=["float", "int", "complex", "bool", "item", "tolist", "if a < 1"],
)
def test_a_read_by_the_host_is_a_counted_copy_and_wait(device_space, read, api, dtype, value):
    a = xp.to_device(np.array(0.5))
    with count_transfers() as counter:
        site = next_site()
        assert read(a) == value
    if read.__name__ == "<lambda>":  # the line of the lambda reads
        site = f"{__file__}:{read.__code__.co_firstlineno}"
    copy, wait = counter.events
    assert (copy.kind, copy.what, copy.site) == ("to_host", f"{api}(shape=(), dtype={dtype})", site)
    assert (wait.kind, wait.what, wait.implicit, wait.site) == ("sync", f"{api}()", True, site)


def test_a_read_of_many_elements_as_a_scalar_copies_nothing(device_space):
    a = xp.to_device(np.ones(3))
    with count_transfers() as counter:
        with pytest.raises(ValueError, match="only an array of one element"):
            bool(a > 0)
        with pytest.raises(TypeError, match="only an array of one element"):
            float(a)
    assert counter.total == counter.syncs == 0


def test_a_strided_result_is_a_counted_copy_on_the_device(device_space):
    a = xp.to_device(np.arange(6.0))
    with count_transfers() as counter:
        every_other = a[::2]
    assert (counter.device_copy, counter.to_host, counter.to_device) == (1, 0, 0)
    assert counter.events[0].what == "DeviceArray.__getitem__(shape=(3,), dtype=float64)"
    np.testing.assert_array_equal(xp.to_numpy(every_other), [0, 2, 4])


def test_arrays_of_another_device_space_are_refused(fake):
    a = xp.to_device(np.ones(3))
    _core.set_device_space("device")
    with pytest.raises(TypeError, match=r"cunumpy\.abs: an argument is a DeviceArray in FakeDevice.*to_device"):
        xp.abs(a)


def test_on_a_host_only_build_numpy_arrays_are_the_device_memory(host_only_kokkos):
    host = np.arange(3.0)
    with count_transfers() as counter:
        result = xp.abs(host - 1) + xp.to_device(host)
    assert isinstance(result, xp.DeviceArray) and result.space == "Host"
    np.testing.assert_array_equal(xp.to_numpy(result), [1, 1, 3])
    assert counter.total == 0


cuda_only = pytest.mark.skipif(
    not _core.device_space_name().startswith("Cuda"), reason="needs a CUDA build of Kokkos"
)


@cuda_only
def test_cupy_runs_on_the_stream_of_kokkos():
    cupy = pytest.importorskip("cupy")
    xp.set_backend("kokkos")
    with _operations._on_kokkos_stream(cupy):
        assert cupy.cuda.get_current_stream().ptr == _core.device_stream()
    a = xp.to_device(np.arange(4.0))
    assert isinstance(xp.abs(a), xp.DeviceArray)


@cuda_only
def test_without_cupy_a_cuda_build_says_to_install_it(monkeypatch):
    monkeypatch.setattr(_backend, "_cupy", False)
    monkeypatch.setattr(_backend, "cupy_error", ImportError("No module named 'cupy'"))
    xp.set_backend("kokkos")
    a = xp.to_device(np.ones(3))
    with count_transfers() as counter:
        with pytest.raises(RuntimeError, match=r"cunumpy\.abs: .*install CuPy \(pip install cupy-cuda13x\).*host_call"):
            xp.abs(a)
    assert counter.total == 0


@cuda_only
def test_a_function_cupy_lacks_is_refused_on_cuda_memory():
    pytest.importorskip("cupy")
    xp.set_backend("kokkos")
    a = xp.to_device(np.ones(3, dtype=np.int64))
    with pytest.raises(AttributeError, match=r"cunumpy\.busday_count: cupy has no busday_count.*host_call"):
        xp.busday_count(a, a)
