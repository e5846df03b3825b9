r"""Plugin tests: each runs a real program with libkp_cunumpy loaded the way
kokkos-tools are and checks what the plugin leaves (report, JSON, trace,
exit status, stderr, what a chained tool received).

Every test function of a test_*.py here is the ctest test plugin.<case>
(the function's name without test_): ctest asks pytest for them when it
starts (discover_cases.py, run by CMakeLists.txt), and runs each as

    python3 -m pytest -q -p no:cacheprovider \
        tests/plugin/test_<subject>.py::test_<case> \
        --facts <build>/tests/plugin/facts.json

facts.json is what the build says of itself: the paths of the plugin, the
tools and the programs it built, the Kokkos it uses, and for what it
lacks, why. The fixture below loads the plugin (and with
pytest.mark.chain the test tool after it) in the variable that Kokkos
reads, so a file or a case also runs by hand:
`python3 -m pytest tests/plugin/test_hostile.py --facts build/tests/plugin/facts.json`.
plugin.discovery fails when a test function is not a ctest test.

To add a case, write `def test_<case>(case, ...)` in the test_<subject>.py
of its subject (or a new file named after a new subject; not a file name
of tests/python): ctest runs it from then on, with nothing to register.
- The program it runs: `pytestmark = pytest.mark.program(<name>, source=,
  budget=)` of the file, or the same mark on the case; <name> is a key of
  facts.json (plugin_fact in CMakeLists.txt), source and budget are files
  of the repository (plugin_helpers.LEGACY_APP for the legacy example).
- Fixtures: `case` runs the program in the case's own work directory
  (`case.run(arguments, CUNUMPY_REPORT="report.json")`), `case.json(
  "report.json", run)` reads what it wrote; the fixtures below give the
  tools and programs; plugin_helpers.py has the other checks and the facts
  of the legacy example. Check with plain asserts, and end each message
  with `{run}` to show the run.
- What this build may lack: `pytest.mark.needs(<fact>)` ("device" for
  copies that must reach the tools); a fixture of a fact the build lacks
  skips too. The case then skips with one line saying why (status 77,
  which ctest reports as skipped), in every configuration that lacks it.
- ctest properties other than the 300 s timeout: `pytest.mark.ctest(
  TIMEOUT=900, PROCESSORS=2, RESOURCE_LOCK=...)`.
- A new program or path of the build: add_executable and plugin_fact in
  CMakeLists.txt, and a fixture below if cases take it as an argument.
"""

import json
import os
import shutil

import pytest

pytest.register_assert_rewrite("plugin_helpers", "debug_file_helpers",
                               "mpi_helpers")

# After the rewrite hook:
from plugin_helpers import REPOSITORY, Case, skip  # noqa: E402

SKIPPED_STATUS = 77


def pytest_addoption(parser):
    parser.getgroup("cunumpy plugin tests").addoption(
        "--facts", help="the build's tests/plugin/facts.json: its programs, "
                        "tools and Kokkos")


def pytest_configure(config):
    for line in (
            "program(name, source=None, budget=None): the program the case "
            "runs, a name of facts.json; its source file and rule file, "
            "relative to the repository",
            "needs(*names): what the case needs of the build (facts.json); "
            "it skips without one, saying why",
            "chain: the test tool is loaded after the plugin",
            "ctest(**properties): ctest properties of the case's test "
            "(TIMEOUT=900, PROCESSORS=2, RESOURCE_LOCK=...)",
            "python_interpreter: the program is Python (under the "
            "sanitizers it loads their runtime first)"):
        config.addinivalue_line("markers", line)


@pytest.fixture(scope="session")
def facts(request):
    """What the build says of itself (tests/plugin/CMakeLists.txt)."""
    path = request.config.getoption("facts")
    if path is None:
        pytest.fail("the plugin cases need --facts <build>/tests/plugin/"
                    "facts.json (ctest passes it)", pytrace=False)
    with open(path, encoding="utf-8") as stream:
        values = json.load(stream)
    # A command the build found outside itself (python3, mpirun) may be
    # elsewhere on the machine the tests run on (a packed build on a GPU
    # machine): found on the PATH, or the cases that need it skip.
    build = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(path))))
    for name, value in list(values.items()):
        if (not isinstance(value, str) or not os.path.isabs(value)
                or os.path.exists(value)
                or value.startswith((build + os.sep, REPOSITORY + os.sep))):
            continue
        found = shutil.which(os.path.basename(value))
        if found is not None:
            values[name] = found
        else:
            del values[name]
            values["missing"][name] = f"{value} is not on this machine"
    return values


def fact(request, name):
    """The build's `name`; the case skips, saying why, when it has none."""
    values = request.getfixturevalue("facts")
    if name not in values:
        why = values["missing"].get(name, "not in this build's facts.json")
        skip(request, f"needs {name}: {why}")
    return values[name]


def _path(request, name):
    """A file of the build as an absolute path: programs run in the work
    directory."""
    return os.path.abspath(fact(request, name))


def _program_marker(request):
    marker = request.node.get_closest_marker("program")
    if marker is None:
        pytest.fail("the case names no program: pytest.mark.program(<name "
                    "in facts.json>) on the case or its module",
                    pytrace=False)
    return marker


