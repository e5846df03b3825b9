#!/usr/bin/env python3
"""The plugin's cost and safety on a real Kokkos CUDA application from PyPI
(peclet-dem-cu13: Kokkos 5 with CUDA and ArborX, linked statically), on a
machine with a GPU; scripts/gpu-check runs it when peclet.dem imports.

    python3 gpu_app.py --plugin build/src/plugin/libkp_cunumpy.so \
        [--rounds 7] [--extra-runs 13] [--particles 20000] [--steps 60] \
        [--seconds S]

Each round runs the workload once in each setting, in turn: no tool, the
plugin with the CUDA view (the default of a CUDA build), the plugin with
CUNUMPY_CUPTI=0. The workload is peclet-dem's quick start with PARTICLES
spheres: 10 steps of warm-up, then STEPS steps timed. Then EXTRA_RUNS more
runs with the CUDA view, for crashes only; no run starts after S seconds
(the summary says how many ran). Prints one line per run, then per setting
the runs, the crashes and the median step time, and the plugin's cost
against no tool. Exit status 0 when no run crashed.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tests", "plugin"))
import peclet_apps  # noqa: E402

WARMUP_STEPS = 10


def workload(particles, steps):
    simulation = peclet_apps.dem_simulation(particles)
    simulation.step(WARMUP_STEPS)
    start = time.perf_counter()
    simulation.step(steps)
    seconds = time.perf_counter() - start
    print(json.dumps({"step_seconds": seconds / steps,
                      "contacts": int(simulation.num_contacts)}), flush=True)


def run(setting, plugin, particles, steps, timeout):
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith(("KOKKOS_", "CUNUMPY_"))}
    environment.update(OMP_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    if setting != "none":
        environment["KOKKOS_TOOLS_LIBS"] = plugin
    if setting == "view off":
        environment["CUNUMPY_CUPTI"] = "0"
    command = [sys.executable, os.path.abspath(__file__), "--workload",
               str(particles), str(steps)]
    try:
        completed = subprocess.run(command, env=environment, text=True,
                                   stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    for line in completed.stdout.splitlines():
        if line.startswith("{") and completed.returncode == 0:
            return json.loads(line)["step_seconds"], ""
    errors = [line for line in completed.stderr.splitlines() if line.strip()]
    return None, f"status {completed.returncode}: " + \
        (errors[0][:200] if errors else "(no output)")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--workload":
        workload(int(sys.argv[2]), int(sys.argv[3]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plugin", required=True)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--extra-runs", type=int, default=13)
    parser.add_argument("--particles", type=int, default=20000)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--seconds", type=float, default=3600.0)
    arguments = parser.parse_args()
    deadline = time.monotonic() + arguments.seconds
    settings = ["none", "view on", "view off"]
    times = {setting: [] for setting in settings}
    crashes = {setting: [] for setting in settings}
    runs = {setting: 0 for setting in settings}
    schedule = [(r, s) for r in range(arguments.rounds) for s in settings]
    schedule += [(arguments.rounds + i, "view on")
                 for i in range(arguments.extra_runs)]
    for round_index, setting in schedule:
        if time.monotonic() > deadline:
            print(f"time is up: {sum(runs.values())} of {len(schedule)} "
                  "runs made", flush=True)
            break
        seconds, error = run(setting, arguments.plugin, arguments.particles,
                             arguments.steps,
                             min(arguments.timeout,
                                 max(5.0, deadline - time.monotonic() + 30)))
        runs[setting] += 1
        timed = round_index < arguments.rounds
        if seconds is None:
            crashes[setting].append(error)
        elif timed:
            times[setting].append(seconds)
        shown = f"{seconds:.5f} s/step" if seconds is not None else error
        print(f"round {round_index + 1} {setting}: {shown}", flush=True)
    print(f"peclet-dem-cu13, {arguments.particles} particles, "
          f"{arguments.steps} steps timed after {WARMUP_STEPS}; "
          f"{arguments.rounds} interleaved rounds")
    base = statistics.median(times["none"]) if times["none"] else None
    for setting in settings:
        median = statistics.median(times[setting]) if times[setting] else None
        cost = (f", {100 * (median / base - 1):+.1f}% against no tool"
                if median and base and setting != "none" else "")
        shown = f"median {median:.5f} s/step" if median else "no time"
        print(f"{setting}: {runs[setting]} runs, {len(crashes[setting])} "
              f"crashed, {shown}{cost}")
        for error in crashes[setting]:
            print(f"  crash: {error}")
    return 0 if not any(crashes.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
