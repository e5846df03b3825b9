#!/usr/bin/env python3
"""The plugin's cost on real Kokkos applications (peclet-dem, peclet-flow:
tests/plugin/peclet_apps.py), beside other Kokkos tools, in one
interleaved run: each round runs every workload with no tool, with each
--peer tool, with cunumpy and with each --variant of cunumpy, in turn, each
as a process of its own; CPU time (user + system, from os.wait4) and wall
time per process; medians over the rounds.

    python3 bench/plugin/real_apps.py [--build build] [--rounds 7]
        [--plugin build/src/plugin/libkp_cunumpy.so]
        [--peer space-time-stack=/tmp/kt/libkp_space_time_stack.so]
        [--variant nosites:CUNUMPY_BACKTRACE=0]
        [--workload dem --workload flow-tiny] [--threads 1]
        [--python VENV/bin/python] [--json results.json]

Workloads: dem (peclet-dem's quick start, 1000 spheres, 200 steps),
dem-dense (200 spheres, 2000 steps: ArborX's regions and kernels every
step, the most events per second of work), flow
(32^3 cells, 5 steps), and dem-tiny, flow-tiny (what a process costs
whatever it runs: the plugin's fixed cost). The python is the venv's of
the test tests/plugin/real_apps.py (<build>/tests/plugin/real-apps-venv,
made when missing) unless --python names one with peclet-flow and
peclet-dem. cunumpy writes its report to a temporary JSON file; one
untimed round of every configuration comes before the timed ones. Every run's printed results must be
the same as without a tool. Pin it for steadier numbers:
`taskset -c 1 python3 bench/plugin/real_apps.py ...`.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tests", "plugin"))
import peclet_apps  # noqa: E402

WORKLOADS = {
    "dem": [("dem", 1000, 200)],
    "dem-dense": [("dem", 200, 2000)],
    "flow": [("flow", 32, 5)],
    "dem-tiny": [("dem", 100, 10)],
    "flow-tiny": [("flow", 8, 1)],
}


def parse_variant(text):
    name, _, assignments = text.partition(":")
    variables = {}
    for assignment in assignments.split(","):
        variable, equals, value = assignment.partition("=")
        if not equals or not variable:
            raise argparse.ArgumentTypeError(
                f"'{text}' is not NAME:VAR=VALUE[,VAR=VALUE]")
        variables[variable] = value
    if not name:
        raise argparse.ArgumentTypeError(f"'{text}' has no NAME")
    return name, variables


def parse_peer(text):
    name, equals, path = text.partition("=")
    if not equals or not name or not os.path.isfile(path):
        raise argparse.ArgumentTypeError(
            f"'{text}' is not NAME=PATH of a file")
    return name, os.path.abspath(path)


def timed_run(command, environment, stdout, stderr, timeout):
    """(CPU seconds, wall seconds, exit status) of one process; killed
    after `timeout` seconds (its status is then -9)."""
    with open(stdout, "w") as out, open(stderr, "w") as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, env=environment, stdout=out,
                                   stderr=err)
    lock = threading.Lock()
    exited = False

    def kill():
        with lock:
            if not exited:
                process.kill()

    timer = threading.Timer(timeout, kill)
    timer.start()
    # Waited for without reaping first, so that the timer cannot kill
    # another process given the same pid.
    os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT)
    wall = time.perf_counter() - start
    with lock:
        exited = True
    timer.cancel()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, wall, process.returncode


def results_of(path):
    """The workload's JSON lines in a run's stdout (a tool may print more:
    space-time-stack prints its table there)."""
    with open(path) as stream:
        return [line for line in stream if line.startswith('{"app": ')]


def tail(path, lines=30):
    with open(path, errors="replace") as stream:
        return "".join(stream.readlines()[-lines:])


def milliseconds(values):
    return [1000 * value for value in values]


def table(name, command, series):
    """The table of one workload, CPU and wall: medians, their difference
    to no tool in ms and %, the median of the differences to no tool
    within each round (paired: steadier when the machine's load drifts),
    and the spread."""
    rows = [f"{name}: {' '.join(command[1:])}"]
    width = max(len(config) for config in series)
    heading = f"{'+ms':>7} {'+%':>6} {'paired':>7} {'min-max':>13}"
    rows.append(f"  {'':{width}}  {'CPU ms':>7} {heading}   "
                f"{'wall ms':>7} {heading}")
    base = {kind: milliseconds(series["no tool"][kind])
            for kind in ("cpu", "wall")}
    for config, values in series.items():
        cells = []
        for kind in ("cpu", "wall"):
            times = milliseconds(values[kind])
            median = statistics.median(times)
            delta = median - statistics.median(base[kind])
            paired = statistics.median(
                [time - time_base for time, time_base in
                 zip(times, base[kind])])
            spread = f"{min(times):.0f}-{max(times):.0f}"
            cells.append(f"{median:7.1f} {delta:+7.1f} "
                         f"{100 * delta / statistics.median(base[kind]):+6.1f}"
                         f" {paired:+7.1f} {spread:>13}")
        rows.append(f"  {config:{width}}  {cells[0]}   {cells[1]}")
    return "\n".join(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build",
                        help="the build directory: the plugin and the "
                             "test's venv are found there")
    parser.add_argument("--plugin",
                        help="default: <build>/src/plugin/libkp_cunumpy.so")
    parser.add_argument("--python",
                        help="a python with peclet-flow and peclet-dem; "
                             "default: the test's venv, made when missing")
    parser.add_argument("--venv",
                        help="the venv to make or reuse; default: "
                             "<build>/tests/plugin/real-apps-venv")
    parser.add_argument("--peer", action="append", type=parse_peer,
                        default=[], metavar="NAME=PATH")
    parser.add_argument("--variant", action="append", type=parse_variant,
                        default=[], metavar="NAME:VAR=VALUE[,VAR=VALUE]")
    parser.add_argument("--workload", action="append",
                        choices=sorted(WORKLOADS))
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1,
                        help="OMP_NUM_THREADS of the workloads")
    parser.add_argument("--timeout", type=float, default=300,
                        help="seconds for one run")
    parser.add_argument("--json", help="write the raw numbers there")
    arguments = parser.parse_args()
    build = os.path.abspath(arguments.build)
    plugin = os.path.abspath(arguments.plugin or os.path.join(
        build, "src", "plugin", "libkp_cunumpy.so"))
    if not os.path.isfile(plugin):
        sys.exit(f"real_apps.py: no plugin at {plugin}")
    python = arguments.python
    if python is None:
        venv = arguments.venv or os.path.join(build, "tests", "plugin",
                                              "real-apps-venv")
        try:
            python = peclet_apps.venv_python(venv, log=print)
        except peclet_apps.Unreachable as error:
            print(f"real_apps.py: skipped: PyPI cannot be reached to "
                  f"install {' and '.join(peclet_apps.REQUIREMENTS)} "
                  f"({error})")
            return peclet_apps.SKIP
        except peclet_apps.SetupError as error:
            sys.exit(f"real_apps.py: the venv {venv} cannot be made:\n"
                     f"{error}")
    workloads = arguments.workload or list(WORKLOADS)
    names = [name for name, _ in arguments.peer + arguments.variant]
    if len(set(names)) != len(names) or \
            set(names) & {"no tool", "cunumpy"}:
        sys.exit("real_apps.py: every --peer and --variant needs a name of "
                 "its own, other than 'no tool' and 'cunumpy'")

    with tempfile.TemporaryDirectory(prefix="cunumpy-bench-apps-") as work:
        cunumpy = {"CUNUMPY_REPORT": os.path.join(work, "report.json")}
        configs = {"no tool": peclet_apps.environment(arguments.threads)}
        for name, path in arguments.peer:
            configs[name] = peclet_apps.environment(arguments.threads,
                                                    tools=path)
        configs["cunumpy"] = peclet_apps.environment(
            arguments.threads, tools=plugin, extra=cunumpy)
        for name, variables in arguments.variant:
            configs[name] = peclet_apps.environment(
                arguments.threads, tools=plugin, extra=dict(cunumpy,
                                                            **variables))
        commands = {name: peclet_apps.command(python, *WORKLOADS[name])
                    for name in workloads}
        expected = {}
        times = {name: {config: {"cpu": [], "wall": []} for config in configs}
                 for name in workloads}
        stdout = os.path.join(work, "stdout")
        stderr = os.path.join(work, "stderr")
        # Round 0 is untimed: the page cache is warm.
        for round_ in range(arguments.rounds + 1):
            for name in workloads:
                for config, environment in configs.items():
                    cpu, wall, status = timed_run(
                        commands[name], environment, stdout, stderr,
                        arguments.timeout)
                    if status != 0:
                        sys.exit(f"real_apps.py: {name} with {config} "
                                 f"failed (status {status}):\n"
                                 f"$ {' '.join(commands[name])}\n"
                                 f"{tail(stdout)}{tail(stderr)}")
                    results = results_of(stdout)
                    expected.setdefault(name, results)
                    if results != expected[name] or not results:
                        sys.exit(f"real_apps.py: {name} with {config} "
                                 f"printed other results than with no "
                                 f"tool:\n{''.join(results)}\nexpected:\n"
                                 f"{''.join(expected[name])}")
                    if round_ > 0:
                        times[name][config]["cpu"].append(cpu)
                        times[name][config]["wall"].append(wall)

    print(f"$ {' '.join([os.path.basename(sys.executable)] + sys.argv)}")
    print(f"{arguments.rounds} interleaved round(s), OMP_NUM_THREADS="
          f"{arguments.threads}, CPU = user + system of the process; "
          f"medians, +ms and +% against no tool, paired: median of the "
          f"rounds' differences to no tool, min-max over the rounds")
    print(f"python: {python}")
    print(f"cunumpy: {plugin}")
    for name, path in arguments.peer:
        print(f"{name}: {path}")
    for name, variables in arguments.variant:
        print(f"{name}: cunumpy with "
              f"{' '.join(f'{k}={v}' for k, v in variables.items())}")
    for name in workloads:
        print()
        print(table(name, commands[name], times[name]))
    if arguments.json:
        with open(arguments.json, "w") as stream:
            json.dump({"command": sys.argv, "python": python,
                       "plugin": plugin, "rounds": arguments.rounds,
                       "threads": arguments.threads,
                       "peers": dict(arguments.peer),
                       "variants": dict(arguments.variant),
                       "workloads": {name: {"command": commands[name],
                                            "seconds": times[name]}
                                     for name in workloads}},
                      stream, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