def _marked_file(request, key):
    """The program marker's `key` file, in the repository."""
    relative = _program_marker(request).kwargs.get(key)
    if relative is None:
        pytest.fail(f"the case needs pytest.mark.program(..., {key}=...)",
                    pytrace=False)
    return os.path.join(REPOSITORY, relative)


@pytest.fixture(autouse=True)
def loaded_plugin(request, facts, monkeypatch):
    """Skips a case whose needs (pytest.mark.needs) this build lacks; loads
    the plugin, and with pytest.mark.chain the test tool after it, in the
    variable this Kokkos reads, with the fake device's space named."""
    for marker in request.node.iter_markers("needs"):
        for name in marker.args:
            fact(request, name)
    libraries = [_path(request, "plugin")]
    if request.node.get_closest_marker("chain"):
        libraries.append(_path(request, "tool"))
    variable = facts["tools_variable"]
    for other in ("KOKKOS_TOOLS_LIBS", "KOKKOS_PROFILE_LIBRARY"):
        if other != variable:
            monkeypatch.delenv(other, raising=False)
    monkeypatch.setenv(variable, ";".join(libraries))
    monkeypatch.setenv("CUNUMPY_DEVICE_SPACES", "FakeDevice")


@pytest.fixture
def program(request):
    return _path(request, _program_marker(request).args[0])


@pytest.fixture
def source(request):
    return _marked_file(request, "source")


@pytest.fixture
def budget(request):
    return _marked_file(request, "budget")


@pytest.fixture
def tool(request):
    return _path(request, "tool")


@pytest.fixture
def plugin(request):
    return _path(request, "plugin")


@pytest.fixture
def forwarder(request):
    return _path(request, "forwarder")


@pytest.fixture
def kernel_only_tool(request):
    return _path(request, "kernel_only_tool")


@pytest.fixture
def plugin_copy(request):
    return _path(request, "plugin_copy")


@pytest.fixture
def mpirun(request):
    """Open MPI's mpirun (or the first mpirun or mpiexec found)."""
    return fact(request, "mpirun")


@pytest.fixture
def mpiexec_hydra(request):
    """MPICH's mpiexec."""
    return fact(request, "mpiexec_hydra")


@pytest.fixture
def report_tool(request):
    return _path(request, "report_tool")


@pytest.fixture
def cupti_built(facts):
    return facts["cupti_built"] == "ON"


@pytest.fixture
def extension_dir(request):
    return _path(request, "extension_dir")


@pytest.fixture
def workload():
    return os.path.join(REPOSITORY, "tests", "plugin", "python",
                        "workload.py")


@pytest.fixture
def fake_cuda(request):
    return _path(request, "fake_cuda")


@pytest.fixture
def recordings():
    return os.path.join(REPOSITORY, "tests", "recordings")


@pytest.fixture
def fake_cuda_app(request):
    return _path(request, "fake_cuda_app")


@pytest.fixture
def legacy_app(request):
    return _path(request, "legacy_app")


@pytest.fixture
def legacy_budget():
    return os.path.join(REPOSITORY, "examples", "legacy_app", "budget.toml")


@pytest.fixture
def hostile_program(request):
    return _path(request, "hostile_program")


@pytest.fixture
def library_programs(facts):
    """The programs using cunumpy's library this build has: {name:
    (command, extra variables)}, the C++ conversion tests and the Python
    time loop (when the build has them)."""
    programs = {}
    tests = facts.get("cpp_tests")
    if tests:
        programs["conversions"] = (
            [os.path.abspath(tests), "--gtest_filter=Conversions.*"], {})
    if facts.get("python_time_loop") and "python" in facts:
        programs["time_loop"] = (
            [facts["python"],
             os.path.join(REPOSITORY, "examples", "python", "time_loop.py"),
             "--fake-device", "--steps", "20"],
            {"PYTHONPATH": facts["python_path"]})
    return programs


@pytest.fixture
def python(request):
    """The Python of the build's module and its PYTHONPATH."""
    return _path(request, "python"), fact(request, "python_path")


@pytest.fixture
def fail_alloc(request):
    return _path(request, "fail_alloc")


@pytest.fixture
def slow_open(request):
    return _path(request, "slow_open")


@pytest.fixture
def fake_mpi(request):
    return _path(request, "fake_mpi")


@pytest.fixture
def kokkos_major(facts):
    return int(facts["kokkos_major"])


@pytest.fixture
def case(request, facts, program):
    """The program in an empty work directory named after the case
    (<work_root>/<case>), with its source file when its
    pytest.mark.program names one."""
    name = request.node.name.removeprefix("test_")
    source = _program_marker(request).kwargs.get("source")
    return Case(os.path.join(facts["work_root"], name), program,
                source and os.path.join(REPOSITORY, source))


# A run whose tests all skipped ends with SKIPPED_STATUS for ctest.
_outcomes = {"passed": 0, "skipped": 0}


def pytest_runtest_logreport(report):
    if report.skipped:
        _outcomes["skipped"] += 1
    elif report.passed and report.when == "call":
        _outcomes["passed"] += 1


def pytest_sessionfinish(session, exitstatus):
    if exitstatus == 0 and _outcomes["skipped"] and not _outcomes["passed"]:
        session.exitstatus = SKIPPED_STATUS
