#!/usr/bin/env python3
"""The cost of one time step's events after the caches were flushed, for
several Kokkos tools in one rotation (bench_cold_step, one process each).

    bench/plugin/cold_step.py --build build \\
        [--tool name=PATH ...] [--rounds 20] [--steps 1000]

The first tool is cunumpy's plugin of --build unless --tool names others;
`--tool base=/old/build/src/plugin/libkp_cunumpy.so` compares two builds.
Each round runs the floor (no tool) and every tool once, in an order that
turns from round to round. A run's figure is its mean time of a step's
events (--statistic median: its median, which leaves out the steps where
the plugin flushes its queue, one in about 64 here). A round gives each
tool its figure above the floor's of that round, and its ratio to the first
tool's: rounds run
minutes apart on a shared machine whose memory is slower or faster from one
minute to the next, and a ratio within a round cancels that. Results and
commands in docs/performance.md.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile


def pinned():
    """taskset -c 1 where there is a second core (the first takes the
    machine's interrupts), else nothing."""
    if shutil.which("taskset") and 1 in os.sched_getaffinity(0):
        return ["taskset", "-c", "1"]
    return []


def run(binary, tool, steps, evict_bytes, report, statistic):
    command = pinned() + [binary, "--steps", str(steps),
                          "--evict-bytes", str(evict_bytes)]
    if tool is not None:
        command += ["--tool", tool]
    env = dict(os.environ, CUNUMPY_REPORT=report)
    out = subprocess.run(command, capture_output=True, text=True, env=env)
    match = re.search(rf"{statistic} ([\d.]+) ns", out.stdout)
    if out.returncode != 0 or match is None:
        sys.exit(f"cold_step.py: {' '.join(command)} failed "
                 f"(exit {out.returncode}): {out.stderr.strip()}")
    return float(match.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", required=True)
    parser.add_argument("--tool", action="append", default=[],
                        metavar="NAME=PATH")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--evict-bytes", type=int, default=8 << 20)
    parser.add_argument("--statistic", choices=("mean", "median"),
                        default="mean",
                        help="of a run's steps (default: mean)")
    args = parser.parse_args()
    binary = os.path.join(args.build, "bench", "plugin", "bench_cold_step")
    if not os.path.exists(binary):
        sys.exit(f"cold_step.py: {binary} not found: build the target "
                 "bench_cold_step (CUNUMPY_BUILD_BENCHMARKS=ON)")
    tools = []
    for spec in args.tool:
        name, sep, path = spec.partition("=")
        if not sep or not os.path.exists(path):
            sys.exit(f"cold_step.py: --tool {spec}: expected NAME=PATH of "
                     "an existing library")
        tools.append((name, path))
    if not tools:
        tools = [("plugin", os.path.join(args.build, "src", "plugin",
                                         "libkp_cunumpy.so"))]
    if args.rounds < 1:
        sys.exit("cold_step.py: --rounds must be at least 1")

    series = [("floor", None)] + tools
    above = {name: [] for name, _ in tools}
    ratio = {name: [] for name, _ in tools[1:]}
    floors = []
    with tempfile.TemporaryDirectory() as scratch:
        report = os.path.join(scratch, "report.json")
        for r in range(args.rounds):
            order = series[r % len(series):] + series[:r % len(series)]
            medians = {name: run(binary, path, args.steps, args.evict_bytes,
                                 report, args.statistic)
                       for name, path in order}
            floors.append(medians["floor"])
            for name, _ in tools:
                above[name].append(medians[name] - medians["floor"])
            first = above[tools[0][0]][-1]
            for name, _ in tools[1:]:
                ratio[name].append(above[name][-1] / first)

    print(f"bench_cold_step --steps {args.steps} --evict-bytes "
          f"{args.evict_bytes}, {args.rounds} rounds, a run's "
          f"{args.statistic} step")
    print(f"  floor (no tool): {statistics.median(floors):.0f} ns a step")
    print("  tool            ns a step above the floor: median [lowest, "
          "highest round]   ratio to " + tools[0][0])
    for name, _ in tools:
        values = above[name]
        line = (f"  {name:14s} {statistics.median(values):7.0f}   "
                f"[{min(values):.0f}, {max(values):.0f}]")
        if name in ratio:
            line += (f"   {statistics.median(ratio[name]):.3f} "
                     f"[{min(ratio[name]):.3f}, {max(ratio[name]):.3f}]")
        print(line)


if __name__ == "__main__":
    main()
