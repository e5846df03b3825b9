#!/usr/bin/env python3
"""Wall-clock ratio of the legacy example's time loop with and without the
cunumpy plugin: the goal is at most 1.01.

    python3 bench/plugin/plugin_overhead.py --build build [--steps 10000]
        [--probes 3] [--repeats 6] [--size 100000] [--block 20]
        [--sizes 100000,200000,400000] [--device-time US] [--processes]
        [--trace] [--plugin-env CUNUMPY_BACKTRACE=0] [--no-empty-tool]
        [--variant nosites:CUNUMPY_BACKTRACE=0]
        [--peer space-time-stack=/tmp/kt/libkp_space_time_stack.so]
        [--other-plugin before=OLD_BUILD/src/plugin/libkp_cunumpy.so]

The goal's ratio is measured inside one process, block against block:
`legacy_app --alternate-tools N` times its loop in blocks of N steps and
pauses the loaded Kokkos tool (Kokkos::Tools::Experimental::pause_tools) in
every other block, in pairs ordered on/paused and paused/on in turn. A
pair's ratio (tool on / paused) is the tool's cost under the same machine
load. A run's ratio is the median of its pairs; a series' ratio is the
median of its runs' ratios, shown with the lowest and the highest run (the
pairs of one run share its machine state and are not independent, so the
runs are the samples). On a shared machine this is far steadier than timing
whole processes, whose medians move by a few percent from one series to the
next.

Runs alternate between the plugin and the tests' minimal Kokkos Tools
library (build/tests/libkp_test_tool.so, which only counts the callbacks
and, as the plugin does, opts out of Kokkos' global fencing): what Kokkos
itself spends calling any tool, the floor under the plugin's ratio. Each
--peer NAME=PATH adds another Kokkos tool to the same rotation, such as
kokkos-tools' space-time-stack, so that tools are compared under the same
load; "above floor" is a series' cost per step less the floor's. Each
--other-plugin NAME=PATH adds another build of the plugin with the plugin's
settings, to compare two commits in one rotation.

The column "events" is the cost of the step's events apart from its
kernel's body: legacy_app times the region's push, the kernel's begin and
end events (on a Serial build, where it times the body from inside the
kernel; it prints which it timed), and after the kernel the reads of
--probes and the region's pop, apart from the rest of the step, in the same
blocks. Per step, on less paused, it is a run's median over its block
pairs and a series' median over its runs, less the floor's, shown with the
lowest and the highest run; the column "mean" beside it takes a run's
mean over its block pairs instead (and the one after the time-loop ratio,
a run's mean pair ratio). A cost that comes once every few blocks, such as
a flush of a thread's event queue, is in the means, while a run's median
leaves it out as soon as fewer than half its blocks have one: the means are
what a step costs on average, the medians are steadier under noise. It
leaves out the kernel's body, whose run-to-run noise (about 1 us on a step
of 250 us here) is larger than a tool's cost: on a step that streams more
than the caches hold, it is the figure that tells two tools apart.

--sizes repeats the measurement for several state sizes (step lengths): the
ratio falls as the step grows, and the table shows from which step length
the goal holds. --processes adds the earlier measurement, whole processes
with and without the plugin, alternating, which also gives the plugin's
fixed cost per run (loading, symbolizing the call sites, writing the
report). Each --variant
adds a series with the plugin and more variables, run in turn with the
others, to compare settings under the same load.
--device-time US adds a wait of US microseconds per step, which
reads only the clock (legacy_app --device-time): with a small --size, a
step like a GPU's, where the kernel runs on the device and leaves the host's
caches to the host; the fake device's kernel runs on the host core instead
and evicts them every step. Results and their reading are in
docs/performance.md, "Plugin".
"""

