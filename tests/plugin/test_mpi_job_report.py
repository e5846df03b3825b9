"""One report per job: a plain MPI + Kokkos program
(tests/programs/mpi_kokkos.cpp) whose ranks' reports the plugin merges over
MPI at Kokkos::finalize, under Open MPI and MPICH; ranks that never come,
within the deadline; an MPI the plugin has no part for."""

import os

import pytest

from mpi_helpers import launch_job, phase
from plugin_helpers import VIOLATION_STATUS, shown
from report_tool_helpers import assert_same_report

pytestmark = [pytest.mark.program(
                  "mpi_kokkos", budget="tests/plugin/mpi_kokkos_budget.toml"),
              pytest.mark.needs("device")]


STEPS = 20


def without_plugin():
    """The env prefix of a part of a launch without the plugin."""
    return ["env", "-u", "KOKKOS_TOOLS_LIBS", "-u", "KOKKOS_PROFILE_LIBRARY",
            "--"]


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
    assert_same_report(case.json("job-8.json", run),
                       case.json("offline.json", merged))


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


@pytest.mark.ctest(PROCESSORS=2)
def test_job_report_over_mpi(case, budget, mpirun, report_tool):
    check_job_report(case, mpirun, report_tool, budget)


@pytest.mark.ctest(PROCESSORS=2)
def test_one_rank_breaks_the_job(case, budget, mpirun, report_tool):
    check_one_rank_breaks(case, mpirun, report_tool, budget, 8)


@pytest.mark.ctest(PROCESSORS=2)
def test_rank_without_the_plugin(case, budget, mpirun):
    check_rank_without_the_plugin(case, mpirun, budget)


@pytest.mark.program("mpi_kokkos_mpich",
                     budget="tests/plugin/mpi_kokkos_budget.toml")
@pytest.mark.ctest(PROCESSORS=2)
def test_job_report_over_mpich(case, budget, mpiexec_hydra, report_tool):
    """The same under MPICH's mpiexec (hydra), the program and the MPI part
    built against MPICH."""
    run, _ = launch_job(case, mpiexec_hydra, [(8, [])],
                        CUNUMPY_REPORT="job.json",
                        CUNUMPY_BUDGET=budget)
    job = case.json("job.json", run)
    assert (run.status == 0 and job["job"]["ranks"] == [[0, 7]] and
            job["budget"]["verdict"] == "ok"), f"{shown(job['job'])}\n{run}"
    os.remove(case.path("job.json"))
    check_one_rank_breaks(case, mpiexec_hydra, report_tool, budget, 2)
    os.remove(case.path("job.json"))
    check_rank_without_the_plugin(case, mpiexec_hydra, budget)


@pytest.mark.ctest(PROCESSORS=2)
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


@pytest.mark.ctest(PROCESSORS=2)
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


@pytest.mark.program("tool_events")
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
