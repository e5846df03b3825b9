"""cunumpy.testing.use_fake_cupy(): code written for the "cupy" backend runs
on a machine without CUDA, every conversion counts its copies as with CuPy,
and the scalar reads CuPy makes silently are recorded as a to_host and an
implicit sync."""

import copy
import operator
import pickle
import sys
import warnings

import numpy as np
import pytest

import cunumpy as xp
from helpers import next_site, report_lines

count_transfers = xp.profiling.count_transfers
use_fake_cupy = xp.testing.use_fake_cupy


@pytest.fixture
def signal_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    t = np.arange(4096) / 4096.0
    np.save("signal.npy", np.sin(2 * np.pi * 50 * t))  # a 50 Hz tone
    return tmp_path


def test_the_signal_example_runs_verbatim_with_the_counts_of_its_comments(signal_file):
    with use_fake_cupy(), count_transfers() as counter:
        # The example of "Transfer at boundaries, not in loops", verbatim.
        xp.set_backend("cupy")

        signal = xp.to_cunumpy(np.load("signal.npy"))  # one host-to-device copy
        spectrum = xp.abs(xp.fft.rfft(signal)) ** 2
        peak = int(xp.argmax(spectrum))  # one tiny device-to-host copy
        np.save("spectrum.npy", xp.to_numpy(spectrum))  # one device-to-host copy

    assert peak == 50
    assert type(signal).__module__ == "cupy" and type(spectrum).__name__ == "ndarray"
    np.testing.assert_allclose(
        np.load(signal_file / "spectrum.npy"),
        np.abs(np.fft.rfft(np.load(signal_file / "signal.npy"))) ** 2,
    )
    assert (counter.to_device, counter.to_host, counter.total) == (1, 2, 3)
    assert counter.device_copy == 0
    assert counter.bytes_to_device == 4096 * 8
    assert sorted(e.nbytes for e in counter.events if e.kind == "to_host") == [8, 2049 * 8]
    (sync,) = [e for e in counter.events if e.kind == "sync"]
    assert sync.implicit and counter.syncs == 1
    first = next(e.line for e in counter.events if e.kind == "to_device")
    assert report_lines(counter) == [
        "3 transfer(s) through cunumpy (2 to_host, 1 to_device, 0 kernel_conversion, 0 fallback, 0 device_copy)",
        "  to_host (2):",
        f"    {__file__}:{first + 2}: int(shape=(), dtype=int64) (x1)",
        f"    {__file__}:{first + 3}: to_numpy(shape=(2049,), dtype=float64) (x1)",
        "  to_device (1):",
        f"    {__file__}:{first}: to_cunumpy(shape=(4096,), dtype=float64) (x1)",
        "  sync (1):",
        f"    {__file__}:{first + 2}: int() (x1) [implicit]",
    ]


@pytest.mark.parametrize(
    "read, api, value",
    [
        (float, "float", 2.5),
        (int, "int", 2),
        (bool, "bool", True),
        (complex, "complex", 2.5 + 0j),
        (operator.methodcaller("item"), "item", 2.5),
        (operator.methodcaller("tolist"), "tolist", 2.5),
        (str, "str", "2.5"),
        (repr, "repr", "array(2.5)"),
        (format, "format", "2.5"),
    ],
    ids=["float", "int", "bool", "complex", "item", "tolist", "str", "repr", "format"],
)
def test_scalar_reads_record_a_to_host_and_an_implicit_sync(read, api, value):
    with use_fake_cupy():
        scalar = xp.to_cupy(np.array(2.5))
        with count_transfers() as counter:
            site = next_site()
            assert read(scalar) == value
    assert (counter.to_host, counter.total, counter.syncs) == (1, 1, 1)
    copy, sync = counter.events
    assert (copy.kind, copy.nbytes, copy.blocking, copy.site) == ("to_host", 8, True, site)
    assert (sync.kind, sync.implicit, sync.site) == ("sync", True, site)
    assert report_lines(counter)[-1] == f"    {site}: {api}() (x1) [implicit]"


