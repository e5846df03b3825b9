"""CUNUMPY_FLUSH_THREAD=1: a thread of the plugin's own gives the queued
events to the report while the program runs. The report must be the same
event for event as without it, across forks and an exit without
Kokkos::finalize; a bad value is one line and no thread. CUNUMPY_QUEUE_KIB:
a thread gives its events to the report after fewer of them, for the same
report; the report's `flushes` says how often the program's threads
stopped for it, and for how long."""

import re

from plugin_helpers import one_warning, shown

# Enough events that the queues fill many times over (about 36 words a step
# against 4096 a queue): the flush thread flushes while the step runs.
MANY_STEPS = ["--steps", "20000", "--size", "1000", "--probes", "3"]
# Advice keeps a finding whose estimated saving over the run reaches 1 ms
# by default: a saving measured near it comes and goes between two runs
# with the same events. Reports compared event for event keep every one.
EVERY_FINDING = {"CUNUMPY_ADVISE_MIN_SAVING_US": "0"}


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
                       CUNUMPY_FLUSH_THREAD=value, **EVERY_FINDING)
        assert run.status == 0, f"the run ends well\n{run}"
        reports[value] = essentials(case.json(name, run))
    assert reports["0"]["transfers"] == 64001 and not reports["0"]["ok"], \
        f"every probe counted, and each breaks a rule\n{shown(reports['0'])}"
    assert reports["1"] == reports["0"], \
        f"the same report\n{shown(reports['0'])}\n{shown(reports['1'])}"


def test_queue_kib_report_is_the_same(case, budget):
    """A queue of 1 KiB instead of 32 gives the same report; its threads
    flush about 32 times as often (a full queue's stops are counted and
    timed in `flushes`), and the flush thread's, when on, replace them."""
    reports, flushes = {}, {}
    for name, settings in (("default", {}),
                           ("small", {"CUNUMPY_QUEUE_KIB": "1"}),
                           ("thread", {"CUNUMPY_QUEUE_KIB": "1",
                                       "CUNUMPY_FLUSH_THREAD": "1"})):
        file = f"report-{name}.json"
        run = case.run(MANY_STEPS, CUNUMPY_REPORT=file, CUNUMPY_BUDGET=budget,
                       **settings, **EVERY_FINDING)
        assert run.status == 0, f"the run ends well\n{run}"
        report = case.json(file, run)
        reports[name] = essentials(report)
        flushes[name] = report["flushes"]
    assert reports["small"] == reports["default"], \
        f"the same report\n{shown(reports['default'])}\n" \
        f"{shown(reports['small'])}"
    assert reports["thread"] == reports["default"], \
        f"the same report\n{shown(reports['thread'])}"
    default, small = flushes["default"], flushes["small"]
    assert default["queue_kib"] == 32 and small["queue_kib"] == 1, \
        f"{shown(flushes)}"
    # 20000 steps of about 36 words: about 175 flushes of a full 32 KiB
    # queue, 32 times as many of a 1 KiB one.
    assert 100 <= default["full_queue"] <= 400, f"{shown(flushes)}"
    assert small["full_queue"] >= 20 * default["full_queue"], \
        f"{shown(flushes)}"
    for one in (default, small):
        assert 0 < one["longest_seconds"] <= one["full_queue_seconds"], \
            f"timed\n{shown(flushes)}"
        assert not one["flush_thread"] and one["flush_thread_flushes"] == 0
    thread = flushes["thread"]
    assert thread["flush_thread"] and thread["flush_thread_flushes"] > 0, \
        f"{shown(flushes)}"


def test_queue_kib_of_ranks(case):
    """One of several MPI ranks queues 8 KiB by default, whatever the
    launcher; CUNUMPY_QUEUE_KIB still decides; a job of one rank keeps 32."""
    for variables, kib in (({"OMPI_COMM_WORLD_SIZE": "4"}, 8),
                           ({"PMI_SIZE": "2"}, 8),
                           ({"SLURM_NTASKS": "16"}, 8),
                           ({"OMPI_COMM_WORLD_SIZE": "1"}, 32),
                           ({"PMI_SIZE": "64", "CUNUMPY_QUEUE_KIB": "32"}, 32),
                           ({"OMPI_COMM_WORLD_SIZE": "4",
                             "CUNUMPY_QUEUE_KIB": "2"}, 2)):
        run = case.run(MANY_STEPS, CUNUMPY_REPORT="report.json", **variables)
        assert run.status == 0 and not run.stderr.strip(), f"{run}"
        flushes = case.json("report.json", run)["flushes"]
        assert flushes["queue_kib"] == kib, f"{variables}\n{shown(flushes)}"
        # about 175 flushes a run at 32 KiB: four times as many at 8
        assert flushes["full_queue"] >= 100 * 32 // kib, \
            f"{variables}\n{shown(flushes)}"


def test_queue_kib_bad_value(case):
    """A size outside 1..32 KiB is named in one line; the run goes on with
    32."""
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_QUEUE_KIB="64")
    one_warning(run, r'^cunumpy: CUNUMPY_QUEUE_KIB="64" is not an integer in '
                     r"\[1, 32\]; using 32$")
    report = case.json("report.json", run)
    assert report["complete"] and report["flushes"]["queue_kib"] == 32, \
        f"{shown(report['flushes'])}"


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
