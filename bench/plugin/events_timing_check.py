#!/usr/bin/env python3
"""Checks that legacy_app --alternate-tools times the kernel's begin and end
events in the step's "events" (plugin_overhead.py's column): the tests'
minimal tool, made to spin a known time in every kernel's end event
(KP_TEST_TOOL_SPIN_KERNEL_END_US), must show that time per step in the
events, on less paused; without the spin, it must not.

    python3 bench/plugin/events_timing_check.py --build build

Exits 0 when both hold, 77 (skipped) on a build that cannot time the
kernel's events apart from its body (legacy_app says so: CUDA, OpenMP),
1 with a line saying what was measured otherwise."""

import argparse
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plugin_overhead import event_differences  # noqa: E402

SPIN_US = 200
BLOCK = 10


def events_per_step(program, tool, spin_us):
    """Median over block pairs of the events' time per step, on less
    paused, in microseconds; and what legacy_app says it timed."""
    environment = dict(os.environ)
    for variable in ("KOKKOS_TOOLS_LIBS", "KOKKOS_PROFILE_LIBRARY"):
        environment[variable] = tool
    environment["KP_TEST_TOOL_NO_GLOBAL_FENCING"] = "1"
    environment["KP_TEST_TOOL_OUTPUT"] = os.devnull
    environment["KP_TEST_TOOL_SPIN_KERNEL_END_US"] = str(spin_us)
    command = [program, "--steps", "200", "--size", "1000", "--probes", "3",
               "--alternate-tools", str(BLOCK)]
    done = subprocess.run(command, env=environment, capture_output=True,
                          text=True, timeout=120, check=False)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} exited with {done.returncode}:\n"
                 f"{done.stderr}")
    timed = re.search(r"legacy_app: events timed: (.*)", done.stdout)
    differences = event_differences(done.stdout, BLOCK, program)
    return (statistics.median(differences) * 1e6,
            timed.group(1) if timed else "")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True,
                        help="the build directory (legacy_app, the test tool)")
    arguments = parser.parse_args()
    program = os.path.join(arguments.build, "examples/legacy_app/legacy_app")
    tool = os.path.join(arguments.build, "tests/libkp_test_tool.so")
    spun, timed = events_per_step(program, tool, SPIN_US)
    if not timed:
        print("FAILED: legacy_app did not say which events it timed")
        return 1
    if "(not the kernel's begin and end)" in timed:
        print(f"skipped: legacy_app does not time the kernel's events here "
              f"({timed})")
        return 77
    plain, _ = events_per_step(program, tool, 0)
    print(f"events per step above paused: {spun:.1f} us with {SPIN_US} us "
          f"spun in each kernel's end, {plain:.1f} us without")
    if spun < 0.75 * SPIN_US or plain > 0.25 * SPIN_US:
        print(f"FAILED: the events must hold the {SPIN_US} us spun at the "
              "kernel's end, and not without it")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
