"""A Kokkos build without a device (Kokkos 4 has no fake one): no
transfers, but regions, kernels, chaining and the budget's calls rule still
work on the real program, and the verdict says that no copy could be
checked."""

import re

import pytest

from plugin_helpers import (LEGACY_APP, OUTPUTS, STEPS, VIOLATION_STATUS,
                            region, shown)


pytestmark = [LEGACY_APP, pytest.mark.needs("no_device"), pytest.mark.chain]


def test_host_only(case, kokkos_major):
    """Run with the test tool chained after the plugin."""
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_TRACE="trace.json",
                   KP_TEST_TOOL_OUTPUT=case.path("tool.txt"))
    assert run.status == 0, f"the program must succeed\n{run}"
    report = case.json("report.json", run)
    assert (region(report, "integrate")["calls"] == STEPS and
            region(report, "output")["calls"] == OUTPUTS and
            report["total"]["transfers"] == 0), \
        ("regions are phases; host copies are no transfers\n" +
         shown(report["regions"]))
    trace = case.json("trace.json", run)["traceEvents"]
    counts = case.tool_counts()

    def slices(category):
        return sum(1 for event in trace if event.get("cat") == category)

    assert (counts["init"] == 1 and counts["finalize"] == 1 and
            counts["push_region"] == slices("region") and
            counts["kernel"] == slices("kernel") and slices("kernel") > 0), \
        ("the chained tool and the trace saw the same regions and kernels\n" +
         shown(counts))
    assert slices("fence") == 0, \
        "fences of host execution spaces are no waits for a device"
    budget = case.write("calls.toml", "[phases.integrate]\ncalls = 1\n")
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BUDGET=budget,
                   CUNUMPY_ON_VIOLATION="exit")
    assert run.status == VIOLATION_STATUS, \
        f"a broken calls rule fails the run\n{run}"
    report = case.json("report.json", run)
    violations = report["budget"]["violations"]
    assert [(v["phase"], v["limit"]) for v in violations] == \
        [("integrate", "calls"), ("", "no_device")], \
        f"the calls rule, and nothing else could be checked\n{shown(violations)}"
    assert violations[0]["actual"] == str(STEPS), shown(violations)
    assert (report["budget"]["verdict"] == "broken" and
            not report["device"]["present"] and
            report["device"]["reason"].startswith(
                "no device memory space in this program (backends: ")), \
        shown(report["device"])
    # Kokkos 3 declares its default execution space by the mangled name of
    # its type (N6Kokkos6SerialE): the report names it as Kokkos 4 does.
    assert report["kokkos"]["backends"] and all(
        re.fullmatch(r"[A-Za-z]+", name)
        for name in report["kokkos"]["backends"]), shown(report["kokkos"])
