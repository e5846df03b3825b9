"""Every way device data reaches a host value, and host data reaches device
memory, on the "kokkos" backend: one test per row of the table in
docs/python.md ("Where host and device meet"). Each row is a counted copy
(at the caller's line, with the host's wait for a read) or a refusal that
copies nothing; a test fails if its way goes through uncounted."""

import contextlib
import copy
import io
import math
import operator
import pickle
import struct
import threading
import types
import warnings

import numpy as np
import pytest

import cunumpy as xp
from cunumpy import _boundary, _core, _operations
from helpers import next_site

count_transfers = xp.profiling.count_transfers
assert_no_transfers = xp.profiling.assert_no_transfers


def read_at(counter, api, site, dtype="float64", shape="()"):
    """The counter holds one read by the host: a to_host of `api` and the
    implicit wait, both at `site`."""
    copy_event, wait = counter.events
    assert (copy_event.kind, copy_event.what, copy_event.site) == (
        "to_host", f"{api}(shape={shape}, dtype={dtype})", site)
    assert (wait.kind, wait.what, wait.implicit, wait.site) == ("sync", f"{api}()", True, site)


@contextlib.contextmanager
def nothing_copied():
    """The block raises TypeError (or BufferError) and copies nothing."""
    with count_transfers() as counter:
        yield
    assert counter.total == counter.syncs == 0


# Device data to host values.


def test_the_explicit_conversions_are_counted(device_space):
    host = np.arange(4.0)
    with count_transfers() as counter:
        device = xp.to_cunumpy(host)
        back = xp.to_numpy(device)
        later = xp.to_host_async(device).result()
        mirrored = xp.host_call(np.cumsum, device)
    assert (counter.to_device, counter.to_host) == (2, 3)
    for result in (back, later):
        np.testing.assert_array_equal(result, host)
    assert isinstance(mirrored, xp.DeviceArray)


def test_python_number_protocols_are_counted_reads(device_space):
    """math.sqrt(a), '%f' % a, struct.pack, np.float64(a), if a < tol: each
    calls __float__/__int__/__bool__, a counted copy and wait."""
    a = xp.to_device(np.array(2.25))
    reads = [
        (lambda: math.sqrt(a), "float", 1.5),
        (lambda: "%.2f" % a, "float", "2.25"),
        (lambda: struct.unpack("d", struct.pack("d", a))[0], "float", 2.25),
        (lambda: float(np.float64(a)), "float", 2.25),
        (lambda: "small" if a < 3.0 else "large", "bool", "small"),
    ]
    for read, api, value in reads:
        with count_transfers() as counter:
            assert read() == value
        dtype = "bool" if api == "bool" else "float64"
        read_at(counter, api, f"{__file__}:{read.__code__.co_firstlineno}", dtype)


def test_format_with_a_spec_is_a_counted_read(device_space):
    total = xp.to_device(np.arange(4.0)).sum()
    with count_transfers() as counter:
        site = next_site()
        text = f"{total:.3f}"
    assert text == "6.000"
    read_at(counter, "format", site)
    a = xp.to_device(np.arange(4.0))
    with count_transfers() as counter:
        assert f"{a}" == str(a) == repr(a)  # no spec: the shape, no data
        with pytest.raises(TypeError, match=r"format\(\) of a DeviceArray of shape \(4,\).*to_numpy"):
            f"{a:.3f}"
    assert counter.total == counter.syncs == 0


def test_membership_is_one_counted_read(device_space):
    a = xp.to_device(np.arange(5.0))
    with count_transfers() as counter:
        site = next_site()
        found = 3.0 in a
    assert found is True
    read_at(counter, "bool", site, "bool")


def test_functions_answering_with_python_values_return_device_arrays(device_space):
    """xp.allclose, array_equal, array_equiv, count_nonzero: a 0-d
    DeviceArray, as CuPy returns; the test of a converging loop is counted."""
    x = xp.to_device(np.ones(4))
    x_old = xp.to_device(np.ones(4))
    for result in (
        xp.allclose(x, x_old), xp.array_equal(x, x_old), xp.array_equiv(x, x_old),
        xp.count_nonzero(x), xp.linalg.matrix_rank(x),
    ):
        assert isinstance(result, xp.DeviceArray) and result.shape == ()
    with count_transfers() as counter:
        site = next_site()
        if xp.allclose(x, x_old):
            converged = True
    assert converged
    read_at(counter, "bool", site, "bool")
    with pytest.raises(AssertionError, match="bool"):
        with assert_no_transfers():
            while not xp.allclose(x, x_old):
                pass


