#!/usr/bin/env python3
"""Wall-clock ratio of the legacy example's time loop with and without the
cunumpy plugin: the goal is at most 1.01.

    python3 bench/plugin/plugin_overhead.py --build build [--steps 10000]
        [--probes 3] [--repeats 15] [--size 100000] [--trace]
        [--plugin-env CUNUMPY_BACKTRACE=0] [--no-empty-tool]

Runs alternate (without, with, without, ...) so that drifting machine load
hits both alike. The goal's ratio is that of the time loop, which the
program times itself (`legacy_app: time loop S s`): the medians and the
minima of those. The whole process is timed too (wall clock and CPU time,
user + system): the difference between the two is the plugin's fixed cost
per run (loading, symbolizing the call sites, writing the report), given
apart. A third series loads the tests' minimal Kokkos Tools library
(build/tests/libkp_test_tool.so, which only counts the callbacks): what
Kokkos itself spends calling any tool, the floor under the plugin's
ratio. Results and their reading are in docs/performance.md, section
"Plugin".
"""

import argparse
import os
import re
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
    """(time loop, process wall-clock, process CPU) seconds of one run."""
    cpu = cpu_seconds()
    start = time.perf_counter()
    finished = subprocess.run(command, env=environment, check=True,
                              stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    wall = time.perf_counter() - start
    loop = re.search(r"time loop ([0-9.]+) s", finished.stdout)
    if loop is None:
        sys.exit(f"no 'time loop' line in the output of {command[0]}")
    return float(loop.group(1)), wall, cpu_seconds() - cpu


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
    parser.add_argument("--no-empty-tool", action="store_true",
                        help="skip the series with the minimal tool")
    parser.add_argument("--plugin-env", action="append", default=[],
                        metavar="NAME=VALUE",
                        help="a variable for the runs with the plugin, such "
                             "as CUNUMPY_BACKTRACE=0 (repeatable)")
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
        for assignment in arguments.plugin_env:
            name, _, value = assignment.partition("=")
            with_plugin[name] = value
        empty_tool = os.path.join(build, "tests/libkp_test_tool.so")
        with_empty_tool = None
        if not arguments.no_empty_tool and os.path.exists(empty_tool):
            with_empty_tool = dict(base, **{
                "KOKKOS_TOOLS_LIBS": empty_tool,
                "KOKKOS_PROFILE_LIBRARY": empty_tool,
                "KP_TEST_TOOL_OUTPUT": os.path.join(work, "counts.txt")})
        run(command, base)  # warm the file cache
        runs_without, runs_with, runs_empty = [], [], []
        for _ in range(arguments.repeats):
            runs_without.append(run(command, base))
            runs_with.append(run(command, with_plugin))
            if with_empty_tool is not None:
                runs_empty.append(run(command, with_empty_tool))
        if not os.path.exists(with_plugin["CUNUMPY_REPORT"]):
            sys.exit("the runs with the plugin wrote no report: was "
                     f"{plugin} loaded? (its libraries found?)")
        report_size = os.path.getsize(with_plugin["CUNUMPY_REPORT"])
    def column(runs, index):
        return [run_times[index] for run_times in runs]

    loop_without, loop_with = column(runs_without, 0), column(runs_with, 0)
    wall_without, wall_with = column(runs_without, 1), column(runs_with, 1)
    cpu_without = statistics.median(column(runs_without, 2))
    cpu_with = statistics.median(column(runs_with, 2))
    median = statistics.median
    steps = arguments.steps
    print(f"{' '.join(command)}")
    print(f"  KOKKOS_TOOLS_LIBS={plugin} {' '.join(arguments.plugin_env)}")
    print(f"  {steps} steps, {arguments.probes} probe copies per "
          f"step, {arguments.repeats} runs each, report {report_size} bytes")
    print(f"  time loop without plugin: median {median(loop_without):.4f} s, "
          f"min {min(loop_without):.4f} s")
    print(f"  time loop with plugin:    median {median(loop_with):.4f} s, "
          f"min {min(loop_with):.4f} s")
    print(f"  time-loop ratio: {median(loop_with) / median(loop_without):.4f} "
          f"(medians), {min(loop_with) / min(loop_without):.4f} (minima); "
          f"{(median(loop_with) - median(loop_without)) / steps * 1e6:.2f} "
          f"us per step")
    print(f"  whole process: median {median(wall_without):.4f} s without, "
          f"{median(wall_with):.4f} s with, ratio "
          f"{median(wall_with) / median(wall_without):.4f}; CPU "
          f"{cpu_without:.4f} s without, {cpu_with:.4f} s with, ratio "
          f"{cpu_with / cpu_without:.4f}")
    fixed = ((median(wall_with) - median(loop_with)) -
             (median(wall_without) - median(loop_without)))
    print(f"  fixed cost per run (outside the loop): {fixed * 1e3:.1f} ms")
    if runs_empty:
        loop_empty = column(runs_empty, 0)
        print(f"  floor, the minimal tool: time-loop ratio "
              f"{median(loop_empty) / median(loop_without):.4f} (medians), "
              f"{min(loop_empty) / min(loop_without):.4f} (minima); "
              f"{(median(loop_empty) - median(loop_without)) / steps * 1e6:.2f}"
              f" us per step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
