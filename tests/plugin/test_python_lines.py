"""The Python line of each Kokkos event, when a Python program drives
Kokkos through an extension (tests/plugin/python: a Kokkos extension of the
project's own, without debug information, like a wheel): the plugin reads
the innermost Python frame through CPython's C API while the thread holds
the GIL, and shows it beside the native module and offset."""

import os
import re
import shutil

import pytest

from plugin_helpers import shown

pytestmark = [pytest.mark.program("python"),
              pytest.mark.needs("extension_dir"),
              pytest.mark.python_interpreter]


def run_workload(case, extension_dir, workload, *extra, **variables):
    path = extension_dir + os.pathsep + os.environ.get("PYTHONPATH", "")
    run = case.run([workload, *extra], CUNUMPY_REPORT="report.json",
                   PYTHONPATH=path, **variables)
    assert run.status == 0, f"the program runs\n{run}"
    return run, case.json("report.json", run)


def sites_of(report, kind):
    return [site for site in report["total"]["top_sites"]
            if site["kind"] == kind]


NATIVE = r"cunumpy_python_workload\..*so\+0x[0-9a-f]+"


def test_python_lines(case, extension_dir, workload):
    run, report = run_workload(case, extension_dir, workload)
    to_device = sites_of(report, "to_device")
    lines = {(os.path.basename(s["file"]), s["line"], s["function"]): s
             for s in to_device}
    step = lines.get(("workload.py", 10, "step"))
    assert step is not None and step["count"] == 3, \
        f"the step's copies at the Python line that made them\n{shown(to_device)}"
    assert re.fullmatch(NATIVE, step["native"] or ""), \
        f"beside the native module and offset\n{shown(step)}"
    assert step["site"].endswith(f"workload.py:10 (in {step['native']})"), \
        shown(step)
    (to_host,) = sites_of(report, "to_host")
    assert (os.path.basename(to_host["file"]), to_host["line"],
            to_host["function"]) == ("workload.py", 18, "main"), shown(to_host)
    # A copy made with the GIL released: no Python line can be read, so the
    # native frame is the site, and no Python line is made up.
    native_only = [s for s in to_device if re.fullmatch(NATIVE, s["file"])]
    assert len(native_only) == 1 and native_only[0]["python"] is None and \
        native_only[0]["count"] == 1, shown(to_device)


def test_python_lines_in_a_folder_named_cunumpy(case, extension_dir,
                                                workload):
    # cunumpy's own Python frames are skipped by identity (the folder of
    # the package imported as cunumpy), not by a folder's name: a user's
    # script in a folder named cunumpy is the user's line.
    folder = case.path("cunumpy")
    os.makedirs(folder, exist_ok=True)
    copy = os.path.join(folder, "workload.py")
    shutil.copyfile(workload, copy)
    run, report = run_workload(case, extension_dir, copy)
    steps = [s for s in sites_of(report, "to_device")
             if s["file"] == copy and s["line"] == 10]
    assert len(steps) == 1 and steps[0]["count"] == 3, \
        f"the script's line, in a folder named cunumpy\n" \
        f"{shown(report['total']['top_sites'])}"


def test_python_lines_off(case, extension_dir, workload):
    # Without call sites (CUNUMPY_BACKTRACE=0), no Python line either.
    run, report = run_workload(case, extension_dir, workload,
                               CUNUMPY_BACKTRACE="0")
    assert all(s["python"] is None and os.path.basename(s["file"]) != "workload.py"
               for s in report["total"]["top_sites"]), \
        shown(report["total"]["top_sites"])
