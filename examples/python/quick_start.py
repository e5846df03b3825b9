# README.md's Python example (--fake-device: real, counted copies on a CPU).
import sys

import cunumpy as xp
import example_kernels as kernels  # Kokkos kernels (kernels.cpp)
import numpy as np

xp.set_backend("kokkos")
if "--fake-device" in sys.argv:
    xp.testing.enable_fake_device()  # real, counted copies on a CPU

state = xp.to_cunumpy(np.zeros(10000))  # one copy to the device
try:
    with xp.profiling.assert_no_transfers():  # the time loop copies nothing...
        for step in range(100):
            kernels.advance(state, 0.1)  # on the device, no copy
            if step == 50:
                snapshot = xp.to_numpy(state)  # ...but this one does
except AssertionError as error:
    print("AssertionError:", error, end="")
