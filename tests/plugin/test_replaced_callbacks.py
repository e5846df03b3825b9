"""In-process tools that replace entries of Kokkos' table of callbacks, as
Trilinos' counters do (Tpetra's DeepCopyCounter, KokkosRegionCounter), with
the plugin loaded: cunumpy notices, puts itself back in front of the new
callback (which keeps working), says so once, and its report and verdict
say that events may have been lost: never ok. A replacing tool that forwards
to cunumpy is found out and nothing is lost."""

import re

import pytest

from plugin_helpers import count, shown

pytestmark = pytest.mark.program("tool_events")

STEPS = 10
BUDGET = "[phases.step]\nallow.to_device = {}\n[phases.output]\n" \
         "allow.to_device = {}\n"


def run_replacing(case, plugin, tool, mode, arguments=(), **variables):
    chain = f"{plugin};{tool}"
    run = case.run(["--replace", mode, *arguments],
                   KOKKOS_TOOLS_LIBS=chain, KOKKOS_PROFILE_LIBRARY=chain,
                   KP_TEST_TOOL_OUTPUT=case.path("last.txt"),
                   CUNUMPY_REPORT="report.json",
                   CUNUMPY_BUDGET=case.write("budget.toml", BUDGET),
                   **variables)
    assert run.status == 0 and f"tool_events: {STEPS} steps" in run.stdout, \
        f"the program runs to its end\n{run}"
    return run, case.json("report.json", run)


def counted(run, name):
    match = re.search(rf"{name} (\d+)", run.stdout)
    assert match, f"the program says what {name} counted\n{run}"
    return int(match.group(1))


def replacement_notes(run):
    """The lines that tell of a replacement when cunumpy notices it."""
    return [line for line in run.cunumpy_lines()
            if "replaced cunumpy's Kokkos Tools callback" in line and
            line.endswith("say that events may have been lost")]


def lost_copies(report):
    """The copies whose begin another tool took (the report's count)."""
    for loss in report["losses"]:
        match = re.match(r"(\d+) copy\(ies\) ended whose begin", loss)
        if match:
            return int(match.group(1))
    return 0


def check_not_ok(report, run):
    assert not report["complete"], f"the report is incomplete\n{run}"
    assert not report["budget"]["ok"], \
        f"the verdict is never ok\n{shown(report['budget'])}"
    limits = [v["limit"] for v in report["budget"]["violations"]]
    assert "events_lost" in limits, shown(report["budget"]["violations"])
    assert any("INCOMPLETE" in line and "events may be missing" in line
               for line in run.cunumpy_lines()), f"stderr says why\n{run}"


def test_deep_copy_counter(case, plugin, tool):
    run, report = run_replacing(case, plugin, tool, "deep-copy-counter")
    check_not_ok(report, run)
    notes = replacement_notes(run)
    assert len(notes) == 1 and "begin_deep_copy" in notes[0], \
        f"one line on stderr names the slot\n{run}"
    # The copies at steps 3 and 6 (after start() and stop()) went elsewhere
    # unless cunumpy noticed at the region push before them: each copy is
    # counted or counted as lost.
    assert count(report["total"], "to_device") + lost_copies(report) == \
        STEPS + 2, f"{shown(report['total'])}\n{shown(report['losses'])}"
    # The counter kept working from start() at step 3 to stop() at step 6
    # (steps 3, 4, 5 and the output of step 4): what cunumpy forwarded.
    assert counted(run, "counter") == 4, f"the other tool still counts\n{run}"


def test_region_counter(case, plugin, tool):
    run, report = run_replacing(case, plugin, tool, "region-counter",
                                ["--pause-us", "1500"])
    check_not_ok(report, run)
    notes = replacement_notes(run)
    assert len(notes) == 1 and "push_region" in notes[0], f"{run}"


def test_again(case, plugin, tool):
    """A tool that sets its callback again at every step: one line, and
    every copy either counted or counted as lost, never missing."""
    run, report = run_replacing(case, plugin, tool, "again")
    check_not_ok(report, run)
    assert len(replacement_notes(run)) == 1, f"said once\n{run}"
    # Each step's copy went to the counter only (a loss, when its end
    # reaches cunumpy) unless cunumpy noticed at the region push before it,
    # which it checks at most once a millisecond: how many of each depends
    # on the machine's speed, their sum does not.
    assert count(report["total"], "to_device") + lost_copies(report) == \
        STEPS + 2, f"{shown(report['total'])}\n{shown(report['losses'])}"
    assert counted(run, "counter") == STEPS + 2, \
        f"the counter got every copy\n{run}"


def test_chaining_replacer(case, plugin, tool):
    """A tool that keeps the callbacks it finds and forwards to them: left
    in front once found out, and nothing was lost."""
    run, report = run_replacing(case, plugin, tool, "chaining",
                                ["--pause-us", "1500"])
    assert report["complete"] and report["budget"]["ok"], \
        f"nothing lost\n{shown(report['losses'])}\n{run}"
    assert count(report["total"], "to_device") == STEPS + 2, \
        f"every copy counted once\n{shown(report['total'])}"
    assert counted(run, "chaining tool") == 9, f"from step 3 on\n{run}"
    assert any("forwards every event to cunumpy" in line
               for line in run.cunumpy_lines()), f"stderr says so\n{run}"
    last = case.tool_counts("last.txt")
    assert last["deep_copy"] == STEPS + 2 and \
        last["end_deep_copy"] == STEPS + 2, \
        f"the next tool got every copy exactly once\n{shown(last)}"


def test_exit_status(case, plugin, tool):
    run = case.run(["--replace", "deep-copy-counter"],
                   KOKKOS_TOOLS_LIBS=plugin, KOKKOS_PROFILE_LIBRARY=plugin,
                   CUNUMPY_BUDGET=case.write("budget.toml", BUDGET),
                   CUNUMPY_ON_VIOLATION="exit")
    assert run.status == 3, \
        f"CUNUMPY_ON_VIOLATION=exit fails a run that lost events\n{run}"