def test_no_numpy_function_hands_device_data_back_as_a_python_value(device_space):
    """Every function of NumPy's namespaces, called with device arrays:
    none returns a Python bool, int, float, complex or str, except the
    functions that describe shapes and dtypes (METADATA_FUNCTIONS)."""
    vector = xp.to_device(np.array([1.0, 2.0, 3.0]))
    arguments = [
        (vector,), (xp.to_device(np.eye(2)),), (xp.to_device(np.array(2.0)),),
        (xp.to_device(np.arange(3)),), (vector, vector),
    ]
    side_effects = ("set", "show", "test", "info", "seterr", "get_printoptions")
    found = {}
    for prefix, module in (("", np), ("linalg.", np.linalg), ("fft.", np.fft)):
        for name in dir(module):
            function = getattr(module, name)
            if (name.startswith(("_", *side_effects)) or isinstance(function, type)
                    or isinstance(function, types.ModuleType) or not callable(function)):
                continue
            forwarded = _operations.function(prefix + name)
            for args in arguments:
                with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                    warnings.simplefilter("ignore")
                    try:
                        result = forwarded(*args)
                    except Exception:
                        continue
                if _boundary.holds_host_value(result):
                    found.setdefault(prefix + name, type(result).__name__)
    assert set(found) <= _boundary.METADATA_FUNCTIONS, found
    assert {"ndim", "shape", "size"} <= set(found)  # the scan reached them


def test_text_written_from_device_data_is_refused(device_space):
    a = xp.to_device(np.array(0.5))
    n = xp.to_device(np.array(5))
    with nothing_copied():
        for function in (xp.format_float_positional, xp.format_float_scientific, xp.array2string):
            with pytest.raises(TypeError, match="on the host.*host_call"):
                function(a)
        with pytest.raises(TypeError, match=r"cunumpy\.base_repr: the result is a str .*host_call"):
            xp.base_repr(n)


def test_files_are_read_and_written_only_on_the_host(device_space, tmp_path):
    a = xp.to_device(np.arange(3.0))
    path = tmp_path / "a.npy"
    np.save(path, np.arange(3.0))
    text = tmp_path / "a.txt"
    with nothing_copied():
        for use in (lambda: xp.save(tmp_path / "b.npy", a), lambda: xp.savetxt(text, a),
                    lambda: xp.load(path), lambda: xp.loadtxt(path), lambda: xp.fromfile(path),
                    lambda: xp.genfromtxt(path)):
            with pytest.raises(TypeError, match="on the host.*host_call"):
                use()
    assert not (tmp_path / "b.npy").exists() and not text.exists()


def test_shapes_and_types_are_read_without_a_copy(device_space):
    a = xp.to_device(np.zeros((3, 2)))
    with count_transfers() as counter:
        values = (
            a.shape, len(a), a.ndim, a.size, a.nbytes, a.dtype, a.strides,
            xp.shape(a), xp.ndim(a), xp.size(a), xp.iscomplexobj(a), xp.isscalar(a),
        )
        text = (repr(a), str(a), f"{a}")
    assert values == ((3, 2), 3, 2, 6, 48, np.float64, (16, 8), (3, 2), 2, 6, False, False)
    assert all(type(value) is not xp.DeviceArray for value in values)
    assert "shape=(3, 2)" in text[0] and text[0] == text[1] == text[2]
    assert counter.total == counter.syncs == 0
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d DeviceArray"):
        len(a[0, 0])


def test_reductions_and_comparisons_stay_on_the_device(device_space):
    a = xp.to_device(np.arange(6.0))
    with count_transfers() as counter:
        results = [a.sum(), xp.max(a), a.mean(), a == a, a < 3.0, xp.any(a > 4), divmod(a, 2)[0]]
    assert all(isinstance(result, xp.DeviceArray) for result in results)
    assert counter.total == counter.syncs == 0


