"""The signal example: load or generate data, move it to the device once,
compute there, and bring back only what the host needs.

    python examples/python/spectrum.py [--backend numpy|kokkos|cupy] [--fake-device | --fake-cupy]

On "numpy" and "cupy" the computation is array code forwarded to the
backend's array module (xp.fft, xp.abs, xp.argmax). On "kokkos" it is the
Kokkos kernels of kernels.cpp (module example_kernels), called on
DeviceArrays without a copy. --fake-device runs "kokkos" on cunumpy's fake
device, so the copies are real and counted on a CPU-only machine;
--fake-cupy runs "cupy" on the fake CuPy of cunumpy.testing, where the
int() of the peak also shows as an implicit sync.
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np

import cunumpy as xp


def spectrum_on_array_backend(path: str, directory: str) -> int:
    signal = xp.to_cunumpy(np.load(path))  # one host-to-device copy
    spectrum = xp.abs(xp.fft.rfft(signal)) ** 2
    peak = int(xp.argmax(spectrum))  # one tiny device-to-host copy
    np.save(os.path.join(directory, "spectrum.npy"), xp.to_numpy(spectrum))  # one device-to-host copy
    return peak


def power_on_kokkos(path: str, directory: str) -> int:
    import example_kernels as kernels

    signal = xp.to_cunumpy(np.load(path))  # one host-to-device copy
    power = xp.DeviceArray(signal.shape, np.float64)  # device memory, no copy
    peak = xp.DeviceArray((), np.int64)
    kernels.power(signal, power)  # Kokkos kernels, on the device
    kernels.argmax(power, peak)
    index = int(xp.to_numpy(peak))  # one tiny device-to-host copy
    np.save(os.path.join(directory, "power.npy"), xp.to_numpy(power))  # one device-to-host copy
    return index


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=("numpy", "kokkos", "cupy"), default="kokkos")
    parser.add_argument("--fake-device", action="store_true",
                        help="run the kokkos backend on the fake device")
    parser.add_argument("--fake-cupy", action="store_true",
                        help="run the cupy backend on the fake CuPy")
    args = parser.parse_args()
    # Entered for the rest of the program (kept referenced: a collected
    # context manager would restore the backend).
    fake = None
    if args.fake_device:
        fake = xp.testing.use_fake_device()
    elif args.fake_cupy:
        fake = xp.testing.use_fake_cupy()
    if fake is not None:
        fake.__enter__()
    else:
        xp.set_backend(args.backend)

    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "signal.npy")
        t = np.arange(4096) / 4096.0
        np.save(path, np.sin(2 * np.pi * 50 * t))  # a 50 Hz tone

        with xp.profiling.count_transfers() as counter:
            if xp.get_backend() == "kokkos":
                peak = power_on_kokkos(path, directory)
                expected = int(np.argmax(np.load(path) ** 2))
            else:
                peak = spectrum_on_array_backend(path, directory)
                expected = 50  # the tone's frequency bin

    print(f"backend {xp.get_backend()}: peak at index {peak}")
    print(counter.report(), end="")
    assert peak == expected, (peak, expected)
    if args.fake_device or args.fake_cupy:
        assert (counter.to_device, counter.to_host) == (1, 2), counter.report()
    if args.fake_cupy:  # int() of a device scalar: the host waited
        assert [e.implicit for e in counter.events if e.kind == "sync"] == [True]


if __name__ == "__main__":
    main()
