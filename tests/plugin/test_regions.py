"""Regions as the plugin reports and checks them: a region is a phase when
a rule names it; the regions libraries push inside it (Belos, Tpetra,
Kokkos Kernels, Teuchos timers) are transparent, so their copies break the
phase's rule; the report is a tree of region paths."""

import re

import pytest

from plugin_helpers import VIOLATION_STATUS, count, phase, region, shown

pytestmark = pytest.mark.program("tool_events")

# The text report's line for regions it does not list, which no region
# name or path holds.
FOLDED = r"\n *\([0-9]+ regions? without transfers not listed; "

STEPS = 10


def run_solves(case, plugin, budget_text, **variables):
    run = case.run(["--library-regions"], KOKKOS_TOOLS_LIBS=plugin,
                   KOKKOS_PROFILE_LIBRARY=plugin,
                   CUNUMPY_BUDGET=case.write("budget.toml", budget_text),
                   **variables)
    return run


def test_library_regions(case, plugin):
    """A rule on belos_solve that allows nothing: the copies Belos and
    Tpetra make in their own regions inside it break it."""
    run = run_solves(case, plugin, "[phases.belos_solve]\n",
                     CUNUMPY_REPORT="report.json", CUNUMPY_ON_VIOLATION="exit")
    assert run.status == VIOLATION_STATUS, \
        f"the copies inside library regions break the rule\n{run}"
    assert ("phase 'belos_solve': to_device is not allowed, got 20 event(s)"
            in run.stderr), f"stderr names the phase and the count\n{run}"
    report = case.json("report.json", run)
    solve = phase(report, "belos_solve")
    assert (solve["calls"] == STEPS and count(solve, "to_device") == 2 * STEPS
            and solve["broken"]), shown(solve)
    inner = region(report, "belos_solve/Belos: Operation Op*x")
    assert (inner["calls"] == STEPS and not inner["is_phase"] and
            inner["phase"] == "belos_solve" and
            count(inner, "to_device") == STEPS), shown(inner)
    outer = region(report, "belos_solve")
    assert (outer["transfers"] == 0 and
            outer["inclusive_transfers"] == 2 * STEPS), \
        f"own and inclusive counts of the node\n{shown(outer)}"


def test_region_tree_text(case, plugin):
    run = run_solves(case, plugin,
                     "[phases.belos_solve]\nallow.to_device = {}\n",
                     CUNUMPY_REPORT="report.txt")
    assert run.status == 0, f"{run}"
    text = case.read("report.txt")
    for needle in [
            "regions (own: in the region itself; all: with the regions it "
            "contains):",
            "'belos_solve' (10 calls, ",
            ") [phase]: no transfers; all: 20 to_device (160 bytes)",
            "  'Belos: Operation Op*x' (10 calls, ",
            "): 10 to_device (80 bytes); counts in phase 'belos_solve'",
            "phase 'belos_solve' (10 calls); rule: allow to_device"]:
        assert needle in text, f"the text report has: {needle}\n{text}"


def test_regions_without_transfers_folded(case, plugin):
    """Regions without a transfer are one line of the text report, unless
    CUNUMPY_REPORT_ALL_REGIONS=1; the JSON has them all."""
    program_args = dict(KOKKOS_TOOLS_LIBS=plugin,
                        KOKKOS_PROFILE_LIBRARY=plugin)
    run = case.run(["--library-regions"], CUNUMPY_REPORT="report.txt",
                   CUNUMPY_BUDGET=case.write(
                       "budget.toml", "[phases.belos_solve]\noptional = true\n"
                       "allow.to_device = {}\n"),
                   **program_args)
    text = case.read("report.txt")
    assert not re.search(FOLDED, text), \
        f"every region of tool_events copies\n{text}"
    run = case.run(["--steps", "3"], CUNUMPY_REPORT="report.txt",
                   **program_args)
    text = case.read("report.txt")
    assert "'step' (3 calls" in text, f"{text}\n{run}"
    run = case.run(["--steps", "3", "--empty-regions", "12"],
                   CUNUMPY_REPORT="report.txt", **program_args)
    text = case.read("report.txt")
    assert "(12 regions without transfers not listed; " \
        "CUNUMPY_REPORT_ALL_REGIONS=1 lists them" in text, f"{text}\n{run}"
    run = case.run(["--steps", "3", "--empty-regions", "12"],
                   CUNUMPY_REPORT="report.txt",
                   CUNUMPY_REPORT_ALL_REGIONS="1", **program_args)
    text = case.read("report.txt")
    assert "'empty 11' (1 call" in text and not re.search(FOLDED, text), text


def test_region_lists_are_capped(case, plugin):
    """A message that lists region names shows the closest ten and says how
    many more ran: a program of thousands of regions gets one short line."""
    run = case.run(["--steps", "3", "--empty-regions", "300"],
                   KOKKOS_TOOLS_LIBS=plugin, KOKKOS_PROFILE_LIBRARY=plugin,
                   CUNUMPY_BUDGET=case.write(
                       "typo.toml", "[phases.empty_1]\nallow.to_device = {}\n"))
    assert run.status == 0, f"a broken rule does not change the status\n{run}"
    lines = [line for line in run.cunumpy_lines()
             if "regions and phases that ran:" in line]
    assert len(lines) == 1, f"one line lists the regions\n{run}"
    names = lines[0].split("ran: ", 1)[1]
    assert names.startswith("'empty 1', "), \
        f"the closest name first\n{lines[0]}"
    # 301 regions ran: 'step' and the 300 empty ones ('output' comes every
    # fifth step).
    assert names.count("'") == 20 and names.endswith(" and 291 more"), \
        f"ten names, then the count of the others\n{lines[0]}"
