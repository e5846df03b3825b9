"""Drives Kokkos from Python through the project's test extension, as a
Python application built on Kokkos does: the plugin's report names the
lines of this file."""

import cunumpy_python_workload as kokkos


def step():
    kokkos.region("step")
    kokkos.copy_to_device(8)  # line 10: the copy in the step
    kokkos.end_region()


def main():
    kokkos.initialize()
    for _ in range(3):
        step()
    kokkos.copy_to_host(64)  # line 18: outside every region
    kokkos.copy_without_the_gil(16)
    kokkos.finalize()


main()
