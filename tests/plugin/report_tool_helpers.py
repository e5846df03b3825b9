"""Reports for cunumpy-report's tests: version-3 reports made from a
plugin report of any version, jobs of many ranks of them, and the rule by
which the table shortens paths; virtual environments of the build with
the programs that read what cunumpy writes."""

import json
import os
import re
import subprocess
import sys

import pytest

from plugin_helpers import shown, skip

RUN_ID = "slurm:1234.0"


def version3(report, rank, size, run_id=RUN_ID, label=None, verdict=None):
    """A copy of `report` (a plugin report of version 2 or 3) as version 3
    writes it, for `rank` of a job of `size` ranks (None: unknown) of the
    run `run_id`. The budget's verdict follows the report's budget and
    completeness unless given; fields a version-3 report has are kept."""
    result = json.loads(json.dumps(report))
    result["version"] = 3
    result["rank"] = rank
    result["run"] = {"id": run_id, "rank": rank, "size": size,
                     "label": label}
    result.setdefault("cunumpy_version", "0.9.0")
    kokkos_version = result.get("metadata", {}).get("Kokkos Version")
    result.setdefault("kokkos", {"interface": 20211015,
                                 "interface_known": True,
                                 "version": kokkos_version,
                                 "backends": ["Serial"], "sessions": 1})
    result.setdefault("device", {"present": True, "reason": ""})
    budget = result["budget"]
    budget.setdefault("notes", [])
    if verdict is None:
        verdict = budget.get("verdict") or budget_verdict(result)
    budget["verdict"] = verdict
    return result


def budget_verdict(report):
    """The verdict version 3 gives a report's budget."""
    budget = report["budget"]
    if not budget["file"]:
        return "none"
    if not report["device"]["present"]:
        return "unchecked"
    if not report["complete"]:
        return "incomplete"
    return "ok" if budget["ok"] else "broken"


def passing(report):
    """`report` with its budget checked and kept: no violation."""
    result = json.loads(json.dumps(report))
    budget = result["budget"]
    budget.update({"checked": True, "ok": True, "error": None,
                   "violations": [], "verdict": "ok",
                   "file": budget["file"] or "budget.toml"})
    result["complete"] = True
    result["losses"] = []
    for section in [result["total"], result["outside"], *result["phases"]]:
        section["broken"] = False
    return result


def write_job(directory, report, ranks, size, **fields):
    """Writes report-<rank>.json for each of `ranks` in `directory`: the
    version-3 `report` of that rank, of a job of `size` ranks (None:
    unknown); returns the paths."""
    os.makedirs(directory, exist_ok=True)
    paths = []
    for rank in ranks:
        path = os.path.join(directory, f"report-{rank}.json")
        write_json(path, version3(report, rank, size, **fields))
        paths.append(path)
    return paths


def write_json(path, value):
    with open(path, "w", encoding="utf-8") as stream:
        json.dump(value, stream)
    return path


# A path in a line of the table (a call site, the program): from a "/" that
# starts a word to a blank, ":", "," or ")"; then its line number, if any.
PATH = re.compile(r"(?<![^\s(])(?:…)?/[^\s:,)]*(?::\d+)?")


def short_paths(line):
    """`line` with each path of more than three components shown from its
    last three, as docs/plugin.md says the table shows them:
    "/home/me/cunumpy/tests/programs/advice_events.cpp:88" as
    "…/tests/programs/advice_events.cpp:88"."""
    def shortened(match):
        parts = match.group(0).split("/")
        if len(parts) <= 4:
            return match.group(0)
        return "…/" + "/".join(parts[-3:])
    return PATH.sub(shortened, line)


def call_tool(tool, arguments):
    """Runs cunumpy-report with `arguments`: (exit status, stdout,
    stderr)."""
    run = subprocess.run([tool, *arguments], capture_output=True, text=True,
                         timeout=300)
    return run.returncode, run.stdout, run.stderr


# What differs between two runs of the same program: times, the run, the
# process.
TIMES = re.compile(r"seconds|time|bandwidth")


def comparable(value, key=""):
    """A merged report without what two runs of one program differ in:
    times (and the rank of their maximum), the run id, the process, and
    advice (its findings' savings are times)."""
    if isinstance(value, dict):
        return {name: comparable(member, name) for name, member in value.items()
                if not TIMES.search(name) and
                name not in ("run", "pid", "started", "ended", "advice")}
    if isinstance(value, list):
        return [comparable(member, key) for member in value]
    return value


def assert_same_report(job, offline):
    """The job's report (merged over MPI) is the offline merge's, but for
    what two runs differ in (comparable); the members that differ if not."""
    ours, theirs = comparable(job), comparable(offline)
    assert ours == theirs, "the job's report is the offline merge's:\n" + \
        "\n".join(f"{name}: {shown(ours.get(name))} != "
                  f"{shown(theirs.get(name))}"
                  for name in sorted(set(ours) | set(theirs))
                  if ours.get(name) != theirs.get(name))[:4000]


def build_venv(case, request, name, packages, module):
    """The python of a virtual environment of the build
    (tests/plugin/<name>) with `packages` from PyPI, made once and reused
    while it imports `module`; skips the test when PyPI cannot be
    reached."""
    venv = os.path.join(os.path.dirname(os.path.dirname(case.work)), name)
    python = os.path.join(venv, "bin", "python")
    if os.path.exists(python) and subprocess.run(
            [python, "-c", f"import {module}"],
            capture_output=True).returncode == 0:
        return python  # made by an earlier run
    made = subprocess.run([sys.executable, "-m", "venv", venv],
                          capture_output=True, text=True)
    if made.returncode != 0:
        last = (made.stderr.strip().splitlines() or ["no message"])[-1]
        skip(request, f"{sys.executable} -m venv fails ({last}): install "
             "python3-venv")
    install = subprocess.run(
        [python, "-m", "pip", "install", "--disable-pip-version-check",
         "--retries", "1", "--timeout", "20", *packages],
        capture_output=True, text=True, timeout=600)
    if install.returncode != 0:
        output = install.stdout + install.stderr
        failure = next((sign for sign in NETWORK_FAILURES if sign in output),
                       None)
        if failure:
            skip(request, f"PyPI cannot be reached to install "
                 f"{' '.join(packages)} (pip: {failure})")
        pytest.fail(f"pip install {' '.join(packages)} failed:\n"
                    f"{output[-3000:]}")
    return python


NETWORK_FAILURES = ("NewConnectionError", "ConnectTimeoutError",
                    "Temporary failure in name resolution",
                    "Name or service not known", "Network is unreachable",
                    "Connection refused", "ProxyError", "ReadTimeoutError",
                    "No route to host")
