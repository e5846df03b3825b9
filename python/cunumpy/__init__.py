"""cunumpy: explicit, counted host/device copies for Python drivers around
Kokkos code.

    import cunumpy as xp

    xp.set_backend("kokkos")
    state = xp.to_cunumpy(np.load("state.npy"))  # one host-to-device copy
    with xp.profiling.count_transfers() as counter:
        step(state, dt)
    print(counter.report())

Every copy between host and device is a visible call (to_numpy, to_cupy,
to_cunumpy, to_device, as_device_array, ...), counted with the caller's file
and line by the same recorder as the C++ library, so copies made by C++ code
called from Python are counted too. Other attributes are forwarded to the
array module of the active backend (numpy or cupy): xp.asarray, xp.float64...
On "kokkos", functions run where the arrays' memory is (NumPy for host
memory and the fake device, CuPy for CUDA memory), on DeviceArrays, without
a copy.
"""


from typing import Any

try:
    from . import _core
except ImportError as error:
    # A CUDA build on a machine without the CUDA driver (a login or build
    # node): the module links libcuda. One line that says so.
    if "libcuda.so" not in str(error):
        raise
    raise ImportError(
        "cunumpy: this build's Kokkos has the CUDA backend, and no CUDA device "
        f"is usable here (no CUDA driver: {error})"
    ) from None

from . import cuda, memory, profiling, testing  # noqa: E402
from ._async import PendingHost, to_host_async  # noqa: E402
from ._backend import get_backend, set_backend  # noqa: E402
from ._conversions import (  # noqa: E402
    SUPPORTED_DTYPES,
    as_device_array,
    to_cunumpy,
    to_cupy,
    to_device,
    to_numpy,
)
from ._core import DeviceArray  # noqa: E402
from ._operations import forwarded_attribute, install  # noqa: E402
from ._host import (  # noqa: E402
    DeviceMirror,
    evaluate_on_host,
    host_call,
    setup_on_host,
    synchronize,
)

__version__: str = _core.__version__

install()  # DeviceArray's operators and methods

__all__ = [
    "DeviceArray",
    "DeviceMirror",
    "PendingHost",
    "SUPPORTED_DTYPES",
    "as_device_array",
    "cuda",
    "evaluate_on_host",
    "get_backend",
    "host_call",
    "memory",
    "profiling",
    "set_backend",
    "setup_on_host",
    "synchronize",
    "testing",
    "to_cunumpy",
    "to_cupy",
    "to_device",
    "to_host_async",
    "to_numpy",
]


def __dir__() -> list[str]:
    # The public API only, not the modules this one imports.
    return sorted([*__all__, "__version__"])


def __getattr__(name: str) -> Any:
    # Forwarded backend operations (xp.asarray, xp.fft, xp.float64...): the
    # numpy or cupy module of the active backend, whose copies are not
    # counted. On "kokkos", functions and namespaces (xp.fft) run on
    # DeviceArrays in the library of their memory (cunumpy/_operations.py);
    # types and constants are NumPy's.
    if name.startswith("__"):
        raise AttributeError(f"module 'cunumpy' has no attribute {name!r}")
    from ._backend import cupy_or_none, state

    import numpy

    backend = state.name
    module = (cupy_or_none() if backend == "cupy" else None) or numpy
    try:
        value = getattr(module, name)
    except AttributeError:
        raise AttributeError(
            f"module 'cunumpy' has no attribute {name!r} "
            f"(nor has {module.__name__})"
        ) from None
    if backend == "kokkos":
        return forwarded_attribute(name, value)
    return value
