"""Trilinos' Tpetra and Belos from Debian (trilinos-all-dev) under MPI, with
Tpetra's regions on (TPETRA_USE_KOKKOS_PROFILING=1): conjugate gradients on
a 1-D Laplacian (tests/programs/tpetra_belos_cg.cpp). Tpetra 13.2 pops more
regions than it pushes inside fillComplete: "setup" closes early, and the
program's upload after it counts outside it. A budget the program keeps
passes, with one note naming Tpetra; one that the upload would break in
"setup" is incomplete, never ok. The plugin merges the ranks' reports over
Trilinos' MPI into one report of the job, which the ranks' own reports
merged by cunumpy-report equal but for times."""

import re

import pytest

from plugin_helpers import VIOLATION_STATUS, count, phase, shown
from report_tool_helpers import comparable

pytestmark = [pytest.mark.program("tpetra_belos_cg"),
              pytest.mark.needs("device"), pytest.mark.ctest(PROCESSORS=2)]

# "setup" allows its upload, "solve" (Belos and Tpetra) nothing, "output"
# its download.
KEPT = ("[phases.setup]\nallow.to_device = {}\n"
        "[phases.solve]\n"
        "[phases.output]\nallow.to_host = {}\n")


def run_ranks(case, mpirun, ranks, rules, report="report-%r.json"):
    command = [mpirun, "--allow-run-as-root", "--oversubscribe", "-np",
               str(ranks), case.program]
    run = case.run(command=command, TPETRA_USE_KOKKOS_PROFILING="1",
                   CUNUMPY_BUDGET=case.write("budget.toml", rules),
                   CUNUMPY_REPORT=report, CUNUMPY_ON_VIOLATION="exit")
    if "%r" not in report:
        return run, [case.json(report, run)]
    reports = [case.json(f"report-{rank}.json", run) for rank in range(ranks)]
    return run, reports


def test_tpetra_belos_cg(case, mpirun, report_tool):
    for ranks in (2, 4):
        run, reports = run_ranks(case, mpirun, ranks, KEPT)
        assert run.status == 0 and "converged" in run.stdout, \
            f"{ranks} ranks keep their budget\n{run}"
        for report in reports:
            assert report["budget"]["verdict"] == "ok", \
                shown(report["budget"])
            setup = phase(report, "setup")
            assert count(setup, "to_device") == 0, \
                f"the upload counted outside 'setup', closed early\n" \
                f"{shown(setup)}"
            notes = [note for note in report["budget"]["notes"]
                     if "popped where none was open" in note]
            assert (len(notes) == 1 and
                    re.search(r"by libtrilinos_tpetra\.so[.0-9]* [0-9]+ times",
                              notes[0])), shown(report["budget"])
        lines = [line for line in run.cunumpy_lines()
                 if "popped where none was open" in line]
        assert (len(lines) == 1 and "libtrilinos_tpetra.so" in lines[0]), \
            f"rank 0's note of the job names Tpetra\n{run}"

    # One report of the 4 ranks' job, merged over MPI: the offline merge of
    # the ranks' own reports (the run above), but for times.
    run, (job,) = run_ranks(case, mpirun, 4, KEPT, report="job.json")
    assert run.status == 0, run
    assert (job["job"]["ranks"] == [[0, 3]] and job["job"]["missing"] == [] and
            job["budget"]["verdict"] == "ok" and
            job["job"]["unbalanced_pops"] == [[0, 3]] and
            count(phase(job, "setup"), "to_device") == 0), shown(job["job"])
    merged = case.run(command=[report_tool, "--json", "offline.json"] +
                      [case.path(f"report-{rank}.json") for rank in range(4)])
    assert merged.status == 0, merged
    ours, theirs = comparable(job), comparable(case.json("offline.json",
                                                         merged))
    assert ours == theirs, {name: (ours.get(name), theirs.get(name))
                            for name in set(ours) | set(theirs)
                            if ours.get(name) != theirs.get(name)}

    # "setup" allows no upload: the one after its early pop may be its own.
    run, reports = run_ranks(case, mpirun, 2,
                             KEPT.replace("allow.to_device = {}\n", ""))
    assert run.status == VIOLATION_STATUS, f"not ok\n{run}"
    job_run, (job,) = run_ranks(case, mpirun, 2,
                                KEPT.replace("allow.to_device = {}\n", ""),
                                report="job-incomplete.json")
    assert (job_run.status == VIOLATION_STATUS and
            job["budget"]["verdict"] == "incomplete" and
            job["job"]["incomplete"] == [[0, 1]]), shown(job["job"])
    for report in reports:
        assert (report["budget"]["verdict"] == "incomplete" and
                any("phase 'setup' may be one, and 1 to_device event(s)"
                    in loss for loss in report["losses"])), \
            shown(report["losses"])
