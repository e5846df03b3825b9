"""Launching a program as one MPI job, under Open MPI's mpirun or MPICH's
mpiexec (hydra)."""

import os
import time


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


def phase(report, name):
    return next(entry for entry in report["phases"] if entry["name"] == name)
