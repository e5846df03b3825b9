"""Regions popped where none was open (tests/programs/unbalanced_regions.cpp,
as Tpetra does): a budget the program keeps wherever the events after an
early pop count passes, with one note naming who popped; one it may break
there is incomplete."""

import os

import pytest

from plugin_helpers import VIOLATION_STATUS, count, phase, shown

pytestmark = pytest.mark.program("unbalanced_regions")

# "setup" copies to the device, "solve" to the host: the rules they keep.
KEPT = ("[phases.setup]\nallow.to_device = {}\n"
        "[phases.solve]\nallow.to_host = {}\n")
NOTE = "regions were popped where none was open, by "


def run_unbalanced(case, arguments, rules):
    run = case.run(arguments, CUNUMPY_REPORT="report.json",
                   CUNUMPY_BUDGET=case.write("budget.toml", rules),
                   CUNUMPY_ON_VIOLATION="exit")
    return run, case.json("report.json", run)


def notes_of(run):
    return [line for line in run.cunumpy_lines() if NOTE in line]


def test_unbalanced_pop_of_a_region_pushed_before_init(case):
    # Nothing between the last pop and the pop on an empty stack: ok,
    # with one note naming the program.
    run, report = run_unbalanced(case, ["before-init"], KEPT)
    assert run.status == 0 and report["budget"]["verdict"] == "ok", \
        f"nothing can have moved\n{run}"
    program = os.path.basename(case.program)
    assert (len(notes_of(run)) == 1 and
            f"by {program} once" in notes_of(run)[0]), run
    assert any(NOTE in note for note in report["budget"]["notes"]), \
        shown(report["budget"])
    # A copy between the last pop and it may be the setup's, which
    # forbids it.
    run, report = run_unbalanced(case, ["before-init", "after"], KEPT)
    assert (run.status == VIOLATION_STATUS and
            report["budget"]["verdict"] == "incomplete"), run
    assert any("phase 'setup' may be one, and 1 to_host event(s)" in loss
               for loss in report["losses"]), shown(report["losses"])
    # Allowed in every phase it may belong to: ok.
    run, report = run_unbalanced(
        case, ["before-init", "after"],
        KEPT.replace("allow.to_device = {}\n",
                     "allow.to_device = {}\nallow.to_host = {}\n"))
    assert run.status == 0 and report["budget"]["verdict"] == "ok", run


def test_unbalanced_pops_of_a_library(case):
    # As Tpetra: a library call closes "setup" early and pops three times on
    # an empty stack; the program's pop of "setup" then finds none open.
    program = os.path.basename(case.program)
    note = f"by libunbalanced_library.so 3 times, {program} once"
    for window in ([], ["window"]):
        run, report = run_unbalanced(case, ["library", *window], KEPT)
        assert run.status == 0 and report["budget"]["verdict"] == "ok", \
            f"setup allows the copies that may be its own\n{run}"
        assert len(notes_of(run)) == 1 and note in notes_of(run)[0], run
        assert count(phase(report, "setup"), "to_device") == 1, \
            shown(phase(report, "setup"))
    # At most one copy in "setup": the two after its early pop may be its.
    strict = KEPT.replace("allow.to_device = {}",
                          "allow.to_device = { max_count = 1 }")
    run, report = run_unbalanced(case, ["library"], strict)
    assert run.status == 0 and report["budget"]["verdict"] == "ok", \
        f"no copy after the early pop: nothing moved\n{run}"
    run, report = run_unbalanced(case, ["library", "window"], strict)
    assert (run.status == VIOLATION_STATUS and
            report["budget"]["verdict"] == "incomplete"), run
    assert any("phase 'setup' may be one, and 2 to_device event(s)" in loss
               for loss in report["losses"]), shown(report["losses"])
