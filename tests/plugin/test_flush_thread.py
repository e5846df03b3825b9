"""CUNUMPY_FLUSH_THREAD=1: a thread of the plugin's own gives the queued
events to the report while the program runs. The report must be the same
event for event as without it, across forks and an exit without
Kokkos::finalize; a bad value is one line and no thread."""

import re

from plugin_helpers import one_warning, shown

# Enough events that the queues fill many times over (about 36 words a step
# against 4096 a queue): the flush thread flushes while the step runs.
MANY_STEPS = ["--steps", "20000", "--size", "1000", "--probes", "3"]


def essentials(report):
    """What the events decide in a report: counts, bytes and sites per
    kind, the budget's verdict and phases, the losses."""
    total = report["total"]
    kinds = {kind: (value["count"], value["bytes"], value["blocking"])
             for kind, value in total["kinds"].items()}
    sites = sorted((site["site"], site["kind"], site["count"], site["bytes"])
                   for site in total["top_sites"])
    budget = report["budget"]
    phases = [(phase["name"], phase["calls"], phase["transfers"],
               phase["broken"]) for phase in report["phases"]]
    violations = [(v["phase"], v["kind"], v["actual"],
                   [(e["site"], e["count"], e["bytes"]) for e in v["events"]])
                  for v in budget["violations"]]
    findings = sorted((f["rule"], f["calls"]) for f in
                      report["advice"]["findings"])
    return {"transfers": total["transfers"], "syncs": total["syncs"],
            "kinds": kinds, "sites": sites, "ok": budget["ok"],
            "phases": phases, "violations": violations,
            "findings": findings, "complete": report["complete"],
            "losses": report["losses"]}


def test_flush_thread_report_is_the_same(case, budget):
    """With the flush thread on, the report holds the same events, sites
    and verdict as without it, over a run whose queues fill many times (its
    probes break the budget's 'integrate' phase 60000 times)."""
    reports = {}
    for value in ("0", "1"):
        name = f"report{value}.json"
        run = case.run(MANY_STEPS, CUNUMPY_REPORT=name, CUNUMPY_BUDGET=budget,
                       CUNUMPY_FLUSH_THREAD=value)
        assert run.status == 0, f"the run ends well\n{run}"
        reports[value] = essentials(case.json(name, run))
    assert reports["0"]["transfers"] == 64001 and not reports["0"]["ok"], \
        f"every probe counted, and each breaks a rule\n{shown(reports['0'])}"
    assert reports["1"] == reports["0"], \
        f"the same report\n{shown(reports['0'])}\n{shown(reports['1'])}"


def test_flush_thread_exit_without_finalize(case):
    """exit() before Kokkos::finalize: the thread ends and the report is
    written once, with every event."""
    run = case.run(["--exit-without-finalize"], CUNUMPY_REPORT="report.txt",
                   CUNUMPY_FLUSH_THREAD="1")
    assert run.status == 0, f"exit(0) keeps its status\n{run}"
    text = case.read("report.txt")
    assert text.count("cunumpy transfer report:") == 1 and \
        "21 transfer(s) through cunumpy" in text, f"once, complete\n{text}"


def test_flush_thread_bad_value(case):
    """A value other than 0 or 1 is named in one line; the run goes on
    without the thread."""
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_FLUSH_THREAD="yes")
    one_warning(run, r'^cunumpy: CUNUMPY_FLUSH_THREAD="yes" is neither 0 '
                     r"nor 1; using 0 \(no flush thread\)$")
    assert case.json("report.json", run)["complete"], f"complete\n{run}"


def test_flush_thread_forked_child(case):
    """A child forked while the flush thread runs finalizes Kokkos without
    waiting for a thread it does not have, nor for a mutex that thread
    held; the parent's report has every event."""
    one_thread = {"OMP_NUM_THREADS": "1"}
    for _ in range(5):  # forks at other moments of the thread's flushes
        run = case.run(["--fork"], CUNUMPY_REPORT="report.json",
                       CUNUMPY_FLUSH_THREAD="1", timeout=60, **one_thread)
        assert run.status == 0, f"{run}"
        pid = int(re.search(r"tool_events: pid (\d+)", run.stdout).group(1))
        report = case.json("report.json", run)
        assert report["pid"] == pid and report["total"]["transfers"] == 12, \
            f"the parent's report\n{shown(report['total'])}"
