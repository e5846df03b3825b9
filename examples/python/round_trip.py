# docs/python.md's advice example: a loop that converts its state to the
# device and back in every step, on the fake device.
import numpy as np

import cunumpy as xp

with xp.testing.use_fake_device():
    state = np.ones(100000)
    with xp.profiling.count_transfers(advice="on") as counter:
        for step in range(100):
            device = xp.to_cunumpy(state)  # up every step
            state = xp.to_numpy(device)  # and down again
    for finding in counter.advice():
        print(finding)
