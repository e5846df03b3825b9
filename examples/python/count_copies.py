# docs/python.md's first example (--fake-device: real, counted copies on a CPU).
import sys

import numpy as np

import cunumpy as xp
import example_kernels as kernels  # Kokkos kernels (kernels.cpp)

xp.set_backend("kokkos")
if "--fake-device" in sys.argv:
    xp.testing.enable_fake_device()  # real, counted copies on a CPU

state = xp.to_cunumpy(np.zeros(100000))  # one copy to the device
with xp.profiling.count_transfers() as counter:
    for step in range(10):
        kernels.advance(state, 0.1)  # on the device, no copy
        diagnostics = xp.to_numpy(state)  # one copy back, every step
print(counter.report(), end="")
