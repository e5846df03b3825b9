"""tests/programs/mpi_budget.cpp in Python, under mpi4py: a TransferBudget
checked over MPI. "setup" uploads the state, each "step" (no copy allowed)
reduces over the ranks, "output" downloads the state. Each rank writes its
own report(format="json") to rank-<rank>.json; then every rank calls
job_report(format="json"), which rank 0 writes to job.json, and
job_check(). Each rank writes one line to verdict-<rank>.txt: "rank R:
job_report N bytes; job_check passed" or "... failed: <first line of the
message>".

    --copy-on-rank R      rank R also downloads the state in each step
    --skip-job-on-rank R  rank R calls neither job_report nor job_check
"""

import sys

import numpy as np
from mpi4py import MPI

import cunumpy as xp


def option(name):
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else -1


def main():
    xp.set_backend("kokkos")
    xp.testing.enable_fake_device()
    rank = MPI.COMM_WORLD.Get_rank()
    budget = xp.profiling.TransferBudget()
    budget.require("setup", allow="to_device")
    budget.require("step", calls=10)
    budget.require("output", allow="to_host")
    with budget.phase("setup"):
        state = xp.to_cunumpy(np.arange(1000.0) + rank)
    for _ in range(10):
        with budget.phase("step"):
            MPI.COMM_WORLD.allreduce(float(rank))
            if rank == option("--copy-on-rank"):
                xp.to_numpy(state)
    with budget.phase("output"):
        xp.to_numpy(state)
    with open(f"rank-{rank}.json", "w", encoding="utf-8") as stream:
        stream.write(budget.report(format="json"))
    if rank == option("--skip-job-on-rank"):
        return
    job = budget.job_report(format="json")
    if rank == 0:
        with open("job.json", "w", encoding="utf-8") as stream:
            stream.write(job)
    verdict = "passed"
    try:
        budget.job_check()
    except AssertionError as error:
        verdict = "failed: " + str(error).splitlines()[0]
    with open(f"verdict-{rank}.txt", "w", encoding="utf-8") as stream:
        stream.write(f"rank {rank}: job_report {len(job)} bytes; "
                     f"job_check {verdict}\n")


main()
