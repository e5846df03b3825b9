"""CUNUMPY_DEBUG_SYNC=1: the host waits after every kernel, and each wait is
an implicit sync named after the kernel, in the region that was open."""

import pytest

from plugin_helpers import count, region, shown

pytestmark = pytest.mark.program("tool_events")

STEPS = 10


def test_debug_sync(case, plugin):
    run = case.run(KOKKOS_TOOLS_LIBS=plugin, KOKKOS_PROFILE_LIBRARY=plugin,
                   CUNUMPY_REPORT="report.json", CUNUMPY_DEBUG_SYNC="1")
    assert run.status == 0, f"{run}"
    report = case.json("report.json", run)
    syncs = report["total"]["kinds"]["sync"]
    assert syncs["count"] == STEPS and syncs["implicit"] == STEPS, \
        f"one wait per kernel\n{shown(syncs)}"
    step = region(report, "step")
    assert count(step, "sync") == STEPS, f"in the region\n{shown(step)}"
    whats = {site["what"] for site in step["top_sites"]}
    assert 'debug_sync(after kernel "tool_events::kernel")' in whats, \
        shown(step["top_sites"])
    run = case.run(KOKKOS_TOOLS_LIBS=plugin, KOKKOS_PROFILE_LIBRARY=plugin,
                   CUNUMPY_REPORT="report.json")
    assert case.json("report.json", run)["total"]["kinds"]["sync"]["count"] \
        == 0, "off by default"
    run = case.run(KOKKOS_TOOLS_LIBS=plugin, KOKKOS_PROFILE_LIBRARY=plugin,
                   CUNUMPY_DEBUG_SYNC="yes")
    assert any('CUNUMPY_DEBUG_SYNC="yes" is not an integer in [0, 1]' in line
               for line in run.cunumpy_lines()), f"a bad value, one line\n{run}"
