"""cunumpy's Kokkos Tools plugin, shipped with the package: a program
built with any Kokkos loads it without recompiling, and in a Python
program that imports cunumpy it shares the module's recorder (one count of
each copy).

    export KOKKOS_TOOLS_LIBS=$(python -m cunumpy.plugin)   # Kokkos 3.7 on
    export KOKKOS_PROFILE_LIBRARY=$KOKKOS_TOOLS_LIBS        # before 3.7
"""

from __future__ import annotations

import importlib
import os
import sys

__all__ = ["path"]

_NAME = "libkp_cunumpy.so"


def path() -> str:
    """The plugin's file: beside the package (a pip install), else where
    the build or `cmake --install` put it. FileNotFoundError, naming where
    it looked, for a cunumpy built without it."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.path.join(here, _NAME)]
    try:
        # Written by the build or `cmake --install`; absent from a wheel.
        location = importlib.import_module("._plugin_location", __package__)
        candidates.append(os.path.normpath(os.path.join(here, str(location.path))))
    except ImportError:
        pass
    for candidate in candidates:
        if os.path.isfile(candidate):
            return candidate
    raise FileNotFoundError(
        "cunumpy.plugin: no Kokkos Tools plugin beside this cunumpy (looked at "
        + ", ".join(candidates)
        + "): it was built with CUNUMPY_BUILD_PLUGIN=OFF, or moved"
    )


def main() -> int:
    try:
        print(path())
    except FileNotFoundError as error:
        print(error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
