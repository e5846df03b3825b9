#!/usr/bin/env python3
"""Wall-clock ratio of the legacy example's time loop with and without the
cunumpy plugin: the goal is at most 1.01.

    python3 bench/plugin/plugin_overhead.py --build build [--steps 10000]
        [--probes 3] [--repeats 15] [--size 100000]

Runs alternate (without, with, without, ...) so that drifting machine load
hits both alike; the ratio is taken between the medians and between the
minima of the wall-clock times, and between the medians of the CPU times
(user + system) of the program, which other load on the machine disturbs
less. Results and their reading are in
docs/performance.md, section "Plugin".
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(command, environment):
    """(wall-clock, CPU) seconds of one run."""
    cpu = cpu_seconds()
    start = time.perf_counter()
    subprocess.run(command, env=environment, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, cpu_seconds() - cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--steps", type=int, default=10000)
    parser.add_argument("--size", type=int, default=100000)
    parser.add_argument("--probes", type=int, default=3,
                        help="single-value copies per time step")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--trace", action="store_true",
                        help="also write a Chrome trace")
    arguments = parser.parse_args()

    build = os.path.abspath(arguments.build)
    program = os.path.join(build, "examples/legacy_app/legacy_app")
    plugin = os.path.join(build, "src/plugin/libkp_cunumpy.so")
    command = [program, "--steps", str(arguments.steps), "--size",
               str(arguments.size), "--probes", str(arguments.probes)]
    base = {name: value for name, value in os.environ.items()
            if not name.startswith(("CUNUMPY_", "KOKKOS_TOOLS_LIBS",
                                     "KOKKOS_PROFILE_LIBRARY"))}
    with tempfile.TemporaryDirectory() as work:
        # Kokkos 4 reads the first, Kokkos 3 the second; equal, they agree.
        with_plugin = dict(base, **{
            "KOKKOS_TOOLS_LIBS": plugin, "KOKKOS_PROFILE_LIBRARY": plugin,
            "CUNUMPY_DEVICE_SPACES": "FakeDevice",
            "CUNUMPY_REPORT": os.path.join(work, "report.json")})
        if arguments.trace:
            with_plugin["CUNUMPY_TRACE"] = os.path.join(work, "trace.json")
        run(command, base)  # warm the file cache
        runs_without, runs_with = [], []
        for _ in range(arguments.repeats):
            runs_without.append(run(command, base))
            runs_with.append(run(command, with_plugin))
        report_size = os.path.getsize(with_plugin["CUNUMPY_REPORT"])
    without = [wall for wall, _ in runs_without]
    with_ = [wall for wall, _ in runs_with]
    cpu_without = statistics.median(cpu for _, cpu in runs_without)
    cpu_with = statistics.median(cpu for _, cpu in runs_with)
    median = statistics.median(with_) / statistics.median(without)
    minimum = min(with_) / min(without)
    print(f"{' '.join(command)}")
    print(f"  KOKKOS_TOOLS_LIBS={plugin}")
    print(f"  {arguments.steps} steps, {arguments.probes} probe copies per "
          f"step, {arguments.repeats} runs each, report {report_size} bytes")
    print(f"  without plugin: median {statistics.median(without):.4f} s, "
          f"min {min(without):.4f} s")
    print(f"  with plugin:    median {statistics.median(with_):.4f} s, "
          f"min {min(with_):.4f} s")
    print(f"  CPU time (median): without {cpu_without:.4f} s, with "
          f"{cpu_with:.4f} s")
    print(f"  ratio: {median:.4f} (wall-clock medians), {minimum:.4f} "
          f"(wall-clock minima), {cpu_with / cpu_without:.4f} (CPU medians)")
    print(f"  overhead per step: "
          f"{(statistics.median(with_) - statistics.median(without)) / arguments.steps * 1e6:.2f} us "
          f"(wall), {(cpu_with - cpu_without) / arguments.steps * 1e6:.2f} us "
          f"(CPU), fixed costs included")
    return 0


if __name__ == "__main__":
    sys.exit(main())
