#!/usr/bin/env python3
"""The plugin on real Kokkos applications from PyPI: peclet-flow and
peclet-dem (tests/plugin/peclet_apps.py says what they run), installed in a
venv under the build directory, made on the first run and reused after.

    python3 tests/plugin/real_apps.py --plugin build/src/plugin/libkp_cunumpy.so
        --venv build/tests/plugin/real-apps-venv [--part outputs|one_process]

--part outputs (ctest plugin.real_apps): for each application alone, its
printed results are byte-identical with and without the plugin
(KOKKOS_TOOLS_LIBS), and the plugin's JSON report is complete and holds
the application's own regions, with their call counts.
--part one_process (ctest plugin.real_apps_one_process): both applications
in one process, `import peclet.flow; import peclet.dem`, each running a
short workload, with the plugin; the same results as without it, and one
report with the regions of both.

Exit status 0: every check passed; 1: a check failed (each failure says
which and why); 77 (ctest's SKIP_RETURN_CODE): PyPI cannot be reached to
make the venv, said in one line.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peclet_apps  # noqa: E402

# Short and deterministic (one OpenMP thread): well under a second each.
FLOW = ("flow", 8, 1)
DEM = ("dem", 1000, 200)
DEM_SHORT = ("dem", 100, 10)
# Regions the applications push, with their calls for the workloads above:
# peclet-flow's multigrid smoother (per level and sweep), and peclet-dem's
# position solve (once per step and per relax step) and ArborX's query.
FLOW_REGIONS = {"peclet::flow::cc_smooth@serial": None,
                "peclet::flow::restrict@serial": None}
DEM_REGIONS = {
    "dem::solve::pos": DEM[2] + peclet_apps.RELAX_STEPS,
    "ArborX::BVH::query_crs": None,
}


class Checks:
    """Each check's verdict, printed as it is made."""

    def __init__(self):
        self.failures = []
        self.count = 0

    def check(self, name, problem):
        """`problem` is None when the check passed, else what went wrong."""
        self.count += 1
        if problem is None:
            print(f"ok    {name}", flush=True)
        else:
            self.failures.append(name)
            print(f"FAIL  {name}\n{indented(problem)}", flush=True)


