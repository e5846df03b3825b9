"""Chains of Kokkos tools in any order: the plugin first, second behind a
forwarding tool (as kokkos-tools' sampler or kernel-filter load theirs),
twice, or behind a tool that passes on kernels only; given on the command
line; and a next tool that writes its file over cunumpy's report. Every
event reaches the last tool exactly once, and cunumpy's report is the same
at any position. tool_events makes its copies through Kokkos' own entry
points, so these run on every Kokkos."""

import os

import pytest

from plugin_helpers import count, nbytes, one_warning, region, shown

pytestmark = pytest.mark.program("tool_events")

STEPS = 10
# Per run of tool_events: a copy of 8 bytes per step, of 64 bytes in the
# two outputs; a region per step and per output; a kernel per step.
COPIES, COPY_BYTES = STEPS + 2, STEPS * 8 + 2 * 64
REGIONS, KERNELS = STEPS + 2, STEPS


def run_chain(case, *libraries, arguments=(), status=0, **variables):
    """Runs tool_events with `libraries` as the tools list, in both
    variables (Kokkos 3 reads one, Kokkos 4 the other)."""
    chain = ";".join(libraries)
    variables.setdefault("KOKKOS_TOOLS_LIBS", chain)
    variables.setdefault("KOKKOS_PROFILE_LIBRARY", chain)
    variables.setdefault("KP_TEST_TOOL_OUTPUT", case.path("last.txt"))
    variables.setdefault("KP_FORWARDING_TOOL_OUTPUT", case.path("forwarder.txt"))
    run = case.run(arguments, **variables)
    assert run.status == status and f"tool_events: {STEPS} steps" in run.stdout, \
        f"the program runs to its end, with status {status}\n{run}"
    return run


def check_last_tool(case, run):
    """The last tool of the chain received every event exactly once."""
    counts = case.tool_counts("last.txt")
    expected = {"init": 1, "finalize": 1, "deep_copy": COPIES,
                "end_deep_copy": COPIES, "push_region": REGIONS,
                "pop_region": REGIONS, "kernel": KERNELS,
                "dual_view_sync": 1, "dual_view_modify": 1}
    for key, value in expected.items():
        assert counts.get(key) == value, \
            f"the last tool received {key} {value} times\n{shown(counts)}\n{run}"


def check_report(case, run):
    """cunumpy's report of tool_events, whatever cunumpy's position."""
    report = case.json("report.json", run)
    total = report["total"]
    assert (count(total, "to_device") == COPIES and
            nbytes(total, "to_device") == COPY_BYTES and
            report["total"]["transfers"] == COPIES), \
        f"every copy counted once\n{shown(total)}\n{run}"
    step = region(report, "step")
    assert step["calls"] == STEPS and count(step, "to_device") == STEPS, \
        f"the region step\n{shown(step)}"
    assert region(report, "output")["calls"] == 2, "the region output"
    assert report["complete"], \
        f"nothing was lost\n{shown(report['losses'])}\n{run}"
    return report


def test_alone(case, plugin, tool):
    run = run_chain(case, plugin, tool, CUNUMPY_REPORT="report.json")
    check_last_tool(case, run)
    check_report(case, run)


def test_first(case, plugin, forwarder, tool):
    run = run_chain(case, plugin, forwarder, tool, CUNUMPY_REPORT="report.json")
    check_last_tool(case, run)
    check_report(case, run)
    forwarded = case.tool_counts("forwarder.txt")
    assert forwarded["load_sequence"] == 1, \
        ("the next tool gets the plugin's load sequence + 1 (the sampler "
         f"finds its place in the list by it)\n{shown(forwarded)}")
    assert forwarded["deep_copy"] == COPIES, shown(forwarded)


