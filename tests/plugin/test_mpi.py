"""MPI ranks of the legacy example, each writing its own report (the rank
comes from the launcher's environment), merged by cunumpy-report; the run
id that tells one launch's reports from a stale one's, launcher by
launcher. One report per job: a plain MPI + Kokkos program
(tests/programs/mpi_kokkos.cpp) whose ranks' reports the plugin merges over
MPI at Kokkos::finalize, under Open MPI and MPICH; ranks that never come,
within the deadline."""

import os
import re
import shlex
import shutil
import socket
import time

import pytest

from plugin_helpers import VIOLATION_STATUS, program_ran, shown
from report_tool_helpers import comparable


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


def test_mpich(case, budget, mpirun, report_tool):
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
    run = case.run(command=[mpirun, "-n", "2", case.program], **variables)
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

    run = case.run(command=[mpirun, "-n", "1", case.program, ":",
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


# One report per job, merged over MPI.

STEPS = 20


def hydra(mpirun):
    """MPICH's mpiexec (hydra), which takes none of Open MPI's options."""
    return "mpich" in os.path.basename(mpirun) or "hydra" in mpirun


def launch_job(case, mpirun, parts, deadline=2, **variables):
    """Runs the program as one MPI job: `parts` are (ranks, [arguments])
    of an MPMD launch, a part's arguments starting with "env" to run it
    with another environment. Returns the run and its seconds."""
    command = [mpirun] + ([] if hydra(mpirun) else
                          ["--allow-run-as-root", "--oversubscribe"])
    for index, (ranks, arguments) in enumerate(parts):
        if index:
            command.append(":")
        program = [case.program]
        if arguments and arguments[0] == "env":
            program = arguments[:arguments.index("--")] + program
            arguments = arguments[arguments.index("--") + 1:]
        command += ["-np" if not hydra(mpirun) else "-n", str(ranks),
                    *program, *arguments]
    start = time.monotonic()
    run = case.run(command=command, timeout=120,
                   CUNUMPY_MPI_DEADLINE=deadline, **variables)
    return run, time.monotonic() - start


def without_plugin():
    """The env prefix of a part of a launch without the plugin."""
    return ["env", "-u", "KOKKOS_TOOLS_LIBS", "-u", "KOKKOS_PROFILE_LIBRARY",
            "--"]


def phase(report, name):
    return next(entry for entry in report["phases"] if entry["name"] == name)


def row(section, name):
    statistic = section["over_ranks"]["rows"][name]
    return {key: statistic[key] for key in ("min", "mean", "max", "max_rank")}


def check_job_report(case, mpirun, report_tool, budget):
    """2, 8 and 32 ranks keep the budget: one report of the job, which the
    ranks' own reports merged offline equal but for times."""
    for ranks in (2, 8, 32):
        run, seconds = launch_job(case, mpirun, [(ranks, [])],
                                  CUNUMPY_REPORT=f"job-{ranks}.json",
                                  CUNUMPY_BUDGET=budget)
        assert run.status == 0, f"{ranks} ranks keep the budget\n{run}"
        assert run.cunumpy_lines() == [], f"a job that passes is quiet\n{run}"
        job = case.json(f"job-{ranks}.json", run)
        assert (job["job"]["ranks"] == [[0, ranks - 1]] and
                job["job"]["missing"] == [] and job["job"]["size"] == ranks and
                job["budget"]["verdict"] == "ok" and job["job"]["check"]["ok"]),\
            f"{ranks} ranks in one report\n{shown(job['job'])}"
        step = phase(job, "step")
        assert (step["calls"] == STEPS * ranks and row(step, "calls") ==
                {"min": STEPS, "mean": STEPS, "max": STEPS, "max_rank": 0}), \
            shown(step)
        print(f"{ranks} ranks: {seconds:.2f} s")
    assert sorted(os.listdir(case.work)) == \
        ["job-2.json", "job-32.json", "job-8.json"], \
        f"rank 0 alone writes a file: {os.listdir(case.work)}"
    # The same 8 ranks, each writing its own report, merged offline.
    os.makedirs(case.path("ranks"))
    run, _ = launch_job(case, mpirun, [(8, [])],
                        CUNUMPY_REPORT="ranks/report-%r.json",
                        CUNUMPY_BUDGET=budget)
    assert run.status == 0, run
    merged = case.run(command=[report_tool, "--check", "--json", "offline.json",
                               case.path("ranks")])
    assert merged.status == 0, merged
    ours = comparable(case.json("job-8.json", run))
    theirs = comparable(case.json("offline.json", merged))
    assert ours == theirs, "the job's report is the offline merge's:\n" + \
        "\n".join(f"{name}: {shown(ours.get(name))} != "
                   f"{shown(theirs.get(name))}"
                   for name in sorted(set(ours) | set(theirs))
                   if ours.get(name) != theirs.get(name))[:4000]


def check_one_rank_breaks(case, mpirun, report_tool, budget, ranks):
    """Rank 5 (of 8; 1 of 2) copies in its time step: every rank ends with
    the budget's status, the job's report names that rank; with a report
    per rank, rank 0's summary of the job is cunumpy-report's of the ranks'
    files."""
    broken = 5 if ranks > 5 else 1
    variables = dict(CUNUMPY_BUDGET=budget, CUNUMPY_ON_VIOLATION="exit")
    run, _ = launch_job(case, mpirun, [(ranks, ["--copy-on-rank",
                                                str(broken)])],
                        CUNUMPY_REPORT="job.json", **variables)
    assert run.status == VIOLATION_STATUS, f"the launcher fails\n{run}"
    job = case.json("job.json", run)
    assert (job["budget"]["verdict"] == "broken" and
            job["job"]["broken"] == [[broken, broken]] and
            phase(job, "step")["broken_ranks"] == [[broken, broken]] and
            job["budget"]["violations"][0]["rank"] == broken and
            job["budget"]["violations"][0]["ranks"] == [[broken, broken]]), \
        shown(job["budget"])
    assert row(phase(job, "step"), "to_host count") == \
        {"min": 0, "mean": STEPS / ranks, "max": STEPS, "max_rank": broken}
    table = case.run(command=[report_tool, case.path("job.json")])
    assert f"budget: BROKEN on rank(s) {broken}" in table.stdout, table

    os.makedirs(case.path("ranks"), exist_ok=True)
    run, _ = launch_job(case, mpirun, [(ranks, ["--copy-on-rank",
                                                str(broken)])],
                        CUNUMPY_REPORT="ranks/report-%r.json", **variables)
    assert run.status == VIOLATION_STATUS, run
    offline = case.run(command=[report_tool, "--format", "summary",
                                case.path("ranks")])
    summary = [line for line in run.cunumpy_lines()
               if not line.startswith("cunumpy: CUNUMPY_ON_VIOLATION")
               and not line.startswith("cunumpy: full report")]
    assert summary == offline.stdout.splitlines(), \
        f"rank 0's summary of the job\n{run}\ncunumpy-report's\n{offline}"


def check_rank_without_the_plugin(case, mpirun, budget):
    """An MPMD launch whose rank 1 runs without the plugin: rank 0 waits
    for it no longer than the deadline, and the job's report names it, its
    verdict not ok; the other way round, rank 1 cannot learn the job's
    verdict and fails."""
    variables = dict(CUNUMPY_REPORT="job.json", CUNUMPY_BUDGET=budget,
                     CUNUMPY_ON_VIOLATION="exit", deadline=1)
    run, seconds = launch_job(case, mpirun, [(1, []), (1, without_plugin())],
                              **variables)
    job = case.json("job.json", run)
    assert (run.status == VIOLATION_STATUS and
            job["job"]["missing"] == [[1, 1]] and
            job["budget"]["verdict"] == "incomplete" and
            "rank(s) 1 sent no report within CUNUMPY_MPI_DEADLINE=1 s"
            in run.stderr), f"{shown(job['job'])}\n{run}"
    assert seconds < 20, f"{seconds:.1f} s"
    print(f"rank 1 without the plugin: {seconds:.2f} s")
    os.remove(case.path("job.json"))
    run, seconds = launch_job(case, mpirun, [(1, without_plugin()), (1, [])],
                              **variables)
    assert (run.status == VIOLATION_STATUS and
            "this rank's report is not in the job's report" in run.stderr and
            not os.path.exists(case.path("job.json"))), run
    assert seconds < 20, f"{seconds:.1f} s"
    print(f"rank 0 without the plugin: {seconds:.2f} s")


def test_job_report_over_mpi(case, budget, mpirun, report_tool):
    check_job_report(case, mpirun, report_tool, budget)


def test_one_rank_breaks_the_job(case, budget, mpirun, report_tool):
    check_one_rank_breaks(case, mpirun, report_tool, budget, 8)


def test_rank_without_the_plugin(case, budget, mpirun):
    check_rank_without_the_plugin(case, mpirun, budget)


def test_job_report_over_mpich(case, budget, mpirun, report_tool):
    """The same under MPICH's mpiexec (hydra), the program and the MPI part
    built against MPICH."""
    run, _ = launch_job(case, mpirun, [(8, [])], CUNUMPY_REPORT="job.json",
                        CUNUMPY_BUDGET=budget)
    job = case.json("job.json", run)
    assert (run.status == 0 and job["job"]["ranks"] == [[0, 7]] and
            job["budget"]["verdict"] == "ok"), f"{shown(job['job'])}\n{run}"
    os.remove(case.path("job.json"))
    check_one_rank_breaks(case, mpirun, report_tool, budget, 2)
    os.remove(case.path("job.json"))
    check_rank_without_the_plugin(case, mpirun, budget)


def test_rank_without_kokkos_finalize(case, budget, mpirun):
    """Rank 2 of 4 never finalizes Kokkos: its subtree of the merge (ranks 2
    and 3) is missing from the job's report, which fails; rank 3, alive,
    says its report is not in it."""
    run, seconds = launch_job(
        case, mpirun, [(4, ["--skip-kokkos-finalize-on-rank", "2"])],
        deadline=1, CUNUMPY_REPORT="job.json", CUNUMPY_BUDGET=budget,
        CUNUMPY_ON_VIOLATION="exit")
    job = case.json("job.json", run)
    assert (run.status == VIOLATION_STATUS and
            job["job"]["ranks"] == [[0, 1]] and
            job["job"]["missing"] == [[2, 3]] and
            job["budget"]["verdict"] == "incomplete" and
            "rank 3: this rank's report is not in the job's report"
            in run.stderr), f"{shown(job['job'])}\n{run}"
    assert seconds < 20, f"{seconds:.1f} s"


def test_mpi_finalized_first(case, budget, mpirun):
    """MPI finalized before Kokkos: no merge, each rank writes its own
    report, and rank 0 says why in one line."""
    run, _ = launch_job(case, mpirun, [(2, ["--finalize-mpi-first"])],
                        CUNUMPY_REPORT="report-%r.json", CUNUMPY_BUDGET=budget)
    lines = [line for line in run.cunumpy_lines() if "MPI was finalized "
             "before the ranks' reports could be merged" in line]
    assert (run.status == 0 and len(lines) == 1 and
            lines[0].endswith("each rank writes its own report")), run
    for rank in (0, 1):
        assert "job" not in case.json(f"report-{rank}.json", run)


def check_job_check(case, mpirun, report_tool, command):
    """A TransferBudget of the library checked over MPI (job_report and
    job_check of tests/programs/mpi_budget.*, run as `command` + its
    arguments): with 2 and 4 ranks, the last one copying in a step, every
    rank's job_check fails, rank 0's job report names that rank and is the
    offline merge of the ranks' own reports; every rank passes when none
    copies; a rank that never calls them is missing from the job's report
    (with the ranks below it in the tree), whose verdict then fails, within
    the deadline. Without the plugin: the library alone merges."""
    variables = dict(KOKKOS_TOOLS_LIBS=None, KOKKOS_PROFILE_LIBRARY=None)

    def launch(ranks, arguments, deadline=2, **more):
        for name in os.listdir(case.work):
            os.remove(case.path(name))
        run, seconds = launch_job(
            case, mpirun, [(ranks, ["env", *command, "--", *arguments])],
            deadline=deadline, **{**variables, **more})
        lines = [case.read(name).rstrip("\n")
                 for name in sorted(os.listdir(case.work))
                 if name.startswith("verdict-")]
        return run, seconds, lines

    for ranks in (2, 4):
        broken = ranks - 1
        run, _, lines = launch(ranks, ["--copy-on-rank", str(broken)])
        assert (run.status == 0 and len(lines) == ranks and
                all("job_check failed" in line for line in lines) and
                all(" job_report 0 bytes" in line for line in lines[1:])), \
            f"every rank's job_check fails, rank 0 alone has the report\n{run}"
        job = case.json("job.json", run)
        assert (job["job"]["ranks"] == [[0, ranks - 1]] and
                job["job"]["broken"] == [[broken, broken]] and
                job["budget"]["verdict"] == "broken" and
                phase(job, "step")["broken_ranks"] == [[broken, broken]]), \
            f"{shown(job['job'])}\n{run}"
        merged = case.run(command=[report_tool, "--json", "offline.json"] +
                          [case.path(f"rank-{rank}.json")
                           for rank in range(ranks)])
        ours = comparable(job)
        theirs = comparable(case.json("offline.json", merged))
        assert ours == theirs, "the job's report is the offline merge's:\n" + \
            "\n".join(f"{name}: {shown(ours.get(name))} != "
                      f"{shown(theirs.get(name))}"
                      for name in sorted(set(ours) | set(theirs))
                      if ours.get(name) != theirs.get(name))[:4000]

    run, _, lines = launch(2, [])
    assert (run.status == 0 and len(lines) == 2 and
            all("job_check passed" in line for line in lines) and
            case.json("job.json", run)["budget"]["verdict"] == "ok"), run

    run, seconds, lines = launch(4, ["--skip-job-on-rank", "2"], deadline=1)
    job = case.json("job.json", run)
    assert (job["job"]["missing"] == [[2, 3]] and
            job["budget"]["verdict"] == "incomplete" and
            [line.split(":")[0] for line in lines] ==
            ["rank 0", "rank 1", "rank 3"] and
            all("job_check failed" in line for line in lines)), \
        f"{shown(job['job'])}\n{run}"
    assert seconds < 30, f"{seconds:.1f} s"
    return launch


def test_job_check_over_mpi(case, mpirun, report_tool):
    launch = check_job_check(case, mpirun, report_tool, [])
    # Rank 1 comes to job_report after rank 0 gave up on it (deadline 3 s),
    # while rank 0 waits in job_check, then copies in a step: rank 0 must
    # not take rank 1's late job_report for its job_check, which would pass
    # rank 0's job_check without the copy.
    run, seconds, lines = launch(2, ["--late-on-rank", "1", "4.5"],
                                 deadline=3)
    assert (len(lines) == 2 and
            all("job_check failed" in line for line in lines)), run
    assert seconds < 60, f"{seconds:.1f} s"
    # With the plugin loaded too, its merge at Kokkos::finalize follows the
    # library's two, in step on every rank: every rank is in its report.
    loading = {name: os.environ[name] for name in
               ("KOKKOS_TOOLS_LIBS", "KOKKOS_PROFILE_LIBRARY")
               if name in os.environ}
    run, _, lines = launch(4, [], CUNUMPY_REPORT="plugin.json", **loading)
    plugin = case.json("plugin.json", run)
    assert (len(lines) == 4 and
            all("job_check passed" in line for line in lines) and
            plugin["job"]["ranks"] == [[0, 3]] and
            plugin["job"]["missing"] == []), f"{shown(plugin['job'])}\n{run}"


def test_job_check_over_mpi4py(case, mpirun, report_tool, python):
    """The same in Python under mpi4py, with the launcher of mpi4py's
    MPI."""
    interpreter, path = python
    probe = case.run(command=[interpreter, "-c", "from mpi4py import MPI; "
                              "print(MPI.Get_library_version())"])
    if probe.status != 0:
        pytest.skip(f"mpi4py is not installed for {interpreter}")
    if "MPICH" in probe.stdout:
        mpirun = shutil.which("mpiexec.mpich") or mpirun
    check_job_check(case, mpirun, report_tool,
                    [f"PYTHONPATH={path}", interpreter])


def test_an_mpi_without_a_part(case, fake_mpi):
    """A process whose MPI is none the plugin's MPI part was built for:
    refused in one line; the process writes its own report."""
    run = case.run(["--library-regions"], CUNUMPY_REPORT="report.json",
                   LD_PRELOAD=fake_mpi)
    lines = [line for line in run.cunumpy_lines() if "Fake MPI 1.0" in line]
    assert (run.status == 0 and len(lines) == 1 and
            "is not one cunumpy's MPI part was built for" in lines[0] and
            lines[0].endswith("each rank writes its own report")), run
    assert "job" not in case.json("report.json", run)
