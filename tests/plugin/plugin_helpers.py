"""Running a program with libkp_cunumpy loaded, and reading what the plugin
leaves: the report, the JSON, the trace, stderr, the chained tool's counts.

The plugin itself is loaded by the environment ctest sets
(KOKKOS_TOOLS_LIBS or KOKKOS_PROFILE_LIBRARY); `Case.run` passes that
environment on, with the CUNUMPY_* variables a test names and no others.
"""

import json
import os
import re
import shutil
import subprocess

import pytest

# The CUNUMPY_* variables ctest's environment keeps for every run (which
# memory spaces are the fake device's); every other one is removed unless a
# test sets it.
KEPT_CUNUMPY_VARIABLES = {"CUNUMPY_DEVICE_SPACES"}
# What MPI launchers set, which the plugin reads (a CI job run under one
# must not change what the tests see): removed unless a test sets them.
MPI_VARIABLES = ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                 "SLURM_PROCID", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                 "MV2_COMM_WORLD_SIZE", "SLURM_NTASKS", "SLURM_JOB_ID",
                 "SLURM_STEP_ID", "PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid",
                 "PMI_ID", "MV2_COMM_WORLD_RANK", "MPIRUN_ID"]
# What a CI system sets that the plugin reads (GitHub Actions: annotations
# on stderr): removed unless a test sets it.
CI_VARIABLES = ["GITHUB_ACTIONS"]
# The checkout these tests are in: reports hold its paths (call sites, the
# rule file), whatever its directory is named.
REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
# The exit status of CUNUMPY_ON_VIOLATION=exit.
VIOLATION_STATUS = 3
# scripts/test-sanitizers runs the suite with ASAN_OPTIONS set.
SANITIZED = "ASAN_OPTIONS" in os.environ
# How long a run that exit()s from a signal handler may take before it is
# taken for one that never ends: under the sanitizers such runs can wait
# in the allocator for ever (test_hostile.py, test_replay.py), and 24 of
# them must fit in a test's 300 s.
EXIT_FROM_SIGNAL_TIMEOUT = 10 if SANITIZED else 30

# The legacy example (examples/legacy_app): 100 steps of 100000 doubles,
# output every 10 steps, a DualView of 16 doubles of diagnostics.
STATE_BYTES = 800000
DIAGNOSTICS_BYTES = 16 * 8
STEPS, OUTPUTS = 100, 10
# Its source and rule file, in the repository, and the cases' marker for it
# (conftest.py).
LEGACY_SOURCE = "examples/legacy_app/legacy_app.cpp"
LEGACY_BUDGET = "examples/legacy_app/budget.toml"
LEGACY_APP = pytest.mark.program("legacy_app", source=LEGACY_SOURCE,
                                 budget=LEGACY_BUDGET)
# Source lines of legacy_app.cpp, found by their text.
OUTPUT_COPY = "Kokkos::deep_copy(host_state, state);"
SETUP_COPY = "Kokkos::deep_copy(state, host_state);"
STEP_COPY = "Kokkos::deep_copy(probe, state);"
SYNC = "diagnostics.sync_host();"
MODIFY = "parameters.modify_host();"


def shown(value):
    """A JSON value, indented, for a failure message."""
    return json.dumps(value, indent=1)


class Run:
    """A finished run: exit status, stdout, stderr. str(run) is all three,
    for failure messages."""

    def __init__(self, completed):
        self.status = completed.returncode
        self.stdout = completed.stdout
        self.stderr = completed.stderr

    def __str__(self):
        return (f"--- exit status {self.status}\n--- stdout ---\n"
                f"{self.stdout}--- stderr ---\n{self.stderr}")

    def cunumpy_lines(self):
        """The lines of stderr the plugin wrote."""
        return [line for line in self.stderr.splitlines()
                if line.startswith("cunumpy:")]


