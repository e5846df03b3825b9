"""A program using cunumpy's library (examples/time_loop) with the plugin
loaded: one recorder, fed once; the library's call sites reach the plugin's
report."""

import pytest

from plugin_helpers import shown

pytestmark = [pytest.mark.program("cpp_time_loop",
                                  source="examples/time_loop/time_loop.cpp"),
              pytest.mark.needs("device")]


def test_with_cunumpy_library(case, source):
    """A program using cunumpy's library with the plugin loaded: one
    recorder, fed once."""
    run = case.run(["20"], CUNUMPY_REPORT="report.json")
    assert run.status == 0, f"the program must succeed\n{run}"
    assert ("wrong way: 40 transfer(s)" in run.stdout and
            "right way: 2 transfer(s)" in run.stdout), \
        f"the program's own counters are not doubled\n{run}"
    report = case.json("report.json", run)
    assert report["total"]["transfers"] == 42, \
        f"the plugin sees them all\n{shown(report['total']['kinds'])}"
    sites = [site["site"] for site in report["total"]["top_sites"]]
    line = case.source_line("state = cunumpy::to_host(device);")
    assert any(site.endswith(f"time_loop.cpp:{line}") for site in sites), \
        f"cunumpy's API call sites reach the plugin's report: {sites}"