def test_formatting_a_device_scalar_formats_as_numpy_after_a_copy_and_a_wait():
    with use_fake_cupy():
        residual = xp.to_cupy(np.array(2.5))
        with count_transfers() as counter:
            site = next_site()
            texts = [f"{residual}", f"{residual:.3e}", "{:>6.2f}".format(residual), "%s" % residual]
    assert texts == ["2.5", "2.500e+00", "  2.50", "2.5"]
    assert [(e.kind, e.what, e.nbytes, e.site) for e in counter.events if e.kind == "to_host"] == [
        ("to_host", f"{api}(shape=(), dtype=float64)", 8, site) for api in ("format",) * 3 + ("str",)
    ]
    assert [(e.implicit, e.site) for e in counter.events if e.kind == "sync"] == [(True, site)] * 4


def test_print_of_a_device_array_copies_it_all_and_waits(capsys):
    with use_fake_cupy():
        residual = xp.to_cupy(np.array([1.0, 2.0]))
        with count_transfers() as counter:
            site = next_site()
            print(residual, repr(residual), f"{residual}")  # repr, format, then print's str
    assert capsys.readouterr().out == "[1. 2.] array([1., 2.]) [1. 2.]\n"
    assert (counter.to_host, counter.bytes_to_host, counter.syncs) == (3, 3 * 16, 3)
    assert [(e.kind, e.what, e.site) for e in counter.events if e.kind == "to_host"] == [
        ("to_host", f"{api}(shape=(2,), dtype=float64)", site) for api in ("repr", "format", "str")
    ]
    assert all(e.implicit for e in counter.events if e.kind == "sync")


def test_format_spec_of_a_device_array_is_numpy_s_after_the_copy():
    with use_fake_cupy():
        vector = xp.to_cupy(np.array([1.0, 2.0]))
        with count_transfers() as counter:
            with pytest.raises(TypeError) as raised:
                f"{vector:.3e}"
    with pytest.raises(TypeError) as expected:
        format(np.array([1.0, 2.0]), ".3e")
    assert str(raised.value) == str(expected.value)
    assert (counter.to_host, counter.bytes_to_host, counter.syncs) == (1, 16, 1)


@pytest.mark.parametrize("read", [float, int, complex], ids=["float", "int", "complex"])
def test_scalar_conversion_of_a_vector_copies_it_then_fails_as_numpy(read):
    with use_fake_cupy():
        vector = xp.to_cupy(np.array([1.0, 2.0]))
        with count_transfers() as counter:
            with pytest.raises(TypeError) as raised:
                read(vector)
    with pytest.raises(TypeError) as expected:
        read(np.array([1.0, 2.0]))
    assert str(raised.value) == str(expected.value)
    assert (counter.to_host, counter.bytes_to_host, counter.syncs) == (1, 16, 1)


def test_bool_and_item_check_the_size_before_any_copy():
    with use_fake_cupy():
        vector = xp.to_cupy(np.array([1.0, 2.0]))
        empty = xp.to_cupy(np.zeros(0))
        with count_transfers() as counter:
            with pytest.raises(ValueError, match="more than one element is ambiguous"):
                bool(vector)
            with pytest.warns(DeprecationWarning, match="truth value of an empty array"):
                assert not empty
            with pytest.raises(ValueError, match="can only convert an array of size 1 to a Python scalar"):
                vector.item()
            with pytest.raises(ValueError, match="can only convert an array of size 1 to a Python scalar"):
                empty.item()
    assert counter.total == counter.syncs == 0


def test_device_scalars_are_no_index_as_with_cupy():
    with use_fake_cupy():
        count = xp.to_cupy(np.array(3))
        with count_transfers() as counter:
            with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
                range(count)
            with pytest.raises(TypeError):
                operator.index(count)
            with pytest.raises(TypeError):
                ["a", "b", "c", "d"][count]
            assert int(count) == 3  # the explicit way, a recorded read
    assert (counter.to_host, counter.syncs) == (1, 1)