import argparse
import json
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
    """(stdout, process wall-clock, process CPU) of one run."""
    cpu = cpu_seconds()
    start = time.perf_counter()
    finished = subprocess.run(command, env=environment, check=True,
                              stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    wall = time.perf_counter() - start
    return finished.stdout, wall, cpu_seconds() - cpu


def loop_seconds(output, program):
    loop = re.search(r"time loop ([0-9.]+) s", output)
    if loop is None:
        sys.exit(f"no 'time loop' line in the output of {program}")
    return float(loop.group(1))


def block_pairs(output, program):
    """Ratios (tool on / paused) of the block pairs of one run."""
    blocks = {}
    for kind in ("on", "paused"):
        line = re.search(rf"blocks of \d+ steps, tool {kind}:([0-9. ]*)",
                         output)
        if line is None:
            sys.exit(f"{program} printed no blocks: a legacy_app without "
                     "--alternate-tools?")
        blocks[kind] = [float(value) for value in line.group(1).split()]
    return [on / paused for on, paused in zip(blocks["on"], blocks["paused"])
            if paused > 0]


def event_differences(output, block, program):
    """Per step, the time of the events outside kernels with the tool on
    less paused, for each block pair of one run."""
    blocks = {}
    for kind in ("on", "paused"):
        # "outside kernels": a legacy_app that did not time the kernel's
        # begin and end events.
        line = re.search(rf"blocks of \d+ steps, events (?:apart from kernel "
                         rf"bodies|outside kernels), tool {kind}:([0-9. ]*)",
                         output)
        if line is None:
            sys.exit(f"{program} printed no times of the events outside "
                     "kernels: a legacy_app older than this script?")
        blocks[kind] = [float(value) for value in line.group(1).split()]
    return [(on - paused) / block
            for on, paused in zip(blocks["on"], blocks["paused"])]


def events_timed_of(output):
    """Which events legacy_app timed apart from the kernel's body."""
    line = re.search(r"legacy_app: events timed: (.*)", output)
    return (line.group(1).strip() if line is not None else
            "the region's push and pop, the reads (not the kernel's begin "
            "and end)")


def variable_of(assignment, option):
    """(name, value) of a NAME=VALUE given to `option`."""
    name, equals, value = assignment.partition("=")
    if not name or not equals:
        sys.exit(f"{option}: '{assignment}' is not NAME=VALUE")
    return name, value


class Series:
    def __init__(self, name, environment):
        self.name, self.environment = name, environment
        self.runs, self.loops, self.walls, self.cpus = [], [], [], []
        self.events = []  # per run: event_differences

    def events_cost(self, within=statistics.median):
        """The median over runs of a run's `within` (median or mean) of its
        event differences per step, the lowest and the highest run's."""
        values = sorted(within(run) for run in self.events)
        return statistics.median(values), values[0], values[-1]

    def ratio(self, within=statistics.median):
        """The median over runs of a run's `within` (median or mean) of its
        pair ratios, the lowest and the highest run's."""
        values = sorted(within(pairs) for pairs in self.runs)
        return statistics.median(values), values[0], values[-1]


def paired(arguments, build, environments, size):
    """Runs of each series in turn, each with alternating blocks."""
    program = os.path.join(build, "examples/legacy_app/legacy_app")
    command = [program, "--steps", str(arguments.steps), "--size", str(size),
               "--probes", str(arguments.probes), "--alternate-tools",
               str(arguments.block), "--device-time",
               str(arguments.device_time)]
    series = [Series(name, environment) for name, environment in environments]
    output, _, _ = run(command, series[0].environment)  # warm the file cache
    timed = events_timed_of(output)
    for _ in range(arguments.repeats):
        for one in series:
            output, _, _ = run(command, one.environment)
            one.runs.append(block_pairs(output, program))
            one.loops.append(loop_seconds(output, program))
            one.events.append(
                event_differences(output, arguments.block, program))
    return command, series, timed


def processes(arguments, build, base, environments):
    """Whole processes without a tool and with each, alternating."""
    program = os.path.join(build, "examples/legacy_app/legacy_app")
    command = [program, "--steps", str(arguments.steps), "--size",
               str(arguments.size), "--probes", str(arguments.probes),
               "--device-time", str(arguments.device_time)]
    without = Series("none", base)
    series = [Series(name, environment) for name, environment in environments]
    for _ in range(arguments.repeats):
        for one in [without] + series:
            output, wall, cpu = run(command, one.environment)
            one.loops.append(loop_seconds(output, program))
            one.walls.append(wall)
            one.cpus.append(cpu)
    return without, series


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--steps", type=int, default=10000)
    parser.add_argument("--size", type=int, default=100000,
                        help="doubles in the state (the step's length)")
    parser.add_argument("--sizes", default="",
                        help="comma-separated sizes to compare instead")
    parser.add_argument("--device-time", type=int, default=0, metavar="US",
                        help="host wait per step, as for a GPU kernel")
    parser.add_argument("--probes", type=int, default=3,
                        help="single-value copies per time step")
    parser.add_argument("--block", type=int, default=20,
                        help="steps per block (a multiple of the output "
                             "interval, 10)")
    parser.add_argument("--repeats", type=int, default=6)
    parser.add_argument("--processes", action="store_true",
                        help="also time whole processes")
    parser.add_argument("--trace", action="store_true",
                        help="also write a Chrome trace")
    parser.add_argument("--no-empty-tool", action="store_true",
                        help="skip the series with the minimal tool")
    parser.add_argument("--peer", action="append", default=[],
                        metavar="NAME=PATH",
                        help="one more series with another Kokkos tool, "
                             "such as kokkos-tools' space-time-stack "
                             "(repeatable)")
    parser.add_argument("--other-plugin", action="append", default=[],
                        metavar="NAME=PATH",
                        help="one more series with another build of "
                             "libkp_cunumpy.so and the plugin's settings, "
                             "such as the one of an earlier commit "
                             "(repeatable)")
    parser.add_argument("--plugin-env", action="append", default=[],
                        metavar="NAME=VALUE",
                        help="a variable for the runs with the plugin, such "
                             "as CUNUMPY_BACKTRACE=0 (repeatable)")
    parser.add_argument("--variant", action="append", default=[],
                        metavar="NAME:VAR=VALUE[,VAR=VALUE]",
                        help="one more series with the plugin and these "
                             "variables, run in turn with the others, such "
                             "as nosites:CUNUMPY_BACKTRACE=0 (repeatable)")
    arguments = parser.parse_args()

    build = os.path.abspath(arguments.build)
    plugin = os.path.join(build, "src/plugin/libkp_cunumpy.so")
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
            with_plugin.update([variable_of(assignment, "--plugin-env")])
        environments = [("plugin", with_plugin)]
        for variant in arguments.variant:
            name, _, assignments = variant.partition(":")
            if not name or not assignments:
                sys.exit(f"--variant: '{variant}' is not NAME:VAR=VALUE"
                         "[,VAR=VALUE...]")
            environments.append((name, dict(with_plugin, **dict(
                variable_of(assignment, f"--variant {name}")
                for assignment in assignments.split(",")))))
        def tool_series(option, assignment, settings):
            """A series of the Kokkos tool NAME=PATH with `settings`."""
            name, path = variable_of(assignment, option)
            if not os.path.isfile(path):
                sys.exit(f"{option} {name}: no file {path}")
            path = os.path.abspath(path)
            environments.append((name, dict(
                settings, KOKKOS_TOOLS_LIBS=path, KOKKOS_PROFILE_LIBRARY=path)))
            return name

        for other in arguments.other_plugin:
            # Another build of the plugin, with the plugin's settings and a
            # report of its own.
            name = tool_series("--other-plugin", other, with_plugin)
            environments[-1][1]["CUNUMPY_REPORT"] = os.path.join(
                work, f"report-{name}.json")
        for peer in arguments.peer:
            tool_series("--peer", peer, base)
        empty_tool = os.path.join(build, "tests/libkp_test_tool.so")
        if not arguments.no_empty_tool and os.path.exists(empty_tool):
            environments.append(("floor", dict(base, **{
                "KOKKOS_TOOLS_LIBS": empty_tool,
                "KOKKOS_PROFILE_LIBRARY": empty_tool,
                "KP_TEST_TOOL_NO_GLOBAL_FENCING": "1",
                "KP_TEST_TOOL_OUTPUT": os.path.join(work, "counts.txt")})))

        sizes = ([int(size) for size in arguments.sizes.split(",") if size]
                 or [arguments.size])
        print(f"legacy_app --steps {arguments.steps} --probes "
              f"{arguments.probes} --alternate-tools {arguments.block} "
              f"--device-time {arguments.device_time}, "
              f"{arguments.repeats} runs per series")
        print(f"  KOKKOS_TOOLS_LIBS={plugin} {' '.join(arguments.plugin_env)}")
        width = max(len(name) for name, _ in environments)
        print(f"  {'size':>8} {'step':>9}  {'series':<{width}} "
              f"{'time-loop ratio':>15}"
              f"  {'runs from, to':<17} {'mean':>6} {'per step':>9} "
              f"{'above floor':>11} {'events':>9} [runs from, to]"
              f"   {'mean':>7} [runs from, to]")
        for size in sizes:
            _, series, events_timed = paired(arguments, build, environments,
                                             size)
            costs = {}
            for one in series:
                middle, low, high = one.ratio()
                step = statistics.median(one.loops) / arguments.steps
                if step < arguments.device_time * 1e-6:
                    sys.exit(f"steps of {step * 1e6:.1f} us with --device-time"
                             f" {arguments.device_time}: the legacy_app of "
                             f"{build} does not wait")
                # The step with the tool on is `step`; paused, step / ratio.
                costs[one.name] = (middle - 1.0) * step / middle
                one.row = (middle, low, high, step)
            floor = costs.get("floor")
            floor_events = {
                name: next((one.events_cost(within)[0] for one in series
                            if one.name == "floor"), None)
                for name, within in (("median", statistics.median),
                                     ("mean", statistics.fmean))}

            def events_column(one, name, within):
                if floor_events[name] is None or one.name == "floor":
                    return ""
                middle, low, high = (
                    (value - floor_events[name]) * 1e6
                    for value in one.events_cost(within))
                return f"{middle:>6.2f} us [{low:.2f}, {high:.2f}]"

            for one in series:
                middle, low, high, step = one.row
                cost = costs[one.name]
                above = ("" if floor is None or one.name == "floor"
                         else f"{(cost - floor) * 1e6:>8.2f} us")
                mean_ratio = one.ratio(statistics.fmean)[0]
                print(f"  {size:>8} {step * 1e6:>6.1f} us  {one.name:<{width}} "
                      f"{middle:>15.4f}  [{low:.4f}, {high:.4f}] "
                      f"{mean_ratio:.4f} "
                      f"{cost * 1e6:>6.2f} us {above:>11} "
                      f"{events_column(one, 'median', statistics.median)}   "
                      f"{events_column(one, 'mean', statistics.fmean)}")
        if not os.path.exists(with_plugin["CUNUMPY_REPORT"]):
            sys.exit("the runs with the plugin wrote no report: was "
                     f"{plugin} loaded? (its libraries found?)")
        print(f"  time-loop ratio: the median of {len(series[0].runs)} runs' "
              f"medians of {len(series[0].runs[0])} block pairs each; "
              "[lowest run, highest run]; mean: the median of the runs' "
              "means")
        print(f"  events: {events_timed}, timed apart from the kernel's "
              "body, on less paused, above the floor's; the same medians; "
              "mean: the median of the runs' means")
        print("  A cost that comes every few blocks (a flush of the event "
              "queue, when its 32 KiB fill) is in the means; a median leaves it "
              "out once fewer than half the blocks have it.")

        if arguments.processes:
            without, series = processes(arguments, build, base,
                                        environments)
            median = statistics.median
            print(f"whole processes (--size {arguments.size}), medians of "
                  f"{arguments.repeats} runs:")
            for one in series:
                loop = median(one.loops) / median(without.loops)
                wall = median(one.walls) / median(without.walls)
                cpu = median(one.cpus) / median(without.cpus)
                fixed = ((median(one.walls) - median(one.loops)) -
                         (median(without.walls) - median(without.loops)))
                print(f"  {one.name:<{width}} time loop {loop:.4f}, process "
                      f"{wall:.4f}, CPU {cpu:.4f}; fixed cost per run "
                      f"{fixed * 1e3:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
