#!/usr/bin/env python3
"""Fixed cost per process of the plugin: the CPU time (perf stat's
task-clock, which a loaded machine moves far less than wall time) of
`legacy_app --steps 1`, with no tool, the tests' minimal tool (the floor),
the plugin (its call sites read from debug information at every run),
without call sites, and each Kokkos tool given as NAME=PATH; the
configurations interleaved, medians over the rounds.

    python3 bench/plugin/fixed_cost.py [--build build] [--rounds 25]
        [--peer space-time-stack=/tmp/kt/libkp_space_time_stack.so]

Needs `perf` (Debian: linux-perf).
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--peer", action="append", default=[],
                        metavar="NAME=PATH")
    arguments = parser.parse_args()
    if shutil.which("perf") is None:
        sys.exit("fixed_cost.py: needs perf (apt-get install linux-perf)")
    build = os.path.abspath(arguments.build)
    plugin = os.path.join(build, "src/plugin/libkp_cunumpy.so")
    floor = os.path.join(build, "tests/libkp_test_tool.so")
    program = [os.path.join(build, "examples/legacy_app/legacy_app"),
               "--steps", "1", "--size", "64", "--probes", "3"]
    base = {name: value for name, value in os.environ.items()
            if not name.startswith(("KOKKOS_TOOLS_LIBS",
                                     "KOKKOS_PROFILE_LIBRARY", "CUNUMPY_"))}

    def tool(path):
        return {"KOKKOS_TOOLS_LIBS": path, "KOKKOS_PROFILE_LIBRARY": path}

    with tempfile.TemporaryDirectory() as work:
        with_plugin = dict(tool(plugin), CUNUMPY_DEVICE_SPACES="FakeDevice",
                           CUNUMPY_REPORT=os.path.join(work, "report.json"))
        series = {
            "no tool": {},
            "floor": dict(tool(floor), KP_TEST_TOOL_NO_GLOBAL_FENCING="1",
                          KP_TEST_TOOL_OUTPUT=os.path.join(work, "c.txt")),
            "plugin": with_plugin,
            "plugin, no sites": dict(with_plugin, CUNUMPY_BACKTRACE="0"),
        }
        for peer in arguments.peer:
            name, _, path = peer.partition("=")
            if not name or not os.path.isfile(path):
                sys.exit(f"--peer: '{peer}' is not NAME=PATH of a file")
            series[name] = tool(os.path.abspath(path))
        # One run first, untimed: the page cache is warm.
        subprocess.run(program, env=dict(base, **series["plugin"]),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True)
        times = {name: [] for name in series}
        for _ in range(arguments.rounds):
            for name, variables in series.items():
                completed = subprocess.run(
                    ["perf", "stat", "-x,", "-e", "task-clock"] + program,
                    env=dict(base, **variables), stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE, text=True)
                lines = [line for line in completed.stderr.splitlines()
                         if "task-clock" in line]
                if completed.returncode != 0 or not lines:
                    sys.exit(f"{name}: the program failed\n{completed.stderr}")
                times[name].append(float(lines[-1].split(",")[0]))
    medians = {name: statistics.median(values)
               for name, values in times.items()}
    print(f"legacy_app --steps 1, CPU time (task-clock), medians of "
          f"{arguments.rounds} interleaved rounds")
    for name, value in medians.items():
        print(f"  {name:22s} {value:6.2f} ms, "
              f"{value - medians['no tool']:5.2f} ms above no tool")


if __name__ == "__main__":
    main()