def test_len_and_iteration_stay_on_the_device():
    with use_fake_cupy():
        import cupy

        matrix = xp.to_cupy(np.arange(6.0).reshape(3, 2))
        scalar = xp.to_cupy(np.array(1.0))
        with count_transfers() as counter:
            assert len(matrix) == 3
            rows = list(matrix)
            with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
                len(scalar)
            with pytest.raises(TypeError, match="iteration over a 0-d array"):
                iter(scalar)
    assert [type(row) for row in rows] == [cupy.ndarray] * 3
    assert [row.shape for row in rows] == [(2,)] * 3
    assert counter.total == counter.syncs == 0


@pytest.mark.parametrize(
    "read, api",
    [
        (bytes, "bytes"),
        (operator.methodcaller("tobytes"), "tobytes"),
        (pickle.dumps, "pickle"),
        (operator.methodcaller("dumps"), "pickle"),
    ],
    ids=["bytes", "tobytes", "pickle", "dumps"],
)
def test_bytes_and_pickle_copy_the_whole_array(read, api):
    with use_fake_cupy():
        import cupy

        matrix = xp.to_cupy(np.arange(6.0).reshape(2, 3))
        with count_transfers() as counter:
            site = next_site()
            data = read(matrix)
    if api in ("bytes", "tobytes"):
        assert data == np.arange(6.0).tobytes()
    else:
        restored = pickle.loads(data)
        assert isinstance(restored, cupy.ndarray)
        np.testing.assert_array_equal(restored.get(), np.arange(6.0).reshape(2, 3))
    copy_event, sync = counter.events
    assert (copy_event.kind, copy_event.what, copy_event.nbytes, copy_event.site) == (
        "to_host", f"{api}(shape=(2, 3), dtype=float64)", 48, site)
    assert (sync.kind, sync.implicit, sync.site) == ("sync", True, site)


def test_tofile_and_dump_copy_the_whole_array(tmp_path):
    with use_fake_cupy():
        import cupy

        matrix = xp.to_cupy(np.arange(6.0).reshape(2, 3))
        with count_transfers() as counter, open(tmp_path / "matrix.pickle", "wb") as file:
            matrix.tofile(tmp_path / "matrix.bin")
            matrix.dump(file)
    np.testing.assert_array_equal(np.fromfile(tmp_path / "matrix.bin"), np.arange(6.0))
    with open(tmp_path / "matrix.pickle", "rb") as file:
        assert isinstance(pickle.load(file), cupy.ndarray)
    assert [e.what for e in counter.events if e.kind == "to_host"] == [
        "tofile(shape=(2, 3), dtype=float64)", "pickle(shape=(2, 3), dtype=float64)"]
    assert (counter.bytes_to_host, counter.syncs) == (2 * 48, 2)


def test_copy_module_copies_on_the_device():
    with use_fake_cupy():
        vector = xp.to_cupy(np.array([1.0, 2.0]))
        with count_transfers() as counter:
            shallow = copy.copy(vector)
            deep = copy.deepcopy(vector)
        shallow[0] = 5.0
        deep[1] = 7.0
        assert vector.tolist() == [1.0, 2.0]
    assert counter.total == counter.syncs == 0


def test_implicit_false_with_device_copy_ignored_rejects_the_scalar_reads():
    budget = xp.profiling.TransferBudget()
    with use_fake_cupy():
        residual = xp.to_cupy(np.array(1e-3))
        with budget.phase("converge"):
            xp.synchronize()  # an explicit wait: allowed
        budget.require(
            "converge",
            allow={"to_host": {"max_nbytes": 8}, "sync": {"implicit": False}},
            ignore=("device_copy",),
        )
        assert budget.violations() == []
        with budget.phase("converge"):
            converged = residual < 1e-2  # on the device
            site = next_site()
            if converged:  # bool() of a 0-d array: the host waits for the device
                pass
    (violation,) = budget.violations()
    assert (violation.kind, violation.limit) == ("sync", "implicit")
    assert [e.site for e in violation.events] == [site]
    assert "[implicit]" in budget.report()
    with pytest.raises(AssertionError, match="sync must have implicit=false"):
        budget.check()


