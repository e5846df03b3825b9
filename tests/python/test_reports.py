"""The report of a run in the plugin's formats, from a TransferBudget:
the same model and formatters as the plugin, so cunumpy-report merges a
library's JSON report and its Hatchet tree is the one cunumpy-report
writes for it."""

import importlib
import json
import math
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import cunumpy as xp
from helpers import without_elapsed

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
# The compiled cunumpy-report (ctest sets its path), else the one of a
# build in build/.
REPORT_TOOL = os.environ.get("CUNUMPY_REPORT_TOOL") or str(
    REPOSITORY / "build" / "src" / "plugin" / "cunumpy-report")


def without_paths(text):
    """`text` without the paths of this checkout and of the interpreter
    (call sites, the program): a word a test requires to be absent must not
    be found in the directory a clone was made in."""
    for path in sorted({str(REPOSITORY), sys.prefix, sys.executable}, key=len, reverse=True):
        text = text.replace(path, "<path>")
    return text


def broken_budget():
    """Phases step (with a region solve inside) and output; step forbids
    the copy it makes."""
    budget = xp.profiling.TransferBudget()
    state = xp.to_cunumpy(np.ones(1000))
    for _ in range(3):
        with budget.phase("step"):
            with budget.phase("solve"):
                state = state.astype(np.float64)
            xp.to_numpy(state)
        with budget.phase("output"):
            xp.to_numpy(state)
    budget.require("step", allow={})
    budget.require("output", allow={"to_host": {"max_count": 3}})
    return budget


def test_a_budget_writes_every_format_of_the_plugin(device_space):
    budget = broken_budget()
    report = json.loads(budget.report("json"))
    assert report["format"] == "cunumpy-report" and report["version"] == 3
    assert report["budget"]["verdict"] == "broken"
    assert report["budget"]["checked"] and report["budget"]["file"] is None
    assert [phase["name"] for phase in report["phases"]] == ["step", "solve", "output"]
    step = next(p for p in report["phases"] if p["name"] == "step")
    assert step["broken"] and step["calls"] == 3 and step["kinds"]["to_host"]["count"] == 3
    # The process's one region tree: other tests' regions are there too.
    paths = {r["path"]: r for r in report["regions"][1:]}
    assert paths["step/solve"]["calls"] == 3 and paths["output"]["calls"] == 3

    text = budget.report("text")
    assert text.startswith("cunumpy transfer report: ")
    # Settings of the plugin only are not offered to a library's budget.
    for plugin_only in ("CUNUMPY_REPORT", "CUNUMPY_ADVISE", "CUNUMPY_BUDGET"):
        assert plugin_only not in without_paths(text), text
    assert "budget: BROKEN, 1 broken rule(s)" in text
    assert "phase 'step' (3 calls); rule: " in text

    summary = budget.report("summary")
    assert summary.startswith("cunumpy: ") and "cunumpy: budget: BROKEN" in summary
    assert "CUNUMPY_REPORT" not in without_paths(summary), summary

    (root,) = json.loads(budget.report("hatchet"))
    assert root["frame"] == {"name": "program", "type": "region"}
    children = {child["frame"]["name"]: child for child in root["children"]}
    assert {"step", "output"} <= set(children)
    (solve,) = [child for child in children["step"]["children"]
                if child["frame"]["name"] == "solve"]
    assert solve["frame"]["name"] == "solve" and solve["metrics"]["calls"] == 3

    # The report without a format, and the message of check(), are the
    # text report: every phase's events, the broken rules, all of it.
    assert without_elapsed(budget.report()) == without_elapsed(text)
    with pytest.raises(AssertionError) as failed:
        budget.check()
    assert without_elapsed(str(failed.value)) == without_elapsed(text)
    for phase in ("step", "solve", "output"):
        assert f"\nphase '{phase}' (3 calls); " in text, text
    assert "\nbroken rules (1):\n  phase 'step': to_host is not allowed" in text, text


def test_a_budget_without_rules_has_no_verdict(device_space):
    budget = xp.profiling.TransferBudget()
    with budget.phase("step"):
        xp.to_numpy(xp.to_cunumpy(np.ones(10)))
    assert json.loads(budget.report("json"))["budget"]["verdict"] == "none"
    assert "budget: none (the TransferBudget has no rule)" in budget.report("text")


def test_a_budget_writes_sarif_and_junit(device_space, monkeypatch):
    """The copy that broke a rule, on this file's line (relative to
    CUNUMPY_SOURCE_ROOT) in the SARIF and in a failing JUnit case; a budget
    without rules is an error, not a clean file."""
    import xml.etree.ElementTree as ElementTree

    monkeypatch.setenv("CUNUMPY_SOURCE_ROOT", str(REPOSITORY))
    budget = broken_budget()
    sarif = json.loads(budget.report("sarif"))
    assert sarif["version"] == "2.1.0"
    (run,) = sarif["runs"]
    errors = [r for r in run["results"] if r["level"] == "error"]
    assert [r["ruleId"] for r in errors] == ["step/to_host"], errors
    location = errors[0]["locations"][0]["physicalLocation"]
    source = pathlib.Path(__file__).read_text().splitlines()
    step_copy = 1 + next(i for i, line in enumerate(source)
                         if line.strip() == "xp.to_numpy(state)")
    assert location["artifactLocation"] == {
        "uri": "tests/python/test_reports.py", "uriBaseId": "SRCROOT"}, location
    assert location["region"]["startLine"] == step_copy, location

    suite = ElementTree.fromstring(budget.report("junit")).find("testsuite")
    failed = {case.get("name"): case.find("failure").text
              for case in suite.iter("testcase")
              if case.find("failure") is not None}
    assert list(failed) == ["phase 'step': to_host"], failed
    assert f"tests/python/test_reports.py:{step_copy}: " in \
        failed["phase 'step': to_host"], failed

    unchecked = xp.profiling.TransferBudget()
    (run,) = json.loads(unchecked.report("sarif"))["runs"]
    assert [(r["ruleId"], r["level"]) for r in run["results"]] == \
        [("cunumpy/not-checked", "error")], run["results"]
    assert "the TransferBudget has no rule" in run["results"][0]["message"]["text"]


