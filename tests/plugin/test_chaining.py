"""Chaining: the plugin loads the next Kokkos tool of the list and forwards
every event to it (the test tool, tests/tools/kp_test_tool.cpp, counts what
it received)."""

import os

import pytest

from plugin_helpers import LEGACY_APP, OUTPUTS, one_warning, program_ran, shown


pytestmark = [LEGACY_APP, pytest.mark.needs("device")]


def check_chained(case, run):
    assert run.status == 0, f"the program must succeed\n{run}"
    counts = case.tool_counts()
    report = case.json("report.json", run)
    trace = case.json("trace.json", run)
    kernels = sum(1 for event in trace["traceEvents"]
                  if event.get("cat") == "kernel")
    regions = sum(1 for event in trace["traceEvents"]
                  if event.get("cat") == "region")
    expected = {"init": 1, "finalize": 1,
                "deep_copy": report["total"]["transfers"],
                "end_deep_copy": report["total"]["transfers"],
                "push_region": regions, "pop_region": regions,
                "kernel": kernels, "dual_view_sync": OUTPUTS,
                "dual_view_modify": OUTPUTS + 1}
    for key, value in expected.items():
        assert counts.get(key) == value, \
            (f"the chained tool received {key} {value}, got "
             f"{counts.get(key)}\n{shown(counts)}")
    assert report["total"]["transfers"] == 21, "cunumpy still counts"


@pytest.mark.chain
def test_chaining(case):
    """The ';' list is in the variable Kokkos reads (ctest's environment)."""
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_TRACE="trace.json",
                   KP_TEST_TOOL_OUTPUT=case.path("tool.txt"))
    check_chained(case, run)


@pytest.mark.needs("reads_kokkos_profile_library")
def test_chaining_tools_libs(case, tool):
    """Kokkos 3 reads KOKKOS_PROFILE_LIBRARY only (from 3.7 Kokkos stops when
    the two variables differ): with two different lists, the plugin follows
    KOKKOS_PROFILE_LIBRARY, the one Kokkos loaded it from."""
    plugin = os.environ["KOKKOS_PROFILE_LIBRARY"]
    run = case.run(CUNUMPY_REPORT="report.json",
                   KP_TEST_TOOL_OUTPUT=case.path("tool.txt"),
                   KOKKOS_TOOLS_LIBS=f"{plugin};{tool}")
    program_ran(run)
    assert not os.path.exists(case.path("tool.txt")), \
        f"the tool listed only in KOKKOS_TOOLS_LIBS is not loaded\n{run}"
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_TRACE="trace.json",
                   KP_TEST_TOOL_OUTPUT=case.path("tool.txt"),
                   KOKKOS_PROFILE_LIBRARY=f"{plugin};{tool}",
                   KOKKOS_TOOLS_LIBS=f"{plugin};{case.path('libkp_other.so')}")
    check_chained(case, run)


def test_bad_next_tool(case):
    plugin = os.environ.get("KOKKOS_TOOLS_LIBS") or \
        os.environ["KOKKOS_PROFILE_LIBRARY"]
    missing = case.path("libkp_missing.so")
    run = case.run(CUNUMPY_REPORT="report.json",
                   KOKKOS_TOOLS_LIBS=f"{plugin};{missing}",
                   KOKKOS_PROFILE_LIBRARY=f"{plugin};{missing}")
    program_ran(run)
    lines = one_warning(run,
                        r"^cunumpy: cannot load the next Kokkos tool "
                        r"'.*libkp_missing\.so': .*; running without it$")
    assert len(lines) == 1, f"and nothing else\n{run}"
    assert case.json("report.json", run)["total"]["transfers"] == 21, \
        "cunumpy still counts"