def test_iteration_gives_device_arrays(device_space):
    a = xp.to_device(np.arange(6.0).reshape(3, 2))
    with count_transfers() as counter:
        rows = list(a)
        total = sum(a)  # 0 + a[0] + a[1] + a[2], on the device
    assert [row.shape for row in rows] == [(2,)] * 3
    assert all(isinstance(row, xp.DeviceArray) for row in rows)
    assert counter.total == counter.syncs == 0
    np.testing.assert_array_equal(xp.to_numpy(total), [6, 9])
    with pytest.raises(TypeError, match="iteration over a 0-d DeviceArray"):
        iter(a[0, 0])


def test_the_index_protocol_is_refused(device_space):
    n = xp.to_device(np.array(3))
    elements = xp.to_device(np.arange(3))
    with nothing_copied():
        for use in (operator.index, range, hex, lambda n: [1, 2, 3, 4][n], lambda n: "ab"[:n]):
            with pytest.raises(TypeError, match=r"index\(cunumpy\.DeviceArray\).*to_numpy\(a\)"):
                use(n)
        with pytest.raises(TypeError, match=r"index\(cunumpy\.DeviceArray\)"):
            bytes(elements)  # each element's __index__
        with pytest.raises(TypeError, match=r"__rmul__: an argument is a list"):
            [0] * n


def test_device_arrays_where_numpy_reads_host_numbers_are_refused(device_space):
    """A shape, an axis, a count, a slice bound: NumPy would read the value
    on the host (CuPy refuses most of them)."""
    a = xp.to_device(np.arange(6.0))
    n = xp.to_device(np.array(2))
    uses = [
        (lambda: xp.zeros(n), "zeros: argument 'shape'"),
        (lambda: xp.zeros((n, 3)), "zeros: argument 'shape'"),
        (lambda: xp.arange(n), "arange: argument 'start"),
        (lambda: xp.arange(0, n), "arange: argument 'stop'"),
        (lambda: xp.linspace(0, 1, n), "linspace: argument 'num'"),
        (lambda: a.reshape(n, -1), "reshape: argument 'shape'"),
        (lambda: a.sum(axis=n), "sum: argument 'axis'"),
        (lambda: a[:n], "__getitem__: a slice bound is a DeviceArray"),
    ]
    if int(np.__version__.split(".")[0]) >= 2:  # NumPy 1.x: numpy.random has no signatures
        uses.append((lambda: xp.random.seed(n), "seed: argument 'seed'"))
    with nothing_copied():
        for use, message in uses:
            with pytest.raises(TypeError, match=message):
                use()


def test_numpy_reads_a_device_array_only_through_its_methods(device_space):
    a = xp.to_device(np.arange(4.0))
    with nothing_copied():
        for convert in (np.asarray, np.array, lambda a: np.array([a]),
                        lambda a: np.asarray(a, dtype=object), lambda a: np.allclose(a, a)):
            with pytest.raises(TypeError, match=r"cunumpy\.to_numpy\(a\)"):
                convert(a)
        with pytest.raises(TypeError, match="does not support ufuncs"):
            np.sqrt(a)
        with pytest.raises(TypeError, match="bytes-like object is required"):
            memoryview(a)
        total = np.sum(a)  # NumPy calls a.sum(): on the device
    assert isinstance(total, xp.DeviceArray)


def test_dlpack_gives_numpy_no_fake_device_memory(fake):
    a = xp.to_device(np.arange(4.0))
    with nothing_copied():
        with pytest.raises((BufferError, RuntimeError)):
            np.from_dlpack(a)
    assert a.__dlpack_device__() == (12, 0)  # for Kokkos code, on the device


def test_pickle_and_copy_are_refused(device_space):
    a = xp.to_device(np.arange(4.0))
    with nothing_copied():
        for use in (pickle.dumps, copy.copy, copy.deepcopy):
            with pytest.raises(TypeError, match=r"cunumpy\.to_numpy\(a\)"):
                use(a)


