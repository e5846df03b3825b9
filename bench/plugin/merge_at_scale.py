"""The ranks' reports merged, offline and over MPI (docs/performance.md,
section "One report per job").

    python3 bench/plugin/merge_at_scale.py --build build --work /tmp/merge \
        --ranks 100000 --mpi-ranks 2 4 8 16 32

1. Runs tests/programs/mpi_kokkos.cpp on 2 ranks under the plugin, each
   rank writing its report, and writes --ranks copies of rank 0's, each
   the report of its rank of a job of that size (the text with its rank and
   size changed).
2. Times `cunumpy-report --check` over them: seconds and peak memory.
3. For each of --mpi-ranks, the slowest rank's Kokkos::finalize (the
   program's --time-finalize) with the merge at finalize
   (CUNUMPY_MPI_DEADLINE=5, one report of the job) and without (0, a report
   per rank), --rounds each, alternating: the medians, and their
   difference, the merge's time.
"""

import argparse
import os
import re
import resource
import statistics
import subprocess
import time

BUDGET = "tests/plugin/mpi_kokkos_budget.toml"


def environment(build, **variables):
    plugin = os.path.join(build, "src/plugin/libkp_cunumpy.so")
    result = dict(os.environ, KOKKOS_TOOLS_LIBS=plugin,
                  KOKKOS_PROFILE_LIBRARY=plugin,
                  CUNUMPY_DEVICE_SPACES="FakeDevice", CUNUMPY_BUDGET=BUDGET)
    result.update({name: str(value) for name, value in variables.items()})
    return result


def mpirun(build, ranks, **variables):
    """The seconds of the slowest rank's Kokkos::finalize."""
    command = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np",
               str(ranks), os.path.join(build, "tests/plugin/mpi_kokkos"),
               "--time-finalize"]
    run = subprocess.run(command, check=True, capture_output=True, text=True,
                         env=environment(build, **variables))
    return float(re.search(r"Kokkos::finalize took ([0-9.]+) s",
                           run.stdout).group(1))


def write_job(sample, directory, ranks):
    """`ranks` reports: the sample with its rank and size replaced."""
    os.makedirs(directory, exist_ok=True)
    rank = re.compile(r'^(  "rank"|    "rank"): 0,$', re.MULTILINE)
    size = re.compile(r'^    "size": 2,$', re.MULTILINE)
    text = size.sub(f'    "size": {ranks},', sample)
    parts = rank.split(text)
    assert len(parts) == 5, "the sample's rank fields"
    for number in range(ranks):
        with open(os.path.join(directory, f"report-{number}.json"), "w",
                  encoding="utf-8") as stream:
            stream.write(parts[0] + parts[1] + f": {number}," + parts[2] +
                         parts[3] + f": {number}," + parts[4])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--work", default="/tmp/cunumpy-merge")
    parser.add_argument("--ranks", type=int, default=100000)
    parser.add_argument("--mpi-ranks", type=int, nargs="*",
                        default=[2, 4, 8, 16, 32])
    parser.add_argument("--rounds", type=int, default=5)
    arguments = parser.parse_args()
    build = os.path.abspath(arguments.build)
    os.makedirs(arguments.work, exist_ok=True)

    sample = os.path.join(arguments.work, "sample-%r.json")
    mpirun(build, 2, CUNUMPY_REPORT=sample)
    with open(sample.replace("%r", "0"), encoding="utf-8") as stream:
        text = stream.read()
    print(f"a rank's report: {len(text)} bytes")
    if arguments.ranks:
        job = os.path.join(arguments.work, "job")
        if not os.path.exists(os.path.join(job, f"report-{arguments.ranks - 1}"
                                                ".json")):
            write_job(text, job, arguments.ranks)
        tool = os.path.join(build, "src/plugin/cunumpy-report")
        start = time.monotonic()
        run = subprocess.run([tool, "--check", job], capture_output=True,
                             text=True)
        seconds = time.monotonic() - start
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        assert run.returncode == 0, run.stderr
        print(f"cunumpy-report --check of {arguments.ranks} reports: "
              f"{seconds:.2f} s, peak {peak / 1024:.0f} MiB")
    for ranks in arguments.mpi_ranks:
        times = {5: [], 0: []}
        for _ in range(arguments.rounds):
            for deadline in (5, 0):
                times[deadline].append(mpirun(
                    build, ranks, CUNUMPY_MPI_DEADLINE=deadline,
                    CUNUMPY_REPORT=os.path.join(arguments.work, "job.json")
                    if deadline else
                    os.path.join(arguments.work, "rank-%r.json")))
        merged, alone = (statistics.median(times[d]) for d in (5, 0))
        print(f"{ranks} ranks: Kokkos::finalize {1e3 * merged:.1f} ms with "
              f"the merge, {1e3 * alone:.1f} ms without: "
              f"{1e3 * (merged - alone):.1f} ms")


if __name__ == "__main__":
    main()
