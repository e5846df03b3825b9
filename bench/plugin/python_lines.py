#!/usr/bin/env python3
"""The cost of Python lines: a Python loop making N copies through the
tests' Kokkos extension (tests/plugin/python), under the plugin with call
sites (each copy's site with its Python line), without call sites
(CUNUMPY_BACKTRACE=0), and with no tool; interleaved runs, medians of the
CPU time per copy.

    python3 bench/plugin/python_lines.py [--build build] [--copies 100000]
        [--rounds 5]
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys

LOOP = """
import sys, time
import cunumpy_python_workload as kokkos
kokkos.initialize()
n = int(sys.argv[1])
kokkos.region("loop")
for _ in range(n):
    kokkos.copy_to_device(8)
kokkos.end_region()
kokkos.finalize()
"""


def cpu_seconds(command, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime -
                                                 before.ru_stime)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--copies", type=int, default=100000)
    parser.add_argument("--rounds", type=int, default=5)
    arguments = parser.parse_args()
    build = os.path.abspath(arguments.build)
    plugin = os.path.join(build, "src/plugin/libkp_cunumpy.so")
    base = {name: value for name, value in os.environ.items()
            if not name.startswith(("KOKKOS_TOOLS_LIBS",
                                    "KOKKOS_PROFILE_LIBRARY", "CUNUMPY_"))}
    base["PYTHONPATH"] = os.path.join(build, "tests/plugin/python")
    base["CUNUMPY_DEVICE_SPACES"] = "FakeDevice"
    tool = {"KOKKOS_TOOLS_LIBS": plugin, "KOKKOS_PROFILE_LIBRARY": plugin,
            "CUNUMPY_REPORT": os.devnull}
    settings = [("no tool", {}),
                ("plugin, no call sites", dict(tool, CUNUMPY_BACKTRACE="0")),
                ("plugin, call sites and Python lines", tool)]
    times = {name: [] for name, _ in settings}
    for _ in range(arguments.rounds):
        for name, extra in settings:
            times[name].append(cpu_seconds(
                [sys.executable, "-c", LOOP, str(arguments.copies)],
                dict(base, **extra)))
    floor = statistics.median(times["no tool"])
    print(f"{arguments.copies} copies from a Python loop, median CPU time "
          f"of {arguments.rounds} rounds")
    for name, _ in settings:
        median = statistics.median(times[name])
        print(f"  {name:<38} {median:7.3f} s  "
              f"{(median - floor) / arguments.copies * 1e9:7.0f} ns per copy "
              f"above no tool")
    return 0


if __name__ == "__main__":
    sys.exit(main())
