#!/usr/bin/env python3
"""The latency of each plugin event, under each setting: event_latency (a
time loop's regions, kernels, copies and fences through the plugin's entry
points, each call timed alone) run once per setting, one process each.

    python3 bench/plugin/event_latency.py [--build build] [--events 1000000]
        [--threads 1] [--repeat 3] [--limit-us 5]

A shared virtual machine stops a running program now and then (tens of
microseconds, hundreds of times a second), which lands in whichever event
runs, so a setting whose run lasts longer shows more of them. With
--repeat R each setting runs R times and the last column takes each event's
least time over the R runs before the 99.99th percentile: what the tool
does at a given event (a page fault, a flush) recurs in every run, the
machine's interruptions rarely hit the same event twice.

With --limit-us, exits 1 if a setting's 99.99th percentile (of the least
times, with --repeat) is above it.
"""

import argparse
import array
import os
import subprocess
import sys
import tempfile

RULES = """\
[phases.time_step]
allow.to_host = { max_nbytes = 100000000 }
[phases.advance]
"""


def percentile(ordered, p):
    """As event_latency.cpp computes it."""
    index = int(p / 100.0 * (len(ordered) - 1) + 0.5)
    return ordered[min(index, len(ordered) - 1)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--events", type=int, default=1000000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--limit-us", type=float, default=None)
    arguments = parser.parse_args()
    build = os.path.abspath(arguments.build)
    program = os.path.join(build, "bench/plugin/event_latency")
    plugin = os.path.join(build, "src/plugin/libkp_cunumpy.so")
    base = {name: value for name, value in os.environ.items()
            if not name.startswith(("KOKKOS_TOOLS_LIBS",
                                    "KOKKOS_PROFILE_LIBRARY", "CUNUMPY_"))}
    with tempfile.TemporaryDirectory() as work:
        rules = os.path.join(work, "rules.toml")
        with open(rules, "w") as f:
            f.write(RULES)
        trace = os.path.join(work, "trace.json")
        settings = [
            ("default (call sites, advice)", {}),
            ("no call sites", {"CUNUMPY_BACKTRACE": "0"}),
            ("advice off", {"CUNUMPY_ADVISE": "0"}),
            ("advice with contents", {"CUNUMPY_ADVISE": "contents"}),
            ("budget", {"CUNUMPY_BUDGET": rules}),
            ("trace", {"CUNUMPY_TRACE": trace}),
            ("budget, trace, contents",
             {"CUNUMPY_BUDGET": rules, "CUNUMPY_TRACE": trace,
              "CUNUMPY_ADVISE": "contents"}),
        ]
        least_title = (f"p99.99 least of {arguments.repeat}"
                       if arguments.repeat > 1 else "")
        print(f"{'setting':<30} {'p50':>7} {'p99':>7} {'p99.9':>7} "
              f"{'p99.99':>7} {'max':>9}  {least_title}")
        print(f"(ns per event, {arguments.events} events, "
              f"{arguments.threads} thread(s); the first run's percentiles)")
        worst = 0.0
        for name, extra in settings:
            env = dict(base, CUNUMPY_REPORT=os.path.join(work, "report.txt"),
                       CUNUMPY_ON_VIOLATION="warn", **extra)
            least = None
            for repeat in range(arguments.repeat):
                samples = os.path.join(work, "samples.bin")
                done = subprocess.run(
                    [program, plugin, "--events", str(arguments.events),
                     "--threads", str(arguments.threads),
                     "--samples", samples],
                    env=env, capture_output=True, text=True, timeout=600)
                line = [l for l in done.stdout.splitlines()
                        if l.startswith("events ")]
                if done.returncode != 0 or not line:
                    sys.exit(f"event_latency.py: '{name}' failed (status "
                             f"{done.returncode}): {done.stderr.strip()}")
                times = array.array("I")
                with open(samples, "rb") as f:
                    times.frombytes(f.read())
                least = times if least is None else array.array(
                    "I", map(min, least, times))
                if repeat == 0:
                    words = line[0].split()
                    value = {words[i]: words[i + 1]
                             for i in range(0, len(words) - 1)}
            tail = percentile(sorted(least), 99.99)
            shown = f"{tail:>7.0f}" if arguments.repeat > 1 else ""
            print(f"{name:<30} {value['p50']:>7} {value['p99']:>7} "
                  f"{value['p99.9']:>7} {value['p99.99']:>7} "
                  f"{value['max']:>9}  {shown}")
            worst = max(worst, tail)
        if arguments.limit_us is not None and worst > 1000 * arguments.limit_us:
            print(f"event_latency.py: a 99.99th percentile of {worst:.0f} ns "
                  f"is above {arguments.limit_us} us")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
