r"""Plugin tests: each runs a real program with libkp_cunumpy loaded the way
kokkos-tools are and checks what the plugin leaves (report, JSON, trace,
exit status, stderr, what a chained tool received).

ctest runs one test function per ctest test, `plugin.<case>`, with the
plugin in KOKKOS_TOOLS_LIBS (Kokkos 4) or KOKKOS_PROFILE_LIBRARY (Kokkos 3)
and the paths as options (CMakeLists.txt):

    python3 -m pytest -q -p no:cacheprovider \
        tests/plugin/test_<topic>.py::test_<case> \
        --program <exe> --work-root <dir> --kokkos-major <N> [--source ...]

`ctest --test-dir build -V -R '^plugin\.<case>$'` prints that command and
its environment, to run it by hand.

To add a case:
1. Write `def test_<case>(case, ...)` in the test_<topic>.py of its topic
   (or a new one; do not reuse a file name of tests/python). Take the
   fixtures below that it needs: `case` runs the program in the test's own
   work directory (`case.run(arguments, CUNUMPY_REPORT="report.json")`),
   `case.json("report.json", run)` reads what it wrote; plugin_helpers.py
   has the other checks and the facts of the legacy example. Check with
   plain asserts, and end each message with `{run}` to show the run.
2. Register it in CMakeLists.txt: `legacy_test(<topic> <case>)` for the
   legacy example, else `plugin_test(<topic> <case> <program> [CHAIN]
   [ARGS ...])`; CHAIN loads the test tool after the plugin. Configuring
   fails while a test function is not registered.
3. A new path or setting from ctest: an option in pytest_addoption and a
   fixture below that reads it, passed in ARGS.
A test that calls pytest.skip ends with status 77, which ctest reports as
skipped (SKIP_RETURN_CODE).
"""

import os

import pytest

pytest.register_assert_rewrite("plugin_helpers")

from plugin_helpers import Case  # noqa: E402  (after the rewrite hook)

SKIPPED_STATUS = 77


def pytest_addoption(parser):
    group = parser.getgroup("cunumpy plugin tests")
    group.addoption("--program", help="the program under test")
    group.addoption("--work-root",
                    help="directory of the work directories, one per test "
                         "(default: pytest's temporary directory)")
    group.addoption("--kokkos-major", type=int, default=3,
                    help="the major version of the Kokkos the program uses")
    group.addoption("--source", help="the program's source file")
    group.addoption("--budget", help="the program's budget file")
    group.addoption("--tool", help="the chained test tool, libkp_test_tool")
    group.addoption("--plugin", help="libkp_cunumpy.so")
    group.addoption("--forwarder", help="libkp_forwarding_tool.so")
    group.addoption("--kernel-only-tool", help="libkp_kernel_only_tool.so")
    group.addoption("--plugin-copy",
                    help="a copy of libkp_cunumpy.so under another name")
    group.addoption("--mpirun", help="mpirun or mpiexec")
    group.addoption("--report-tool", help="cunumpy-report")
    group.addoption("--cupti-built", choices=["ON", "OFF"],
                    help="whether cunumpy was built with the CUPTI collector")
    group.addoption("--fail-alloc",
                    help="tests/tools/fail_alloc.cpp's library, for LD_PRELOAD")
    group.addoption("--slow-open",
                    help="tests/tools/slow_open.cpp's library, for LD_PRELOAD")
    group.addoption("--fake-mpi",
                    help="tests/tools/fake_mpi.cpp's library, for LD_PRELOAD")
    group.addoption("--extension-dir",
                    help="the directory of tests/plugin/python's extension")
    group.addoption("--workload",
                    help="tests/plugin/python/workload.py")
    group.addoption("--fake-cuda",
                    help="the directory of tests/tools/fake_cuda.cpp's "
                         "libcuda.so.1 and libcupti.so")
    group.addoption("--recordings",
                    help="tests/recordings: recordings kept with their reports")
    group.addoption("--fake-cuda-app",
                    help="tests/programs/fake_cuda_app.cpp's program")
    group.addoption("--legacy-app", help="examples/legacy_app's program")
    group.addoption("--legacy-budget", help="examples/legacy_app's rule file")
    group.addoption("--hostile-program",
                    help="tests/programs/hostile_program.cpp's program")
    group.addoption("--cpp-tests", help="the C++ tests' program (GoogleTest)")
    group.addoption("--python", help="the Python of the build's module")
    group.addoption("--python-path",
                    help="PYTHONPATH of the build's module and examples")
    group.addoption("--time-loop", help="examples/python/time_loop.py")


def _option(request, name):
    value = request.config.getoption(name)
    if value is None:
        pytest.fail(f"this test needs --{name.replace('_', '-')} "
                    "(ctest passes it: see tests/plugin/CMakeLists.txt)",
                    pytrace=False)
    return value


def _path(request, name):
    """A file option as an absolute path: programs run in the work
    directory."""
    return os.path.abspath(_option(request, name))


@pytest.fixture
def program(request):
    return _path(request, "program")


@pytest.fixture
def source(request):
    return _path(request, "source")


@pytest.fixture
def budget(request):
    return _path(request, "budget")


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
    return _option(request, "mpirun")


@pytest.fixture
def report_tool(request):
    return _path(request, "report_tool")


@pytest.fixture
def cupti_built(request):
    return _option(request, "cupti_built") == "ON"


@pytest.fixture
def extension_dir(request):
    return _path(request, "extension_dir")


@pytest.fixture
def workload(request):
    return _path(request, "workload")


@pytest.fixture
def fake_cuda(request):
    return _path(request, "fake_cuda")


@pytest.fixture
def recordings(request):
    return _path(request, "recordings")


@pytest.fixture
def fake_cuda_app(request):
    return _path(request, "fake_cuda_app")


@pytest.fixture
def legacy_app(request):
    return _path(request, "legacy_app")


@pytest.fixture
def legacy_budget(request):
    return _path(request, "legacy_budget")


@pytest.fixture
def hostile_program(request):
    return _path(request, "hostile_program")


@pytest.fixture
def library_programs(request):
    """The programs using cunumpy's library this build has: {name:
    (command, extra variables)}, the C++ conversion tests and the Python
    time loop (when the build has them)."""
    programs = {}
    tests = request.config.getoption("cpp_tests")
    if tests:
        programs["conversions"] = (
            [os.path.abspath(tests), "--gtest_filter=Conversions.*"], {})
    python = request.config.getoption("python")
    if python:
        programs["time_loop"] = (
            [python, _path(request, "time_loop"), "--fake-device",
             "--steps", "20"],
            {"PYTHONPATH": _option(request, "python_path")})
    return programs


@pytest.fixture
def python(request):
    """The Python of the build's module and its PYTHONPATH."""
    return _path(request, "python"), _option(request, "python_path")


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
def kokkos_major(request):
    return request.config.getoption("kokkos_major")


@pytest.fixture
def case(request, program, tmp_path):
    """The program in an empty work directory named after the case
    (<work-root>/<case>), with its source file when --source is given."""
    root = request.config.getoption("work_root")
    name = request.node.name.removeprefix("test_")
    work = os.path.join(root, name) if root else tmp_path / name
    source = request.config.getoption("source")
    return Case(work, program, source and os.path.abspath(source))


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
