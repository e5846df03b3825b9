#!/usr/bin/env python3
"""Two builds' Google benchmarks side by side: runs the same benchmark
program of each build in turn, ROUNDS times, one short run each, and prints
each benchmark's median time per build. Alternating short runs puts both
builds under the same machine load, which a shared virtual machine moves by
tens of percent from one minute to the next.

    python3 bench/plugin/compare_builds.py BUILD OTHER_BUILD
        [--program bench/plugin/bench_plugin_events] [--filter REGEX]
        [--rounds 12] [--min-time 0.3]

Pin it to one core (taskset -c 1) on an otherwise idle machine.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("builds", nargs=2, metavar="BUILD")
    parser.add_argument("--program", default="bench/plugin/bench_plugin_events")
    parser.add_argument("--filter", default=".")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--min-time", default="0.3")
    arguments = parser.parse_args()
    times = {}
    for _ in range(arguments.rounds):
        for build in arguments.builds:
            program = os.path.join(build, arguments.program)
            done = subprocess.run(
                [program, f"--benchmark_filter={arguments.filter}",
                 f"--benchmark_min_time={arguments.min_time}",
                 "--benchmark_format=json"],
                capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"compare_builds.py: {program} failed "
                         f"(status {done.returncode}): {done.stderr.strip()}")
            for result in json.loads(done.stdout)["benchmarks"]:
                times.setdefault(result["name"], {}).setdefault(
                    build, []).append(result["cpu_time"])
    width = max(len(name) for name in times)
    print(f"{'benchmark':<{width}}  " + "  ".join(
        f"{build:>12}" for build in arguments.builds) +
        f"   (ns, median of {arguments.rounds} alternating runs)")
    for name, by_build in times.items():
        print(f"{name:<{width}}  " + "  ".join(
            f"{statistics.median(by_build[build]):>12.1f}"
            for build in arguments.builds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
