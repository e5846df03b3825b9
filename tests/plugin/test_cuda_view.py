"""The CUDA view's status (CUDA's own record of the process, CUPTI) in the
plugin's reports, in real processes: off with CUNUMPY_CUPTI=0; on a machine
without a CUDA driver unavailable, saying why, without a note on stderr;
a line in the text report of CUDA builds only, a "cuda_view" object in
every JSON report."""

import ctypes
import os
import re

import pytest

from plugin_helpers import shown

pytestmark = pytest.mark.program("tool_events")


def has_cuda_driver():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def reports(case, **variables):
    run = case.run(CUNUMPY_REPORT="report.json", **variables)
    assert run.status == 0, f"the program must succeed\n{run}"
    report = case.json("report.json", run)
    text_run = case.run(CUNUMPY_REPORT="report.txt", **variables)
    assert text_run.status == 0, f"the program must succeed\n{text_run}"
    return run, report["cuda_view"], case.read("report.txt")


def test_cuda_view_off(case, cupti_built):
    run, view, text = reports(case, CUNUMPY_CUPTI="0")
    assert view["built"] == cupti_built, shown(view)
    if not cupti_built:
        assert view["state"] == "not built", shown(view)
        assert not re.search(r"^CUDA view", text, re.M), \
            f"a build without CUDA keeps its text report as it was\n{text}"
        return
    assert view["state"] == "off" and view["reason"] == "CUNUMPY_CUPTI=0", \
        shown(view)
    assert "CUDA view: off (CUNUMPY_CUPTI=0)\n" in text, text
    assert run.cunumpy_lines() == [], f"nothing to say on stderr\n{run}"


def test_cuda_view_default(case, cupti_built):
    run, view, text = reports(case)
    assert view["built"] == cupti_built, shown(view)
    if not cupti_built:
        assert view["state"] == "not built", shown(view)
        assert not re.search(r"^CUDA view", text, re.M), text
        return
    if has_cuda_driver():
        # A GPU machine: on, or unavailable with one note saying why.
        assert view["state"] in ("on", "unavailable"), shown(view)
        if view["state"] == "on":
            assert "CUDA view: on" in text, text
        return
    assert view["state"] == "unavailable", shown(view)
    assert "no CUDA driver" in view["reason"], shown(view)
    assert "CUDA view: unavailable: no CUDA driver on this machine" in text, \
        text
    assert run.cunumpy_lines() == [], \
        f"a CUDA build on a machine without a driver says nothing\n{run}"
    assert view["copy_records"] == 0 and view["migrated_bytes"] == 0, \
        shown(view)


def test_cuda_view_bad_setting(case, cupti_built):
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_CUPTI="yes")
    assert run.status == 0, f"the program must succeed\n{run}"
    lines = [line for line in run.cunumpy_lines() if "CUNUMPY_CUPTI" in line]
    assert len(lines) == 1, f"one line names the bad setting\n{run}"
    view = case.json("report.json", run)["cuda_view"]
    assert view["state"] != "off", \
        f"a value that is not 0 leaves the CUDA view on\n{shown(view)}"


def test_cuda_view_cupti_taken(case, cupti_built, fake_cuda):
    """Another CUPTI user holds CUPTI (a driver and a libcupti that only
    answer, tests/tools/fake_cuda.cpp, the latter saying Nsight Systems
    subscribed first): one note on stderr names it, the program and its
    Kokkos copies go on, and the reports say the CUDA view is unavailable
    and why."""
    assert cupti_built
    variables = {
        "LD_LIBRARY_PATH": fake_cuda + ":" + os.environ.get("LD_LIBRARY_PATH",
                                                            ""),
        "CUNUMPY_CUPTI_LIBRARY": os.path.join(fake_cuda, "libcupti.so")}
    run, view, text = reports(case, **variables)
    notes = [line for line in run.cunumpy_lines()
             if "CUPTI is taken by another CUPTI user" in line]
    assert len(notes) == 1, f"one note\n{run}"
    assert notes[0].startswith(
        "cunumpy: note: CUDA's own record of copies and migrations is off: "
        "CUPTI is taken by another CUPTI user (Nsight Systems), and CUDA "
        "allows one per process"), notes[0]
    assert notes[0].endswith("; cunumpy counts the copies Kokkos "
                             "reports"), notes[0]
    assert view["state"] == "unavailable", shown(view)
    assert "CUPTI is taken by another CUPTI user (Nsight Systems)" in \
        view["reason"], shown(view)
    assert "CUDA view: unavailable: CUPTI is taken by another CUPTI user" in \
        text, text
    report = case.json("report.json", run)
    assert report["total"]["kinds"]["to_device"]["count"] > 0, \
        f"Kokkos' copies are counted\n{shown(report['total'])}"


def test_cuda_view_named_library_refused(case, cupti_built, fake_cuda,
                                         tmp_path):
    """A libcupti the user named (CUNUMPY_CUPTI_LIBRARY) is used or refused
    by name in one line, never replaced by another one found on the path
    (the fake CUDA's directory holds a libcupti.so that would load); a FIFO
    never blocks the program."""
    assert cupti_built
    fifo = tmp_path / "libcupti_fifo.so"
    os.mkfifo(fifo)
    text = tmp_path / "libcupti_text.so"
    text.write_text("not a library\n")
    cases = {
        str(fifo): "is a FIFO (named pipe), not a library",
        str(tmp_path): "is a directory, not a library",
        str(text): "cannot be loaded (",
        "libm.so.6": "lacks cuptiSubscribe, ",
    }
    for library, problem in cases.items():
        variables = {
            "LD_LIBRARY_PATH": fake_cuda + ":" +
            os.environ.get("LD_LIBRARY_PATH", ""),
            "CUNUMPY_CUPTI_LIBRARY": library}
        run, view, _ = reports(case, **variables)
        named = f"CUNUMPY_CUPTI_LIBRARY='{library}' {problem}"
        notes = [line for line in run.cunumpy_lines() if "CUDA" in line]
        assert len(notes) == 1 and named in notes[0], \
            f"one note naming the library and what is wrong\n{run}"
        assert view["state"] == "unavailable" and named in view["reason"], \
            shown(view)
        assert "taken by another CUPTI user" not in view["reason"], \
            f"the fake libcupti on the path was not used instead\n{shown(view)}"
    run, view, _ = reports(case, **{
        "LD_LIBRARY_PATH": fake_cuda + ":" +
        os.environ.get("LD_LIBRARY_PATH", ""),
        "CUNUMPY_CUPTI_LIBRARY": "libm.so.6"})
    assert "(it is not libcupti)" in view["reason"], shown(view)