def test_outside_mpi_the_job_is_the_process(device_space):
    """Without MPI initialized, job_report(format) is report(format) and
    job_check() is check(): the process' own, never an error (under MPI:
    tests/plugin/test_mpi_job_check.py, plugin.job_check_over_mpi*)."""
    budget = broken_budget()
    job, own = (json.loads(text) for text in
                (budget.job_report(format="json"), budget.report("json")))
    assert "job" not in job and job["budget"] == own["budget"], job["budget"]
    assert budget.job_report(format="summary") == budget.report("summary")
    with pytest.raises(AssertionError) as error:
        budget.job_check()
    with pytest.raises(AssertionError) as own_error:
        budget.check()
    assert without_elapsed(str(error.value)) == without_elapsed(str(own_error.value))
    with pytest.raises(ValueError, match="'csv'"):
        budget.job_report("csv")
    kept = xp.profiling.TransferBudget()
    kept.require("step", optional=True)
    kept.job_check()


def test_an_unknown_format_names_the_formats():
    budget = xp.profiling.TransferBudget()
    with pytest.raises(ValueError) as error:
        budget.report("csv")
    message = str(error.value)
    assert "'csv'" in message
    for name in ("'text'", "'summary'", "'json'", "'hatchet'", "'sarif'",
                 "'junit'"):
        assert name in message, message


def close(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    return a == b


def test_cunumpy_report_merges_a_library_report_into_the_same_tree(device_space, tmp_path):
    budget = broken_budget()
    # One after the other: only the run's elapsed time moves in between.
    report_text = budget.report("json")
    tree = json.loads(budget.report("hatchet"))
    path = tmp_path / "report.json"
    path.write_text(report_text)

    run = subprocess.run([REPORT_TOOL, "--json", str(tmp_path / "merged.json"),
                          "--format", "hatchet", "-o", str(tmp_path / "tree.json"),
                          str(path)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    merged = json.loads((tmp_path / "merged.json").read_text())
    assert merged["job"]["ranks"] == [[0, 0]]
    assert merged["budget"]["violations"][0]["phase"] == "step"
    expected = json.loads((tmp_path / "tree.json").read_text())

    def compare(ours, theirs, where):
        assert ours["frame"] == theirs["frame"], where
        assert ours.get("metadata") == theirs.get("metadata"), where
        assert set(ours["metrics"]) == set(theirs["metrics"]), where
        for name, value in theirs["metrics"].items():
            if where == "program" and name.startswith("time"):
                # The root's time is the elapsed time, read at each report.
                assert abs(ours["metrics"][name] - value) < 1.0, (where, name)
            else:
                assert close(ours["metrics"][name], value), (where, name, ours["metrics"][name], value)
        assert len(ours["children"]) == len(theirs["children"]), where
        for mine, other in zip(ours["children"], theirs["children"]):
            compare(mine, other, where + "/" + other["frame"]["name"])

    assert len(tree) == len(expected) == 1
    compare(tree[0], expected[0], "program")


IDENTITY_PROGRAM = """
import json, os, sys, time
import numpy as np
import cunumpy as xp
budget = xp.profiling.TransferBudget()
with budget.phase("step"):
    xp.to_numpy(xp.to_device(np.arange(5.0)))
# The id of a run without a launcher holds the second it was read in, and
# the program may change its environment: the run is the one the process
# started as.
time.sleep(1.5)
os.environ["CUNUMPY_LABEL"] = "changed later"
with open(sys.argv[1], "w") as file:
    file.write(budget.report("json"))
"""


def test_the_plugin_and_a_budget_report_one_identity_of_the_run(tmp_path):
    """One reader of the run's identity: in a process under the plugin, the
    plugin's report (its identity read when Kokkos started) and a budget's
    (asked for later) name the same run, rank, size and label."""
    try:
        plugin = importlib.import_module("cunumpy.plugin").path()
    except FileNotFoundError as error:
        pytest.skip(str(error))
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith(("CUNUMPY_", "KOKKOS_"))}
    environment.update(PYTHONPATH=os.pathsep.join(sys.path),
                       KOKKOS_TOOLS_LIBS=plugin, KOKKOS_PROFILE_LIBRARY=plugin,
                       CUNUMPY_REPORT=str(tmp_path / "plugin.json"),
                       CUNUMPY_DEVICE_SPACES="FakeDevice",
                       CUNUMPY_LABEL="one reader")
    done = subprocess.run(
        [sys.executable, "-c", IDENTITY_PROGRAM, str(tmp_path / "budget.json")],
        capture_output=True, text=True, env=environment, timeout=300)
    assert done.returncode == 0, done.stderr
    plugin_run = json.loads((tmp_path / "plugin.json").read_text())["run"]
    budget_run = json.loads((tmp_path / "budget.json").read_text())["run"]
    assert plugin_run["id"].startswith("local:"), plugin_run
    assert plugin_run["label"] == "one reader", plugin_run
    # When each was written; when the process started, read twice.
    plugin_run.pop("ended"), budget_run.pop("ended")
    assert budget_run.pop("started") == pytest.approx(plugin_run.pop("started"), abs=0.02)
    assert budget_run == plugin_run