def test_second(case, plugin, forwarder, tool):
    """Behind a forwarding tool that Kokkos loaded first (this crashed when
    the plugin took the first tool's kokkosp_init_library for its own)."""
    run = run_chain(case, forwarder, plugin, tool, CUNUMPY_REPORT="report.json")
    check_last_tool(case, run)
    report = check_report(case, run)
    assert report["callbacks_watched"], "the first tool's entries are watched"
    assert case.tool_counts("forwarder.txt")["load_sequence"] == 0
    assert run.cunumpy_lines() == [], f"nothing to say\n{run}"


def test_behind_kernel_only_tool(case, plugin, kernel_only_tool, tool):
    """A first tool that passes on only kernels (kokkos-tools' sampler):
    cunumpy sees no copy, and says so instead of reporting 0 transfers."""
    budget = case.write("budget.toml", "[phases.step]\n")
    run = run_chain(case, kernel_only_tool, plugin, tool,
                    CUNUMPY_REPORT="report.json", CUNUMPY_BUDGET=budget)
    report = case.json("report.json", run)
    assert not report["complete"] and any(
        "does not pass on" in loss and "begin_deep_copy" in loss
        for loss in report["losses"]), \
        f"the report says what cunumpy cannot see\n{shown(report['losses'])}"
    assert not report["budget"]["ok"], "the budget cannot pass"
    one_warning(run, r"^cunumpy: Kokkos calls cunumpy through the tool .*"
                     r"kp_kernel_only_tool.*put libkp_cunumpy first")
    run_chain(case, kernel_only_tool, plugin, tool, CUNUMPY_BUDGET=budget,
              CUNUMPY_ON_VIOLATION="exit", status=3)


def test_copy_of_the_plugin(case, plugin, plugin_copy, tool):
    run = run_chain(case, plugin, plugin_copy, tool, CUNUMPY_REPORT="report.json")
    one_warning(run, r"^cunumpy: the Kokkos tools list names libkp_cunumpy "
                     r"twice \('.*libkp_cunumpy_copy\.so'\); loading it once$")
    check_last_tool(case, run)
    check_report(case, run)


def test_command_line(case, plugin, tool, kokkos_major):
    """Kokkos takes the tools list from its command line too."""
    option = "--kokkos-tools-libs" if kokkos_major >= 4 else \
        "--kokkos-tools-library"
    run = run_chain(case, arguments=[f"{option}={plugin};{tool}"],
                    KOKKOS_TOOLS_LIBS=None, KOKKOS_PROFILE_LIBRARY=None,
                    CUNUMPY_REPORT="report.json")
    check_last_tool(case, run)
    check_report(case, run)


def test_next_tool_writes_the_report(case, plugin, tool):
    """The next tool writes its file at finalize, before cunumpy writes its
    report: a path another tool wrote during the run is not overwritten."""
    target = case.path("report.json")
    run = run_chain(case, plugin, tool, CUNUMPY_REPORT=target,
                    KP_TEST_TOOL_OUTPUT=target)
    one_warning(run, r"^cunumpy: CUNUMPY_REPORT: cannot write '.*report\.json' "
                     r"\(someone else wrote it during the run.*\); the summary "
                     r"goes to stderr instead$")
    assert case.read("report.json").startswith("init 1\n"), \
        f"the other tool's file is kept\n{case.read('report.json')}"
    assert any("12 transfer(s) through cunumpy" in line
               for line in run.cunumpy_lines()), f"the summary\n{run}"
    assert os.path.exists(target)


def test_next_tool_is_a_fifo(case, plugin):
    """A FIFO named as the next tool would block dlopen, so
    Kokkos::initialize, until a writer came: the plugin says what it is in
    one line and runs without it, its report whole."""
    fifo = case.path("libkp_fifo.so")
    os.mkfifo(fifo)
    run = run_chain(case, plugin, fifo, CUNUMPY_REPORT="report.json")
    one_warning(run, r"^cunumpy: cannot load the next Kokkos tool '.*"
                     r"libkp_fifo\.so': it is a FIFO \(named pipe\), not a "
                     r"library; running without it$")
    check_report(case, run)
