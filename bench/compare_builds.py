#!/usr/bin/env python3
"""One Google Benchmark binary of two builds, run in turn: medians of each
benchmark and their ratio (second / first), for before/after comparisons
under the same machine load.

    python3 bench/compare_builds.py BEFORE/bench/bench_recorder \\
        build/bench/bench_recorder [--filter 'copy_8|same_space'] [--rounds 8]

Each round runs both binaries once (in alternating order) with
--benchmark_min_time=0.2; the fake device is registered by the
benchmarks' own main.
"""

import argparse
import json
import statistics
import subprocess
import sys


def run(binary, pattern):
    completed = subprocess.run(
        [binary, f"--benchmark_filter={pattern}", "--benchmark_format=json",
         "--benchmark_min_time=0.2"],
        capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        sys.exit(f"{binary} failed:\n{completed.stderr}")
    return {b["name"]: b["real_time"]
            for b in json.loads(completed.stdout)["benchmarks"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("first")
    parser.add_argument("second")
    parser.add_argument("--filter", default=".")
    parser.add_argument("--rounds", type=int, default=8)
    arguments = parser.parse_args()
    times = ({}, {})
    for round_ in range(arguments.rounds):
        order = (0, 1) if round_ % 2 == 0 else (1, 0)
        for which in order:
            binary = (arguments.first, arguments.second)[which]
            for name, value in run(binary, arguments.filter).items():
                times[which].setdefault(name, []).append(value)
    width = max(len(name) for name in times[1])
    print(f"{'benchmark':<{width}} {'first':>10} {'second':>10} "
          f"{'second/first':>12}   (ns, medians of {arguments.rounds})")
    for name, values in times[1].items():
        if name not in times[0]:
            continue
        first = statistics.median(times[0][name])
        second = statistics.median(values)
        print(f"{name:<{width}} {first:>10.1f} {second:>10.1f} "
              f"{second / first:>12.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