class Case:
    """One test's program, source file and work directory (emptied at the
    start); every run happens in the work directory."""

    def __init__(self, work, program, source=None):
        self.work = os.path.abspath(work)
        self.program = program
        self.source = source
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)

    def path(self, name):
        return os.path.join(self.work, name)

    def run(self, arguments=(), program=None, command=None, timeout=300,
            **variables):
        """Runs `program` (the case's by default) with `arguments`, or the
        whole `command`, with the loading variables ctest set, the
        variables given here (None removes one) and no other CUNUMPY_*
        variable nor MPI launcher's or CI system's."""
        environment = {name: value for name, value in os.environ.items()
                       if not name.startswith("CUNUMPY_")
                       or name in KEPT_CUNUMPY_VARIABLES}
        for name in MPI_VARIABLES + CI_VARIABLES:
            environment.pop(name, None)
        for name, value in variables.items():
            if value is None:
                environment.pop(name, None)
            else:
                environment[name] = str(value)
        if command is None:
            command = [program or self.program, *arguments]
        completed = subprocess.run(command, cwd=self.work, env=environment,
                                   capture_output=True, text=True,
                                   timeout=timeout)
        return Run(completed)

    def read(self, name):
        with open(self.path(name), encoding="utf-8") as stream:
            return stream.read()

    def write(self, name, text):
        """Writes a file in the work directory; returns its path."""
        with open(self.path(name), "w", encoding="utf-8") as stream:
            stream.write(text)
        return self.path(name)

    def json(self, name, run):
        """The JSON file `name` that `run` wrote."""
        assert os.path.exists(self.path(name)), f"{name} was not written\n{run}"
        try:
            return json.loads(self.read(name))
        except ValueError as error:
            raise AssertionError(f"{name} is not valid JSON: {error}") \
                from error

    def tool_counts(self, name="tool.txt"):
        """What the chained test tool (tests/tools/kp_test_tool.cpp) wrote
        to KP_TEST_TOOL_OUTPUT: {callback: count}."""
        counts = {}
        for line in self.read(name).splitlines():
            key, value = line.split()
            counts[key] = int(value)
        return counts

    def source_line(self, text, source=None):
        """The line number of the one line of the source holding `text`."""
        source = source or self.source
        assert source, "this test needs --source (the program's source file)"
        with open(source, encoding="utf-8") as stream:
            numbers = [number for number, line in enumerate(stream, 1)
                       if text in line]
        assert len(numbers) == 1, \
            f"'{text}' must appear once in {source}, found {numbers}"
        return numbers[0]

    def site(self, text):
        """"file.cpp:<line>" of the source line holding `text`."""
        return f"{os.path.basename(self.source)}:{self.source_line(text)}"

    def without_paths(self, text):
        """`text` with the paths of this checkout, the build, the program
        and the work directory replaced by "<path>": what a test may search
        for a word that must be absent, whatever directory the clone is in
        (a clone under .../BROKEN/ must not break a test)."""
        paths = {REPOSITORY, self.work, os.path.dirname(self.work),
                 os.path.dirname(os.path.abspath(self.program or "."))}
        if self.source:
            paths.add(os.path.dirname(self.source))
        for path in sorted(paths, key=len, reverse=True):
            if len(path) > 1:
                text = text.replace(path, "<path>")
        return text


def region(report, path):
    """The region at `path` ("step", "step/solve") of a JSON report's tree
    of regions."""
    for entry in report["regions"]:
        if entry["path"] == path:
            return entry
    raise AssertionError(f"no region '{path}' in the report: "
                         f"{[entry['path'] for entry in report['regions']]}")


def phase(report, name):
    """The phase `name` of a JSON report (a name its rules give)."""
    for entry in report["phases"]:
        if entry["name"] == name:
            return entry
    raise AssertionError(f"no phase '{name}' in the report: "
                         f"{[entry['name'] for entry in report['phases']]}")


def kinds(entry):
    """The counts per kind of a phase, the total, or a region's own."""
    return entry["kinds"] if "kinds" in entry else entry["own"]


def count(entry, kind):
    return kinds(entry)[kind]["count"]


def nbytes(entry, kind):
    return kinds(entry)[kind]["bytes"]


def one_warning(run, pattern):
    """Checks that exactly one line the plugin wrote on stderr matches
    `pattern`; returns all the plugin's lines."""
    lines = run.cunumpy_lines()
    matching = [line for line in lines if re.search(pattern, line)]
    assert len(matching) == 1, \
        f"one clear line on stderr matching /{pattern}/\n{run}"
    return lines


def program_ran(run):
    """Checks that the legacy example ran to its end and succeeded."""
    assert run.status == 0, f"the program runs on unharmed\n{run}"
    assert "legacy_app: 100 steps" in run.stdout, f"to its end\n{run}"


def skip(request, reason):
    """Says why in one line, even under -q, and skips (status 77)."""
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(f"\nplugin.{request.node.name.removeprefix('test_')}: "
              f"skipped: {reason}")
    pytest.skip(reason)
