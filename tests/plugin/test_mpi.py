"""Two MPI ranks of the legacy example, each writing its own report (the
rank comes from the launcher's environment), merged by cunumpy-report."""

import os
import re
import sys

from plugin_helpers import shown


def test_mpi(case, budget, mpirun, report_tool):
    launch = [mpirun, "--allow-run-as-root", "--oversubscribe"]
    merge = [sys.executable, report_tool]
    run = case.run(command=launch + ["-np", "2", case.program],
                   CUNUMPY_REPORT="same-%r.json", CUNUMPY_BUDGET=budget)
    assert run.status == 0, f"mpirun -np 2 must succeed\n{run}"
    same = [case.path(f"same-{rank}.json") for rank in (0, 1)]
    assert all(os.path.exists(path) for path in same), \
        f"each rank writes report-<rank>.json\n{run}"
    run = case.run(command=merge + ["--check"] + same)
    if case.json("same-0.json", run)["version"] < 3:
        assert run.status == 2 and "version 2" in run.stderr, \
            f"--check needs the run id and job size of version 3\n{run}"
        run = case.run(command=merge + same)
    assert (run.status == 0 and "budget: no rank broke it" in run.stdout and
            re.search(r"phase 'integrate'.*\n  calls +100 +100 +100 ",
                      run.stdout)), \
        f"two equal ranks merge into one table\n{run}"

    # One rank with a copy added to its time step.
    command = launch + ["-np", "1", case.program, ":",
                        "-np", "1", case.program, "--copy-in-step"]
    run = case.run(command=command, CUNUMPY_REPORT="report-%r.json",
                   CUNUMPY_BUDGET=budget)
    assert run.status == 0, f"mpirun must succeed (warn mode)\n{run}"
    reports = [case.json(f"report-{rank}.json", run) for rank in (0, 1)]
    assert ([report["rank"] for report in reports] == [0, 1] and
            all(report["rank_known"] for report in reports)), \
        "each rank writes its own report with its rank"
    assert reports[0]["budget"]["ok"] and not reports[1]["budget"]["ok"], \
        "rank 1 added a copy to its time step"
    files = [case.path("report-0.json"), case.path("report-1.json")]
    run = case.run(command=merge + ["--json", "merged.json"] + files)
    assert run.status == 0, f"cunumpy-report merges\n{run}"
    table = run.stdout
    for needle in ["cunumpy-report: 2 rank(s) (0, 1)",
                   "budget: BROKEN on rank(s) 1",
                   "broken on rank(s): 1",
                   "rank 1: phase 'integrate': to_host is not allowed"]:
        assert needle in table, f"the table says: {needle}\n{table}"
    assert re.search(r"phase 'integrate'.*\n  calls +100 +100 +100 +0\n"
                     r"  to_host count +0 +50 +100 +1\n"
                     r"  to_host bytes +0 +40000000 +80000000 +1", table), \
        f"min, mean, max and the rank of the max per phase\n{table}"
    assert re.search(r"region 'integrate'.*\n  calls +100 +100 +100 +0\n"
                     r"  to_host count +0 +50 +100 +1\n", table), \
        f"and per region path that copied\n{table}"
    merged = case.json("merged.json", run)
    integrate = next(phase for phase in merged["phases"]
                     if phase["name"] == "integrate")
    assert (integrate["broken_ranks"] == [1] and
            integrate["rows"]["to_host count"] ==
            {"min": 0, "mean": 50.0, "max": 100, "max_rank": 1}), \
        f"the merged JSON\n{shown(integrate)}"
    run = case.run(command=merge + ["--check"] + files)
    assert run.status == (1 if reports[0]["version"] >= 3 else 2), \
        f"--check fails when a rank broke its budget\n{run}"
    other = case.write("other.json", "{}")
    run = case.run(command=merge + [other])
    assert run.status == 2 and "not a cunumpy plugin report" in run.stderr, \
        f"a file that is no report is refused\n{run}"
    text = case.write("report.txt",
                      "cunumpy transfer report: legacy_app (rank 0)\n")
    run = case.run(command=merge + [text])
    assert (run.status == 2 and "a text report cannot be merged: write the "
            "reports with CUNUMPY_REPORT=<file>.json" in run.stderr), \
        f"a text report is refused with what to do\n{run}"
