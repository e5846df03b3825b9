"""A TransferBudget of the library checked over MPI (job_report and
job_check of tests/programs/mpi_budget.cpp, and .py under mpi4py)."""

import os
import shutil

import pytest

from mpi_helpers import launch_job, phase
from plugin_helpers import shown
from report_tool_helpers import assert_same_report

pytestmark = [pytest.mark.program("mpi_budget"), pytest.mark.needs("device"),
              pytest.mark.ctest(PROCESSORS=4)]


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
        assert_same_report(job, case.json("offline.json", merged))

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


@pytest.mark.program("mpi_budget_py")
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
