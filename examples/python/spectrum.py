"""The signal example: load or generate data, move it to the device once,
compute there, and bring back only what the host needs.

    python examples/python/spectrum.py [--backend numpy|kokkos|cupy] [--fake-device | --fake-cupy]

The computation is the same array code on every backend (xp.fft, xp.abs,
xp.argmax): NumPy's on "numpy", CuPy's on "cupy", and on "kokkos" the
library where the DeviceArrays' memory is (CuPy on CUDA, NumPy on the fake
device), without a copy. On "kokkos" it then calls the Kokkos kernels of
kernels.cpp (module example_kernels) on the DeviceArrays, also without a
copy. --fake-device runs "kokkos" on cunumpy's fake device, so the copies
are real and counted on a CPU-only machine; --fake-cupy runs "cupy" on the
fake CuPy of cunumpy.testing. The int() of the peak is a copy and an
implicit wait for the device, counted on both.
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


def power_with_kokkos_kernels(path: str) -> int:
    """The peak of the signal's power |x|**2, by Kokkos kernels called on
    DeviceArrays: how C++ code of your own takes part."""
    import example_kernels as kernels

    signal = xp.to_cunumpy(np.load(path))  # one host-to-device copy
    power = xp.DeviceArray(signal.shape, np.float64)  # device memory, no copy
    peak = xp.DeviceArray((), np.int64)
    kernels.power(signal, power)  # Kokkos kernels, on the device
    kernels.argmax(power, peak)
    return int(xp.to_numpy(peak))  # one tiny device-to-host copy


def main() -> None:
    first_paragraph = " ".join(__doc__.split("\n\n")[0].split())
    parser = argparse.ArgumentParser(description=first_paragraph)
    parser.add_argument("--backend", choices=("numpy", "kokkos", "cupy"), default="kokkos")
    parser.add_argument("--fake-device", action="store_true",
                        help="run the kokkos backend on the fake device")
    parser.add_argument("--fake-cupy", action="store_true",
                        help="run the cupy backend on the fake CuPy")
    args = parser.parse_args()
    if args.fake_device:
        xp.testing.enable_fake_device()  # for the rest of the program
    elif args.fake_cupy:
        # Entered for the rest of the program (kept referenced: a collected
        # context manager would restore the backend).
        fake_cupy = xp.testing.use_fake_cupy()
        fake_cupy.__enter__()
    else:
        xp.set_backend(args.backend)

    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "signal.npy")
        t = np.arange(4096) / 4096.0
        np.save(path, np.sin(2 * np.pi * 50 * t))  # a 50 Hz tone

        with xp.profiling.count_transfers() as counter:
            peak = spectrum_on_array_backend(path, directory)
        print(f"backend {xp.get_backend()}: peak at index {peak}")
        print(counter.report(), end="")
        assert peak == 50, peak  # the tone's frequency bin
        computed = np.load(os.path.join(directory, "spectrum.npy"))
        expected = np.abs(np.fft.rfft(np.load(path))) ** 2
        assert np.allclose(computed, expected, rtol=1e-12, atol=1e-6)
        if args.fake_device or args.fake_cupy:
            assert (counter.to_device, counter.to_host) == (1, 2), counter.report()
            # int() of a device scalar: the host waited
            assert [e.implicit for e in counter.events if e.kind == "sync"] == [True]

        if xp.get_backend() == "kokkos":
            index = power_with_kokkos_kernels(path)
            print(f"Kokkos kernels: peak of the power |x|**2 at sample {index}")
            assert index == int(np.argmax(np.load(path) ** 2))


if __name__ == "__main__":
    main()
