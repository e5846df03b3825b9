"""A time loop with a transfer budget: the state stays on the
device, each step reads one 8-byte norm without waiting, output copies the
state every few steps, and the budget checks that nothing else moves.

    python examples/python/time_loop.py [--backend numpy|kokkos] [--fake-device] [--leak]

The kernels are the Kokkos code of kernels.cpp (module example_kernels),
called on DeviceArrays without a copy. --fake-device runs on cunumpy's fake
device (real, counted copies on a CPU-only machine); --leak adds the classic
bug, a copy of the whole state in every step, which the budget reports with
its line (exit status 1).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

import cunumpy as xp
import example_kernels as kernels


class Model:
    def __init__(self, n: int, leak: bool = False) -> None:
        cells = np.arange(n) - n / 2
        self.state = xp.to_cunumpy(np.exp(-((cells / 4.0) ** 2)))  # a pulse
        self.norm = xp.to_cunumpy(np.array(0.0))
        self.leak = leak

    def integrate(self, dt: float) -> xp.PendingHost:
        kernels.advance(self.state, dt)  # on the device
        kernels.max_norm(self.state, self.norm)
        if self.leak:
            xp.to_numpy(self.state)  # the transfer that sneaked into the loop
        return xp.to_host_async(self.norm)  # 8 bytes, the host does not wait


def save(model: Model, snapshots: list[Any]) -> None:
    snapshots.append(xp.to_numpy(model.state))


def main() -> None:
    first_paragraph = " ".join(__doc__.split("\n\n")[0].split())
    parser = argparse.ArgumentParser(description=first_paragraph)
    parser.add_argument("--backend", choices=("numpy", "kokkos"), default="kokkos")
    parser.add_argument("--fake-device", action="store_true",
                        help="run the kokkos backend on the fake device")
    parser.add_argument("--leak", action="store_true",
                        help="copy the whole state in every step")
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()
    if args.fake_device:
        xp.testing.enable_fake_device()
    else:
        xp.set_backend(args.backend)

    n_steps, output_every, dt = args.steps, 10, 0.2
    budget = xp.profiling.TransferBudget(started=False)
    model = Model(10000, leak=args.leak)  # setup: not counted
    model.integrate = budget.count("integrate")(model.integrate)  # type: ignore[method-assign]  # a decorator
    snapshots: list[Any] = []

    budget.start()
    for step in range(n_steps):
        pending = model.integrate(dt)
        if step % output_every == 0:
            with budget.phase("output"):  # or a context
                save(model, snapshots)
    budget.stop()

    n_out = len(snapshots)
    budget.require(
        "integrate",
        allow={"to_host": {"max_nbytes": 8, "blocking": False}},
        calls=n_steps,
    )
    budget.require(
        "output",
        allow={"to_host": {"max_count": n_out, "max_total_bytes": n_out * model.state.nbytes}},
    )
    print(f"backend {xp.get_backend()}: {n_steps} steps, final norm {pending.result():.4f}")
    print(budget.report(), end="")
    try:
        budget.check()
    except AssertionError:
        print("the budget is broken", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