def indented(text, limit=60):
    lines = text.rstrip("\n").splitlines()
    if len(lines) > limit:
        lines = lines[:limit // 2] + ["..."] + lines[-limit // 2:]
    return "\n".join("      " + line for line in lines)


class Run:
    def __init__(self, command, status, stdout, stderr):
        self.command, self.status = command, status
        self.stdout, self.stderr = stdout, stderr

    def failure(self):
        """None when the run ended with status 0, else what it printed."""
        if self.status == 0:
            return None
        if self.status == "timeout":
            how = "no end within the time limit; killed"
        elif self.status < 0:
            how = f"killed by signal {-self.status}"
        else:
            how = f"exit status {self.status}"
        return (f"$ {' '.join(self.command)}\n{how}\n"
                f"stdout:\n{self.stdout}stderr:\n{self.stderr}")


def run(command, environment, timeout):
    try:
        completed = subprocess.run(command, env=environment,
                                   stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True,
                                   timeout=timeout)
    except subprocess.TimeoutExpired as error:
        return Run(command, "timeout", _text(error.stdout),
                   _text(error.stderr))
    return Run(command, completed.returncode, completed.stdout,
               completed.stderr)


def _text(output):
    if isinstance(output, bytes):
        return output.decode(errors="replace")
    return output or ""


def same_output(alone, with_plugin, workloads):
    """None when both runs printed the same bytes, one result line per
    workload."""
    apps = [json.loads(line).get("app") for line in alone.stdout.splitlines()
            if line.startswith("{")]
    if apps != [workload[0] for workload in workloads]:
        return (f"without the plugin, the results of {apps} instead of "
                f"{[workload[0] for workload in workloads]}:\n{alone.stdout}")
    if alone.stdout == with_plugin.stdout:
        return None
    return (f"stdout differs:\nwithout the plugin:\n{alone.stdout}"
            f"with the plugin:\n{with_plugin.stdout}"
            f"stderr with the plugin:\n{with_plugin.stderr}")


def report_problems(path, regions, run_):
    """What is wrong with the JSON report at `path`: it must be complete,
    have lost nothing, and list `regions` (path: calls, or None for any
    number) at the top level."""
    try:
        with open(path) as stream:
            report = json.load(stream)
    except (OSError, ValueError) as error:
        return (f"no JSON report at {path}: {error}\n"
                f"stderr of the run:\n{run_.stderr}")
    problems = []
    if report.get("complete") is not True:
        problems.append(f"'complete' is {report.get('complete')!r}, "
                        f"expected true")
    if report.get("losses"):
        problems.append(f"'losses': {json.dumps(report['losses'])}")
    found = {region.get("path"): region.get("calls")
             for region in report.get("regions", [])}
    for name, calls in regions.items():
        if name not in found:
            problems.append(f"no region '{name}'")
        elif calls is not None and found[name] != calls:
            problems.append(f"region '{name}': {found[name]} calls, "
                            f"expected {calls}")
        elif not found[name]:
            problems.append(f"region '{name}' has no calls")
    if not problems:
        return None
    names = sorted(name for name in found if name)
    return "\n".join(problems + [f"regions in {path}: {names}"])


def kokkos_libraries(plugin):
    """The shared Kokkos libraries the plugin needs (ldd), for the one
    process part's failure message."""
    if shutil.which("ldd") is None:
        return []
    try:
        completed = subprocess.run(["ldd", plugin], stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, text=True,
                                   timeout=30)
    except subprocess.TimeoutExpired:
        return []
    return [line.split()[0] for line in completed.stdout.splitlines()
            if "kokkos" in line.lower() and line.split()]


def last_error(stderr):
    """The last line of stderr that names an exception, else its last line
    that is not the plugin's."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines
              if re.match(r"[A-Za-z_.]*(Error|Exception)\b.*:", line)]
    others = [line for line in lines if not line.startswith("cunumpy:")]
    return (errors or others or [""])[-1]


def check_outputs(checks, python, plugin, work, timeout):
    for workload, regions in ((FLOW, FLOW_REGIONS), (DEM, DEM_REGIONS)):
        name = f"{workload[0]} {workload[1]} {workload[2]}"
        command = peclet_apps.command(python, workload)
        report = os.path.join(work, f"{workload[0]}.json")
        alone = run(command, peclet_apps.environment(), timeout)
        checks.check(f"{name}: runs without the plugin", alone.failure())
        traced = run(command, peclet_apps.environment(
            tools=plugin, extra={"CUNUMPY_REPORT": report}), timeout)
        checks.check(f"{name}: runs with the plugin", traced.failure())
        if alone.failure() or traced.failure():
            continue
        checks.check(f"{name}: the same output with and without the plugin",
                     same_output(alone, traced, [workload]))
        checks.check(f"{name}: the report is complete and lists the "
                     f"regions {', '.join(regions)}",
                     report_problems(report, regions, traced))


def check_one_process(checks, python, plugin, work, timeout):
    name = "flow and dem in one process"
    command = peclet_apps.command(python, FLOW, DEM_SHORT)
    report = os.path.join(work, "both.json")
    alone = run(command, peclet_apps.environment(), timeout)
    checks.check(f"{name}: runs without the plugin", alone.failure())
    traced = run(command, peclet_apps.environment(
        tools=plugin, extra={"CUNUMPY_REPORT": report}), timeout)
    problem = traced.failure()
    if problem is not None:
        libraries = kokkos_libraries(plugin)
        problem = (
            "with the plugin, `import peclet.flow; import peclet.dem` and a "
            "short workload of each in one process failed"
            + (f": {last_error(traced.stderr)}" if last_error(traced.stderr)
               else "") + ".\n"
            "Each application links its own Kokkos 5 statically; the "
            "plugin must not bring a Kokkos of its own into the process"
            + (f", and it links {', '.join(libraries)}" if libraries
               else "") + ".\n" + problem)
    checks.check(f"{name}: runs with the plugin", problem)
    if alone.failure() or traced.failure():
        return
    checks.check(f"{name}: the same output with and without the plugin",
                 same_output(alone, traced, [FLOW, DEM_SHORT]))
    regions = dict(FLOW_REGIONS)
    regions.update({name: None for name in DEM_REGIONS})
    checks.check(f"{name}: one report, complete, with the regions of both",
                 report_problems(report, regions, traced))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plugin", required=True)
    parser.add_argument("--venv", required=True,
                        help="the venv's directory (made when missing)")
    parser.add_argument("--part", choices=["outputs", "one_process", "all"],
                        default="all")
    parser.add_argument("--timeout", type=float, default=120,
                        help="seconds for one run of an application")
    arguments = parser.parse_args()
    plugin = os.path.abspath(arguments.plugin)
    if not os.path.isfile(plugin):
        sys.exit(f"real_apps.py: no plugin at {plugin}")
    if sys.version_info < (3, 10) or not sys.platform.startswith("linux"):
        print(f"real_apps.py: skipped: the peclet wheels need Linux and "
              f"Python 3.10 or newer, this is {sys.platform} with Python "
              f"{sys.version.split()[0]}")
        return peclet_apps.SKIP
    try:
        python = peclet_apps.venv_python(arguments.venv, log=print)
    except peclet_apps.Unreachable as error:
        print(f"real_apps.py: skipped: PyPI cannot be reached to install "
              f"{' and '.join(peclet_apps.REQUIREMENTS)} ({error})")
        return peclet_apps.SKIP
    except peclet_apps.SetupError as error:
        print(f"real_apps.py: the venv {arguments.venv} cannot be made:\n"
              f"{error}")
        return 1
    checks = Checks()
    with tempfile.TemporaryDirectory(prefix="cunumpy-real-apps-") as work:
        if arguments.part in ("outputs", "all"):
            check_outputs(checks, python, plugin, work, arguments.timeout)
        if arguments.part in ("one_process", "all"):
            check_one_process(checks, python, plugin, work,
                              arguments.timeout)
    print(f"real_apps.py: {checks.count - len(checks.failures)} of "
          f"{checks.count} checks passed"
          + (f"; failed: {'; '.join(checks.failures)}"
             if checks.failures else ""))
    return 1 if checks.failures else 0


if __name__ == "__main__":
    sys.exit(main())
