"""Smoke check of an installed cunumpy (pip_install.sh, or a `cmake
--install` prefix): the package and libcunumpy come from the installation,
not from a build tree, and a counted round trip works.

    python smoke_installed.py INSTALL_DIR
"""

import os
import sys

import numpy as np

import cunumpy as xp

installation = os.path.realpath(sys.argv[1])
package = os.path.realpath(os.path.dirname(xp.__file__))
assert package.startswith(installation), (package, installation)

loaded = set()
with open("/proc/self/maps") as maps:
    for line in maps:
        if "libcunumpy" in line or "_core." in line:
            loaded.add(os.path.realpath(line.split()[-1]))
assert loaded and all(path.startswith(installation) for path in loaded), loaded
# One version everywhere: the module's is the distribution's (when pip
# installed it), both read from CMakeLists.txt's project().
try:
    from importlib.metadata import PackageNotFoundError, version
    assert version("cunumpy") == xp.__version__, (version("cunumpy"), xp.__version__)
except PackageNotFoundError:
    pass  # a cmake --install prefix: no distribution metadata
# Typed (PEP 561): the marker and the stubs of the compiled core.
for typing_file in ("py.typed", "_core.pyi"):
    assert os.path.exists(os.path.join(package, typing_file)), typing_file

if xp.testing.has_fake_device:
    with xp.testing.use_fake_device():
        with xp.profiling.count_transfers() as counter:
            back = xp.to_numpy(xp.to_device(np.arange(5.0)))
    assert (counter.to_device, counter.to_host) == (1, 1), counter.report()
    np.testing.assert_array_equal(back, np.arange(5.0))
    print(counter.report(), end="")
print("installed cunumpy OK:", package)
print("loaded:", *sorted(loaded))
