"""Mistakes that cunumpy's types catch: the typing test expects mypy --strict
to report each line marked `# error:` with that code, and nothing else."""

import numpy as np

import cunumpy as xp

with xp.profiling.count_transfers() as counter:
    pass
text: str = counter.total  # error: assignment
xp.profiling.TransferBudget(started="no")  # error: arg-type
xp.profiling.TransferBudget().phase(3)  # error: arg-type
xp.profiling.record_marker("fallback", None)  # error: arg-type
xp.set_backend("torch")  # error: arg-type
pending = xp.to_host_async(np.ones(3))
pending.wait()  # error: attr-defined
xp.profiling.count_transfers().__enter__().report(1)  # error: call-arg
device: xp.DeviceArray = xp.DeviceArray(3)
device.nbytes.upper()  # error: attr-defined
