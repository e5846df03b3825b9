"""Trilinos' Tpetra and Belos from Debian (trilinos-all-dev) under MPI, with
Tpetra's regions on (TPETRA_USE_KOKKOS_PROFILING=1): conjugate gradients on
a 1-D Laplacian (tests/programs/tpetra_belos_cg.cpp). Tpetra 13.2 pops more
regions than it pushes inside fillComplete: "setup" closes early, and the
program's upload after it counts outside it. A budget the program keeps
passes, with one note naming Tpetra; one that the upload would break in
"setup" is incomplete, never ok."""

import re

from plugin_helpers import VIOLATION_STATUS, count, phase, shown

# "setup" allows its upload, "solve" (Belos and Tpetra) nothing, "output"
# its download.
KEPT = ("[phases.setup]\nallow.to_device = {}\n"
        "[phases.solve]\n"
        "[phases.output]\nallow.to_host = {}\n")


def run_ranks(case, mpirun, ranks, rules):
    command = [mpirun, "--allow-run-as-root", "--oversubscribe", "-np",
               str(ranks), case.program]
    run = case.run(command=command, TPETRA_USE_KOKKOS_PROFILING="1",
                   CUNUMPY_BUDGET=case.write("budget.toml", rules),
                   CUNUMPY_REPORT="report-%r.json",
                   CUNUMPY_ON_VIOLATION="exit")
    reports = [case.json(f"report-{rank}.json", run) for rank in range(ranks)]
    return run, reports


def test_tpetra_belos_cg(case, mpirun):
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
        assert (len(lines) == ranks and
                all("libtrilinos_tpetra.so" in line for line in lines)), \
            f"one note per rank names Tpetra\n{run}"

    # "setup" allows no upload: the one after its early pop may be its own.
    run, reports = run_ranks(case, mpirun, 2,
                             KEPT.replace("allow.to_device = {}\n", ""))
    assert run.status == VIOLATION_STATUS, f"not ok\n{run}"
    for report in reports:
        assert (report["budget"]["verdict"] == "incomplete" and
                any("phase 'setup' may be one, and 1 to_device event(s)"
                    in loss for loss in report["losses"])), \
            shown(report["losses"])
