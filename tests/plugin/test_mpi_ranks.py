"""MPI ranks of the legacy example, each writing its own report (the rank
comes from the launcher's environment), merged by cunumpy-report; the run
id that tells one launch's reports from a stale one's, launcher by
launcher."""

import os
import re
import shlex
import socket
import time

import pytest

from plugin_helpers import LEGACY_APP, program_ran, shown

pytestmark = [LEGACY_APP, pytest.mark.needs("device")]


@pytest.mark.ctest(PROCESSORS=2)
def test_mpi(case, budget, mpirun, report_tool):
    launch = [mpirun, "--allow-run-as-root", "--oversubscribe"]
    merge = [report_tool]
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
    assert not os.path.exists(case.path("job.json")), "no file of the job"
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
    row = integrate["over_ranks"]["rows"]["to_host count"]
    assert (integrate["broken_ranks"] == [[1, 1]] and
            {key: row[key] for key in ("min", "mean", "max", "max_rank")} ==
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


def free_port():
    """A TCP port no one listens on now."""
    with socket.socket() as listener:
        listener.bind(("", 0))
        return listener.getsockname()[1]


@pytest.mark.ctest(PROCESSORS=2)
def test_mpich(case, budget, mpiexec_hydra, report_tool):
    """MPICH's mpiexec (hydra; Intel MPI's and MVAPICH's mpiexec are hydra
    too) names no launch in the ranks' environment, only PMI_RANK and
    PMI_SIZE: its ranks share the control port on their proxy's command
    line. One launch's reports pass --check; a stale report of an earlier
    launch on the same port (MPIEXEC_PORT_RANGE, as a firewall's port range
    makes it) is refused, being written before this launch began."""
    os.makedirs(case.path("reports"))
    check = [report_tool, "--check", case.path("reports")]
    port = free_port()
    variables = dict(CUNUMPY_REPORT="reports/report-%r.json",
                     CUNUMPY_BUDGET=budget,
                     MPIEXEC_PORT_RANGE=f"{port}:{port}")
    run = case.run(command=[mpiexec_hydra, "-n", "2", case.program],
                   **variables)
    assert run.status == 0, f"mpiexec -n 2 must succeed\n{run}"
    runs = [case.json(f"reports/report-{rank}.json", run)["run"]
            for rank in (0, 1)]
    assert (runs[0]["id"] == runs[1]["id"] and
            re.fullmatch(rf"hydra:.+:{port}", runs[0]["id"]) and
            not runs[0]["id_unique"] and runs[0]["size"] == 2), \
        f"the ranks share the launch's control port\n{shown(runs)}"
    run = case.run(command=check)
    assert run.status == 0 and "check: passed" in run.stdout, \
        f"one launch's reports are one run\n{run}"

    run = case.run(command=[mpiexec_hydra, "-n", "1", case.program, ":",
                            "-n", "1", "true"], **variables)
    assert run.status == 0, f"the second launch must succeed\n{run}"
    stale = case.json("reports/report-1.json", run)["run"]
    assert stale == runs[1], "rank 1 wrote no report this time"
    run = case.run(command=check)
    assert (run.status == 2 and "different launches of run 'hydra:" in
            run.stderr and "1 stale report(s), written before the process of "
            in run.stderr and run.stderr.count("report-1.json") == 1), \
        f"rank 1's report of the earlier launch is refused\n{run}"


# What launchers without a launch id of their own set for each rank, from
# their sources and documentation: MVAPICH's mpirun_rsh (its mpispawn sets
# MPIRUN_ID, the pid of mpirun_rsh), and PMI's rank and size alone (hydra's
# ranks whose proxy cannot be read).
LAUNCHERS = {
    "mpirun_rsh": (lambda rank: {"MV2_COMM_WORLD_RANK": rank,
                                 "MV2_COMM_WORLD_SIZE": 2, "PMI_ID": rank,
                                 "MPIRUN_ID": 31337, "MPIRUN_NPROCS": 2},
                   "mpirun_rsh:31337"),
    "mpirun_rsh, MPIRUN_ID empty": (
        lambda rank: {"MV2_COMM_WORLD_RANK": rank, "MV2_COMM_WORLD_SIZE": 2,
                      "MPIRUN_ID": ""},
        "launcher:MV2_COMM_WORLD_RANK"),
    "PMI": (lambda rank: {"PMI_RANK": rank, "PMI_SIZE": 2},
            "launcher:PMI_RANK"),
}


def launch(case, name, ranks, variables_of_rank, **variables):
    """Runs `ranks` of one launch, as a launcher does: every process starts
    before any of them ends (each waits for the others' files)."""
    lines = []
    for rank in ranks:
        others = " ".join(shlex.quote(f"{name}.{other}.ready")
                          for other in ranks if other != rank)
        setting = " ".join(f"{key}={shlex.quote(str(value))}"
                           for key, value in variables_of_rank(rank).items())
        lines.append(
            f"(touch {shlex.quote(f'{name}.{rank}.ready')}; "
            f"for other in {others}; do while [ ! -e \"$other\" ]; do "
            f"sleep 0.01; done; done; "
            f"exec env {setting} {shlex.quote(case.program)}) & "
            f"pid{rank}=$!")
    lines.append("status=0")
    lines.extend(f"wait $pid{rank} || status=$?" for rank in ranks)
    lines.append(f"rm -f {shlex.quote(name)}.*.ready; exit $status")
    return case.run(command=["sh", "-c", "\n".join(lines)], **variables)


def test_launchers_without_a_launch_id(case, budget, report_tool):
    """Launchers that name no launch in the ranks' environment: the ranks of
    one launch are one run; a stale report of an earlier launch, which ended
    before this one began, is refused."""
    for number, (launcher, (variables_of_rank, run_id)) in \
            enumerate(LAUNCHERS.items()):
        reports = case.path(f"reports-{number}")
        os.makedirs(reports)
        variables = dict(CUNUMPY_REPORT=f"{reports}/report-%r.json",
                         CUNUMPY_BUDGET=budget)
        check = [report_tool, "--check", reports]
        run = launch(case, f"launch-{number}", [0, 1], variables_of_rank,
                     **variables)
        assert run.status == 0, f"{launcher}: both ranks run\n{run}"
        runs = [case.json(f"reports-{number}/report-{rank}.json", run)["run"]
                for rank in (0, 1)]
        assert ([entry["id"] for entry in runs] == [run_id, run_id] and
                [entry["rank"] for entry in runs] == [0, 1] and
                not runs[0]["id_unique"] and runs[0]["size"] == 2), \
            f"{launcher}: the ranks share '{run_id}'\n{shown(runs)}"
        run = case.run(command=check)
        assert run.status == 0 and "check: passed" in run.stdout, \
            f"{launcher}: one launch's reports are one run\n{run}"
        # A second launch in which rank 1 wrote no report, started more
        # than a clock tick after the first ended (a process' start time
        # has the tick's resolution, and an earlier report counts as stale
        # only when it surely ended before).
        time.sleep(5 / os.sysconf("SC_CLK_TCK"))
        run = case.run(**variables, **{key: str(value) for key, value in
                                       variables_of_rank(0).items()})
        assert run.status == 0, f"{launcher}: rank 0 runs again\n{run}"
        run = case.run(command=check)
        assert (run.status == 2 and
                f"different launches of run '{run_id}'" in run.stderr), \
            f"{launcher}: the stale report of rank 1 is refused\n{run}"


def test_hydra_proxy_command_line(case, budget):
    """The ranks' hydra proxy, a parent or a process above it, with its
    --control-port: a value no port is (empty, a newline, too long) names
    no launch, and the rank variable alone does."""
    program = shlex.quote(case.program)
    for value, levels, run_id in [
            ("node7:4242", 1, "hydra:node7:4242"),
            ("node7:4242", 3, "hydra:node7:4242"),
            ("", 1, "launcher:PMI_RANK"),
            ("node7\n:4242", 1, "launcher:PMI_RANK"),
            ("n" * 300 + ":1", 1, "launcher:PMI_RANK")]:
        script = f"{program}; exit $?"
        for _ in range(levels - 1):
            script = f"sh -c {shlex.quote(script)}; exit $?"
        run = case.run(command=["sh", "-c", script, "hydra_pmi_proxy",
                                "--control-port", value],
                       CUNUMPY_REPORT="report.json", CUNUMPY_BUDGET=budget,
                       PMI_RANK=0, PMI_SIZE=1)
        program_ran(run)
        found = case.json("report.json", run)["run"]
        assert found["id"] == run_id and not found["id_unique"], \
            f"--control-port {value!r}, {levels} level(s) up\n{shown(found)}"