def test_every_conversion_counts_its_copies_as_with_cupy(tmp_path):
    host = np.arange(6.0).reshape(2, 3)
    with use_fake_cupy():
        import cupy

        with count_transfers() as counter:
            device = xp.to_cupy(host)
            assert isinstance(device, cupy.ndarray) and xp.to_cupy(device) is device
            assert xp.to_cunumpy(device) is device
            back = xp.to_numpy(device)
            assert xp.to_numpy(back) is back
            degree = xp.as_device_array((3, 3, 3), np.int32, ndim=1, name="degree")
            assert xp.as_device_array(degree, np.int32) is degree
            single = xp.as_device_array(device, np.float32)  # on the device
            mirror = xp.DeviceMirror(np.zeros(3))
            mirror.device[...] = degree
            assert mirror.to_host() is mirror.host
            mirror.to_device()
            pending = xp.to_host_async(device)
            snapshot = xp.memory.HostStaging().copy(device)
            pinned = xp.cuda.pin_memory(host)
            uploaded = xp.to_cupy(pinned)
    np.testing.assert_array_equal(back, host)
    np.testing.assert_array_equal(mirror.host, [3.0, 3.0, 3.0])
    assert single.dtype == np.float32 and isinstance(single, cupy.ndarray)
    assert pending.ready() and snapshot.ready()
    np.testing.assert_array_equal(pending.result(), host)
    np.testing.assert_array_equal(snapshot.result(), host)
    assert isinstance(uploaded, cupy.ndarray)
    kinds = [(e.kind, e.what.split("(")[0], e.async_) for e in counter.events]
    assert kinds == [
        ("to_device", "to_cupy", False),
        ("to_host", "to_numpy", False),
        ("to_device", "as_device_array", False),
        ("device_copy", "as_device_array", False),
        ("to_device", "DeviceMirror", False),
        ("to_host", "DeviceMirror.to_host", False),
        ("to_device", "DeviceMirror.to_device", False),
        ("to_host", "to_host_async", True),
        ("to_host", "HostStaging.copy", True),
        ("to_device", "to_cupy", False),
    ]
    assert counter.syncs == 0  # the fake copies at once: nothing to wait for


def test_host_data_is_refused_where_cupy_refuses_it():
    with use_fake_cupy():
        device = xp.to_cupy(np.ones(3))
        with count_transfers() as counter:
            with pytest.raises(TypeError, match=r"Implicit conversion to a NumPy array is not allowed"):
                np.asarray(device)
            with pytest.raises(TypeError, match="cunumpy.to_cupy"):
                device + np.ones(3)
            with pytest.raises(TypeError, match="cunumpy.to_cupy"):
                xp.add(device, np.ones(3))
            assert isinstance(np.add(device, 1.0), type(device))  # dispatched to the fake
        assert counter.total == counter.syncs == 0


def test_as_device_array_refuses_complex_to_real_on_the_device():
    with use_fake_cupy():
        device = xp.to_cupy(np.ones(2, np.complex128))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(TypeError, match="imaginary part would be lost"):
                xp.as_device_array(device, np.float64)


def test_use_fake_cupy_restores_the_backend_and_the_modules():
    before = {name: sys.modules.get(name) for name in ("cupy", "cupy.cuda", "cupy.fft")}
    with use_fake_cupy():
        assert xp.get_backend() == "cupy" and xp.cuda.is_available()
        import cupy

        assert cupy.cuda.runtime.getDeviceCount() == 1
        xp.set_backend("numpy")
        xp.set_backend("cupy")
    assert xp.get_backend() == "numpy"
    assert {name: sys.modules.get(name) for name in before} == before
    if before["cupy"] is None:
        with pytest.raises(ImportError, match="use_fake_cupy"):
            xp.set_backend("cupy")

