"""A user script written against cunumpy's documented Python API; the typing
test runs mypy --strict on it. It runs too (on the fake CuPy)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

import cunumpy as xp
from cunumpy.profiling import TransferBudget, TransferCounter


class Model:
    @xp.setup_on_host
    def __init__(self, n: int) -> None:
        self.state = np.zeros(n)

    @xp.evaluate_on_host
    def pressure(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.sqrt(x)


def integrate(state: object, dt: float) -> None:
    del state, dt


def run(n_steps: int) -> tuple[int, float, str]:
    signal = xp.to_cunumpy(np.ones(16))
    host: NDArray[np.float64] = xp.to_numpy(signal)
    device = xp.to_cupy(host)
    degree = xp.as_device_array((3, 3, 3), np.int32, ndim=1, name="degree")

    with xp.profiling.count_transfers() as counter:
        integrate(device, 0.1)
    total: int = counter.total + counter.to_host + counter.to_device + counter.syncs
    moved: int = counter.bytes_to_host + counter.bytes_to_device + counter.bytes("device_copy")
    report: str = counter.report()
    for event in counter.events:
        where: str = f"{event.file}:{event.line} {event.kind} {event.nbytes} {event.blocking}"
        del where

    accumulated = TransferCounter()
    with xp.profiling.count_transfers(accumulated):
        pass
    with xp.profiling.assert_no_transfers():
        integrate(degree, 0.1)

    budget = TransferBudget(started=False)
    step = budget.count("integrate")(integrate)
    budget.start()
    for _ in range(n_steps):
        step(device, 0.1)
        with budget.phase("output") as output:
            xp.to_numpy(device)
            copies: int = output.to_host
            del copies
    budget.stop()
    budget.require("integrate", allow={"to_host": {"max_nbytes": 8, "blocking": False}}, calls=n_steps)
    budget.require("output", allow={"to_host": {"max_count": n_steps}}, ignore=("device_copy",))
    calls: int = budget.calls["integrate"]
    broken = [f"{v.phase}: {v.limit} {v.allowed} {v.actual}" for v in budget.violations()]
    budget.check()

    pending = xp.to_host_async(xp.to_cupy(np.array(0.5)))
    residual = float(pending.result()) if pending.ready() else 1.0

    staging = xp.memory.HostStaging()
    snapshot = staging.copy(device).result()
    mirror = xp.DeviceMirror(np.zeros(4))
    refreshed: NDArray[np.float64] = mirror.to_host()
    pinned = xp.cuda.pin_memory(np.ones(4))
    with xp.cuda.stream():
        uploaded = xp.to_cupy(pinned)
    xp.synchronize()
    values = xp.host_call(np.cumsum, device)
    pressure = Model(4).pressure(uploaded)
    del snapshot, refreshed, values, pressure, broken
    return total + moved + calls, residual, report + xp.get_backend()


def main() -> None:
    with xp.testing.use_fake_cupy():
        xp.set_backend("cupy")
        print(run(3))
    if xp.testing.has_fake_device:
        with xp.testing.use_fake_device():
            array: xp.DeviceArray = xp.DeviceArray((2, 3), np.float64, order="F")
            print(array.shape, array.dtype, array.space, array.flags.f_contiguous)


if __name__ == "__main__":
    main()
