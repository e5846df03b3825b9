"""Typing and introspection: mypy --strict finds real types in cunumpy (its
stubs, py.typed and annotations), dir() lists the public API, help() shows
clean signatures, and errors name the public types."""

import ast
import copy
import inspect
import os
import pickle
import re
import subprocess
import sys

import numpy as np
import pytest

import cunumpy as xp
from cunumpy import _core

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
EXAMPLES = os.path.join(SOURCE, "examples", "python")
PACKAGE = os.path.dirname(os.path.abspath(xp.__file__))


def run_mypy(tmp_path, *arguments):
    """mypy --strict (the one of this interpreter: scripts/setup installs
    it) with the package under test and the examples' stubs on its path."""
    pytest.importorskip("mypy", reason="mypy is not installed (scripts/setup installs it)")
    environment = dict(os.environ, MYPYPATH=os.pathsep.join([os.path.dirname(PACKAGE), EXAMPLES]))
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--hide-error-context",
         "--cache-dir", str(tmp_path / "mypy-cache"), *arguments],
        capture_output=True, text=True, env=environment, cwd=tmp_path, timeout=600,
    )


def test_mypy_strict_accepts_the_package_the_examples_and_a_user_script(tmp_path):
    assert os.path.exists(os.path.join(PACKAGE, "py.typed"))
    assert os.path.exists(os.path.join(PACKAGE, "_core.pyi"))
    result = run_mypy(
        tmp_path,
        PACKAGE,
        os.path.join(EXAMPLES, "spectrum.py"),
        os.path.join(EXAMPLES, "time_loop.py"),
        os.path.join(HERE, "typed", "user_script.py"),
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_finds_the_mistakes_through_the_types(tmp_path):
    misuse = os.path.join(HERE, "typed", "misuse.py")
    with open(misuse) as file:
        expected = {
            (number, match.group(1))
            for number, line in enumerate(file, start=1)
            if (match := re.search(r"# error: ([a-z-]+)$", line))
        }
    result = run_mypy(tmp_path, misuse)
    found = {
        (int(match.group(1)), match.group(2))
        for match in re.finditer(r"misuse\.py:(\d+): error: .*\[([a-z-]+)\]$", result.stdout, re.M)
    }
    assert len(expected) == 8
    assert found == expected, result.stdout


def test_the_user_script_runs(tmp_path):
    # The numpy backend on a CPU: no device, a pass that checks nothing
    # allowed as such.
    environment = dict(os.environ, PYTHONPATH=os.path.dirname(PACKAGE),
                       CUNUMPY_ALLOW_NO_DEVICE="1")
    result = subprocess.run(
        [sys.executable, os.path.join(HERE, "typed", "user_script.py")],
        capture_output=True, text=True, cwd=tmp_path, env=environment, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "cupy" in result.stdout


def stub_names():
    """The names the stub of _core declares: module level and per class."""
    with open(os.path.join(PACKAGE, "_core.pyi")) as file:
        tree = ast.parse(file.read())
    module, classes = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            module.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            module.add(node.target.id)
        if isinstance(node, ast.ClassDef):
            classes[node.name] = {
                item.name if isinstance(item, ast.FunctionDef) else item.target.id
                for item in node.body
                if isinstance(item, (ast.FunctionDef, ast.AnnAssign))
            }
    return module, classes


def test_the_stub_of_core_declares_what_core_has():
    module, classes = stub_names()
    runtime = {name for name in dir(_core) if not name.startswith("__")}
    assert module - {"_Shape", "_Buffer", "__version__"} == runtime
    for name, members in classes.items():
        declared = {
            member for member in vars(getattr(_core, name))
            if not member.startswith(("__", "_pybind11"))
        } - {"async"}  # a keyword: stubs declare async_, its other name
        assert {m for m in members if not m.startswith("__")} == declared, name


def test_dir_lists_the_public_api_only():
    assert dir(xp) == sorted([*xp.__all__, "__version__"])
    assert dir(xp.profiling) == sorted(xp.profiling.__all__)
    for module in (xp, xp.profiling, xp.memory, xp.cuda):
        assert not [name for name in dir(module) if name.startswith("_") and name != "__version__"]
    for name in xp.__all__:
        assert getattr(xp, name) is not None
    assert "collections" not in dir(xp.profiling) and "numbers" not in dir(xp.profiling)


def test_help_shows_clean_signatures():
    assert str(inspect.signature(xp.profiling.count_transfers)) == (
        "(counter: 'TransferCounter | None' = None, *, advice: 'str | None' = None) "
        "-> 'CountTransfers'"
    )
    text = pydoc_text(xp.profiling.count_transfers)
    assert "counter: TransferCounter = None" not in text and "Overloaded" not in text
    assert "yields the TransferCounter" in text
    array_doc = xp.DeviceArray.__array__.__doc__
    assert "-> None" not in array_doc and "Always raises TypeError" in array_doc


def pydoc_text(thing):
    import pydoc

    return pydoc.render_doc(thing, renderer=pydoc.plaintext)


def test_types_and_errors_name_the_public_modules(device_space):
    device = xp.to_device(np.ones(3))
    assert repr(type(device)) == "<class 'cunumpy.DeviceArray'>"
    assert xp.profiling.TransferCounter.__module__ == "cunumpy.profiling"
    assert repr(xp.profiling.TransferBudget().phase("a")).startswith("<cunumpy.profiling.Phase")
    with pytest.raises(TypeError) as error:
        memoryview(device)
    assert "'cunumpy.DeviceArray'" in str(error.value)
    with pytest.raises(TypeError) as error:
        _core.to_host(np.ones(3), device, "api")  # an internal call, misused
    assert "cunumpy.DeviceArray" in str(error.value) and "_core" not in str(error.value)


def test_pickle_and_copy_say_what_to_do():
    xp.set_backend("kokkos")  # the fake device or this build's device space
    device = xp.to_device(np.ones(3))
    with pytest.raises(TypeError, match=r"cannot pickle a cunumpy.DeviceArray: .* pickle cunumpy.to_numpy\(a\)"):
        pickle.dumps(device)
    with pytest.raises(TypeError, match=r"copy.copy\(cunumpy.DeviceArray\): use a.copy\(\) .* cunumpy.to_numpy\(a\)"):
        copy.copy(device)
    with pytest.raises(TypeError, match=r"copy.deepcopy\(cunumpy.DeviceArray\): use a.copy\(\)"):
        copy.deepcopy([device])


def test_numpy_from_dlpack_of_the_fake_device_says_why_not_and_what_to_call(fake):
    device = xp.to_device(np.arange(3.0))
    with pytest.raises(BufferError, match=r"fake device .* not NumPy .* call cunumpy.to_numpy\(a\)"):
        np.from_dlpack(device)
    capsule = device.__dlpack__()  # Kokkos code built with <cunumpy/dlpack.hpp> still can
    assert type(capsule).__name__ == "PyCapsule"
    assert device.__dlpack__(dl_device=(12, 0)) is not None
