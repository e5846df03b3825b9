"""python3 -m cunumpy --cmake-dir: where the CMake package of this cunumpy
is, for Kokkos kernels built against it (docs/python.md):

    cmake -S examples/python -B build-kernels \\
      -Dcunumpy_DIR="$(python3 -m cunumpy --cmake-dir)"
"""

from __future__ import annotations

import argparse
import os
import sys


def cmake_dir() -> str | None:
    """The directory of cunumpyConfig.cmake in this package (pip install),
    or None when the package has none (cmake --install: the prefix's
    lib/cmake/cunumpy)."""
    directory = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             "share", "cmake", "cunumpy")
    return directory if os.path.isfile(os.path.join(directory, "cunumpyConfig.cmake")) else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m cunumpy",
                                     description="Facts of this cunumpy.")
    parser.add_argument("--cmake-dir", action="store_true",
                        help="print the directory of its cunumpyConfig.cmake")
    parser.add_argument("--version", action="store_true", help="print its version")
    arguments = parser.parse_args(argv)
    if arguments.version:
        from . import __version__

        print(__version__)
    if arguments.cmake_dir:
        directory = cmake_dir()
        if directory is None:
            print("cunumpy: this package holds no CMake package (it was not "
                  "installed by pip); with a C++ install, pass "
                  "-DCMAKE_PREFIX_PATH=<prefix> to CMake", file=sys.stderr)
            return 1
        print(directory)
    if not (arguments.version or arguments.cmake_dir):
        parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
