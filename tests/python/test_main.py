"""python3 -m cunumpy: the version, and where the CMake package of a pip
install is (python.pip_install builds the example kernels with it)."""

import os
import subprocess
import sys

import cunumpy as xp


def run(*arguments):
    return subprocess.run([sys.executable, "-m", "cunumpy", *arguments],
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ))


def test_version():
    done = run("--version")
    assert done.returncode == 0 and done.stdout == xp.__version__ + "\n", done


def test_cmake_dir_of_a_package_without_one_says_what_to_do():
    # The build tree's package, as a cmake --install one, holds no CMake
    # package: one line, a failure, never a directory that is not there.
    done = run("--cmake-dir")
    assert done.returncode == 1 and done.stdout == "", done
    assert done.stderr.count("\n") == 1, done.stderr
    assert "-DCMAKE_PREFIX_PATH=<prefix>" in done.stderr, done.stderr