def test_python_functions_called_back_get_device_arrays(device_space):
    a = xp.to_device(np.arange(6.0).reshape(2, 3))
    seen = []

    def row_sum(row):
        seen.append(type(row))
        return row.sum()

    with count_transfers() as counter:
        sums = xp.apply_along_axis(row_sum, 1, a)
        grid = xp.fromfunction(lambda i, j: seen.append(type(i)) or i + j, (2, 2))
        signs = xp.piecewise(a, [a < 2, a >= 2], [lambda x: seen.append(type(x)) or -x, 1.0])
    assert set(seen) == {xp.DeviceArray}
    assert all(isinstance(r, xp.DeviceArray) for r in (sums, grid, signs))
    assert counter.total == counter.syncs == 0
    with count_transfers() as counter:
        site = next_site()
        xp.apply_along_axis(lambda row: float(row[0]), 1, a)
    assert counter.to_host == 2 and all(e.site == site for e in counter.events)


def test_a_read_on_another_thread_is_counted(device_space):
    x = xp.to_device(np.ones(3))
    answers = []
    with count_transfers() as counter:
        worker = threading.Thread(target=lambda: answers.append(bool(xp.allclose(x, x))))
        worker.start()
        worker.join()
    assert answers == [True]
    assert (counter.to_host, counter.syncs) == (1, 1)


# Host data to device memory.


def test_arrays_of_another_memory_are_refused(fake):
    a = xp.to_device(np.ones(3))
    _core.set_device_space("device")  # the build's own device space
    with nothing_copied():
        for use in (lambda: xp.abs(a), lambda: xp.asarray(a), lambda: xp.zeros(3) + a):
            with pytest.raises(TypeError, match=r"DeviceArray in FakeDevice.*to_device"):
                use()


@pytest.mark.parametrize(
    "make, what",
    [
        (lambda: xp.asarray([1.0, 2.0]), "asarray(shape=(2,), dtype=float64)"),
        (lambda: xp.array([[1, 2], [3, 4]]), "array(shape=(2, 2), dtype=int64)"),
        (lambda: xp.asarray((1, 2, 3), dtype=np.float32), "asarray(shape=(3,), dtype=float32)"),
        (lambda: xp.asarray(np.ones(2)), "asarray(shape=(2,), dtype=float64)"),
        (lambda: xp.asarray(0.5), "asarray(shape=(), dtype=float64)"),
        (lambda: xp.ascontiguousarray(range(3)), "ascontiguousarray(shape=(3,), dtype=int64)"),
        (lambda: xp.frombuffer(bytes(16)), "frombuffer(shape=(2,), dtype=float64)"),
    ],
    ids=["asarray(list)", "array(nested)", "asarray(tuple)", "asarray(numpy)",
         "asarray(scalar)", "ascontiguousarray(range)", "frombuffer"],
)
def test_creation_from_host_data_is_a_counted_copy(device_space, make, what):
    with count_transfers() as counter:
        result = make()
    assert isinstance(result, xp.DeviceArray) and result.space == device_space
    (event,) = counter.events
    site = f"{__file__}:{make.__code__.co_firstlineno}"
    assert (event.kind, event.what, event.site) == ("to_device", what, site)


def test_creation_from_device_data_stays_on_the_device(device_space):
    a = xp.to_device(np.arange(3.0))
    with count_transfers() as counter:
        results = [xp.asarray(a, dtype=np.float32), xp.array([a, a]), xp.copy(a)]
    assert all(isinstance(result, xp.DeviceArray) for result in results)
    assert (counter.to_device, counter.to_host) == (0, 0)
    with nothing_copied():
        with pytest.raises(ValueError, match="copy=False"):
            xp.asarray([1.0], copy=False)
        with pytest.raises(TypeError, match="a list of host numbers"):
            xp.array([a, 1.0])  # device and host data in one array
        with pytest.raises(TypeError, match="unsupported dtype"):
            xp.asarray(["text"])  # refused before the copy


