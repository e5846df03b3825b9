"""Kokkos is initialized by the import and finalized at interpreter exit,
after the device arrays Python still holds have released their views."""

import os
import subprocess
import sys
import textwrap

import cunumpy as xp

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_python(code):
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
    )


def test_import_initializes_kokkos():
    assert xp._core.owns_kokkos
    assert xp._core.kokkos_version.count(".") == 2


MAKE_ARRAYS = """
import numpy as np
import cunumpy as xp
kept = xp.DeviceArray((1000,))  # a Kokkos view in the device space
cycle = [xp.DeviceArray((10,), np.int32)]
cycle.append(cycle)
if xp.testing.has_fake_device:
    with xp.testing.use_fake_device():
        on_fake = xp.to_device(np.ones(100))
        mirror = xp.DeviceMirror(np.ones(5))
"""


def test_exit_with_live_device_arrays_is_clean():
    result = run_python(MAKE_ARRAYS + 'print("live", xp._core.live_device_arrays() > 0)')
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "live True"
    # Without the paths of this checkout and the interpreter, which may hold
    # any word.
    stderr = result.stderr
    for path in sorted({REPOSITORY, sys.prefix, sys.executable}, key=len, reverse=True):
        stderr = stderr.replace(path, "<path>")
    assert "error" not in stderr.lower(), result.stderr
    assert "Traceback" not in stderr


def test_arrays_are_released_before_kokkos_finalize():
    result = run_python(
        MAKE_ARRAYS
        + """
xp._core.finalize()
print("live", xp._core.live_device_arrays())
try:
    kept.copy()
except RuntimeError as error:
    print("RuntimeError", "finalized" in str(error))
"""
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["live 0", "RuntimeError True"]