@pytest.mark.parametrize(
    "host",
    [[1.0, 2.0, 3.0], (1, 2, 3), [[1.0], [2.0], [3.0]], np.ones(3), range(3), bytearray(3),
     (np.float64(1.0),) * 3],
    ids=["list", "int tuple", "nested list", "numpy", "range", "bytearray", "numpy scalars"],
)
def test_host_data_as_an_argument_is_refused(device_space, host):
    a = xp.to_device(np.arange(3.0))
    uses = [
        lambda: xp.add(a, host),
        lambda: xp.take(a, host),
        lambda: xp.percentile(a, host),
        lambda: xp.where(a > 1, host, a),
        lambda: a.take(host),
        lambda: a.dot(host),
    ]
    with nothing_copied():
        for use in uses:
            with pytest.raises(TypeError, match=r"is a .*\(host memory\).*to_cunumpy\(\)"):
                use()


@pytest.mark.parametrize(
    "host", [[1.0, 2.0, 3.0], (1, 2, 3), np.ones(3), range(3)], ids=["list", "tuple", "numpy", "range"]
)
def test_host_data_as_an_operand_is_refused(device_space, host):
    a = xp.to_device(np.arange(3.0))
    operators = [operator.add, operator.mul, operator.lt, operator.eq, operator.iadd, operator.matmul]
    with nothing_copied():
        for apply in operators:
            with pytest.raises(TypeError, match=r"DeviceArray\.__\w+__: an argument is a .*to_cunumpy"):
                apply(a, host)
            if not isinstance(host, np.ndarray) and apply is not operator.iadd:
                with pytest.raises(TypeError, match=r"DeviceArray\.__\w+__: an argument is a"):
                    apply(host, a)  # the reflected operator
    np.testing.assert_array_equal(xp.to_numpy(a), [0, 1, 2])


def test_host_data_assigned_into_a_device_array_is_refused(device_space):
    a = xp.to_device(np.zeros(3))
    with nothing_copied():
        for value in ([1.0, 2.0, 3.0], (1, 2, 3), np.ones(3), [[1.0]]):
            with pytest.raises(TypeError, match=r"__setitem__: an argument is a .*to_cunumpy"):
                a[:] = value
    two = xp.to_device(np.array(2.0))
    with count_transfers() as counter:
        a[1:] = 5.0  # a scalar is the kernel's argument, as in CuPy
        a[0] = two  # device data
    assert counter.to_device == counter.to_host == 0
    np.testing.assert_array_equal(xp.to_numpy(a), [2, 5, 5])


def test_host_data_in_an_index_is_refused(device_space):
    a = xp.to_device(np.arange(6.0).reshape(2, 3))
    with nothing_copied():
        for key in ([0, 1], (0, [1, 2]), np.array([0]), [True, False], ((0, 1), 2)):
            with pytest.raises(TypeError, match=r"__getitem__: an argument is a"):
                a[key]
            with pytest.raises(TypeError, match=r"__setitem__: an argument is a"):
                a[key] = 1.0
    rows = xp.to_device(np.array([1, 0]))
    with count_transfers() as counter:
        picked = [a[1], a[1, 2], a[0, 1:], a[None], a[..., 0], a[rows], a[a > 2], a[np.int64(1)]]
    assert all(isinstance(result, xp.DeviceArray) for result in picked)
    assert counter.to_device == counter.to_host == 0


def test_python_scalars_are_kernel_arguments(device_space):
    a = xp.to_device(np.arange(3.0))
    with count_transfers() as counter:
        results = [a + 1.0, 2 * a, a ** np.float32(2), xp.full((2,), 7.0), xp.clip(a, 0, 1),
                   xp.where(a > 1, a, 0.0), a > True]
    assert all(isinstance(result, xp.DeviceArray) for result in results)
    assert counter.total == counter.syncs == 0


def test_shapes_and_axes_are_host_numbers(device_space):
    a = xp.to_device(np.arange(6.0))
    with count_transfers() as counter:
        results = [
            xp.zeros((2, 3)), xp.zeros([2, 3]), a.reshape((2, 3)), a.reshape([3, 2]),
            a.reshape(2, 3).sum(axis=(0, 1)), a.reshape(2, 3).transpose([1, 0]),
            xp.split(a, [2, 4])[0], xp.pad(a, ((1, 1),)), xp.tile(a, (2,)),
            xp.histogram(a, bins=3, range=(0, 6))[0], xp.moveaxis(a.reshape(2, 3), [0], [1]),
        ]
    assert all(isinstance(result, xp.DeviceArray) for result in results)
    assert counter.total == counter.syncs == 0
