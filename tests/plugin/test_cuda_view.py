"""The CUDA view's status (CUDA's own record of the process, CUPTI) in the
plugin's reports, in real processes: off with CUNUMPY_CUPTI=0; on a machine
without a CUDA driver unavailable, saying why, without a note on stderr;
a line in the text report of CUDA builds only, a "cuda_view" object in
every JSON report."""

import ctypes
import os
import re

from plugin_helpers import shown


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


def replayed(case, fake_cuda, budget, *arguments):
    """fake_cuda_app with the fake libcupti taking the subscriber: the H200's
    CUDA calls among Kokkos' events reach the plugin's CUDA view."""
    variables = {
        "LD_LIBRARY_PATH": fake_cuda + ":" + os.environ.get("LD_LIBRARY_PATH",
                                                            ""),
        "CUNUMPY_CUPTI_LIBRARY": os.path.join(fake_cuda, "libcupti.so"),
        "FAKE_CUPTI_REPLAY": "1", "CUNUMPY_BUDGET": budget,
        "CUNUMPY_ON_VIOLATION": "exit", "CUNUMPY_REPORT": "report.json"}
    run = case.run(list(arguments), **variables)
    return run, case.json("report.json", run)


def test_kokkos_own_copies_pass_the_budget(case, cupti_built, fake_cuda,
                                           budget):
    """The lock arrays Kokkos copies at its first launch and the header of
    a device allocation are Kokkos' own: 'integrate' (no copies allowed)
    passes, the program's one copy up counts once, and the report shows
    Kokkos' own copies apart, at their lines."""
    assert cupti_built
    run, report = replayed(case, fake_cuda, budget)
    assert run.status == 0, f"the budget holds\n{run}"
    assert report["cuda_view"]["state"] == "on", shown(report["cuda_view"])
    kinds = report["total"]["kinds"]
    assert kinds["to_device"]["count"] == 1, shown(kinds)
    assert kinds["kokkos_own"]["count"] == 3, shown(kinds)
    assert kinds["kokkos_own"]["bytes"] == 8 + 8 + 128, shown(kinds)
    assert report["budget"]["verdict"] == "ok", shown(report["budget"])
    text_run = case.run(
        [], LD_LIBRARY_PATH=fake_cuda + ":" +
        os.environ.get("LD_LIBRARY_PATH", ""),
        CUNUMPY_CUPTI_LIBRARY=os.path.join(fake_cuda, "libcupti.so"),
        FAKE_CUPTI_REPLAY="1", CUNUMPY_BUDGET=budget,
        CUNUMPY_REPORT="report.txt", CUNUMPY_TRACE="trace.json")
    text = case.read("report.txt")
    own = [event for event in case.json("trace.json", text_run)["traceEvents"]
           if event.get("cat") == "kokkos_own"]
    assert sorted(event["args"]["bytes"] for event in own) == [8, 8, 128] \
        and all(event["args"]["source"] == "cuda" for event in own), \
        f"the trace has Kokkos' own copies, with their bytes\n{shown(own)}"
    assert "; Kokkos' own CUDA copies 3 (144 bytes, not transfers of the " \
        "program)" in text, f"the summary line says so\n{text}\n{text_run}"
    assert "fake_cuda_app.cpp:" in text and \
        "cudaMemcpyToSymbol(nbytes=8) (x2) [cuda]" in text, \
        f"Kokkos' own copies at the program's line\n{text}"


PROGRAMS_OWN_COPIES = {
    "--raw-copy": "cudaMemcpy(nbytes=64)",
    "--uvm-copy": "cudaMemcpy(nbytes=64)",
    "--host-kernel-copy": "cudaMemcpy(nbytes=64)",
    "--thrown-host-kernel": "cudaMemcpy(nbytes=64)",
    "--thrown-device-kernel": "cudaMemcpy(nbytes=64)",
    "--raw-allocation": "cudaMemcpy(nbytes=32768)",
    "--header-size-elsewhere": "cudaMemcpyAsync(nbytes=128)",
}


def test_programs_cuda_copy_breaks_the_budget(case, cupti_built, fake_cuda,
                                              budget):
    """The program's own CUDA copy in 'integrate' where a time window would
    take it for Kokkos': outside any Kokkos event, right after an allocation
    in CudaUVMSpace (whose header Kokkos writes from the host), in a host
    kernel's functor, after a host kernel whose functor threw or a device
    launch that threw (no end event), into a raw CudaSpace allocation, or
    of a header's size to another address than the allocation's. Each is
    the program's transfer: the budget is broken, naming the copy, and
    Kokkos' own copies are still the three of the plain run."""
    assert cupti_built
    for option, copy in PROGRAMS_OWN_COPIES.items():
        run, report = replayed(case, fake_cuda, budget, option)
        assert run.status == 3, \
            f"{option}: CUNUMPY_ON_VIOLATION=exit: status 3\n{run}"
        assert [line for line in run.cunumpy_lines() if copy in line], \
            f"{option}: the broken rule names the copy\n{run}"
        kinds = report["total"]["kinds"]
        assert kinds["kokkos_own"]["count"] == 3, f"{option}\n{shown(kinds)}"
        assert kinds["to_device"]["count"] == 2, f"{option}\n{shown(kinds)}"


def write_budget(tmp_path, integrate):
    path = tmp_path / "budget.toml"
    path.write_text("[phases.setup]\nallow.to_device = { max_count = 1 }\n"
                    "[phases.integrate]\n" + integrate)
    return str(path)


def test_reduction_into_a_host_value_is_the_programs_copy(
        case, cupti_built, fake_cuda, tmp_path):
    """A Cuda parallel_reduce into a host value every step of 'integrate':
    Kokkos copies its result to the host (from pinned memory after its
    fence, or back with a cudaMemcpyAsync) because the program asked for
    it. One to_host a step, at the program's line, with its wait: a phase
    that forbids to_host is broken; one that allows 8-byte reads holds."""
    assert cupti_built
    steps = 5
    for option, nbytes in (("--reduce", 0), ("--reduce-copy", 8)):
        forbidding = write_budget(tmp_path, "")
        run, report = replayed(case, fake_cuda, forbidding, "--steps",
                               str(steps), option)
        assert run.status == 3, f"{option}: to_host is not allowed\n{run}"
        kinds = report["total"]["kinds"]
        assert kinds["to_host"]["count"] == steps, f"{option}\n{shown(kinds)}"
        assert kinds["to_host"]["bytes"] == steps * nbytes, \
            f"{option}\n{shown(kinds)}"
        assert kinds["sync"]["count"] >= steps, f"{option}\n{shown(kinds)}"
        assert kinds["kokkos_own"]["count"] == 3, f"{option}\n{shown(kinds)}"
        sites = [site for site in report["total"]["top_sites"]
                 if site["kind"] == "to_host"]
        assert sites and all("fake_cuda_app.cpp" in site["file"]
                             for site in sites), \
            f"{option}: at the program's line\n{shown(sites)}"
        allowing = write_budget(
            tmp_path, "allow.to_host = { max_nbytes = 8 }\n"
                      "ignore = [\"sync\", \"device_copy\"]\n")
        run, report = replayed(case, fake_cuda, allowing, "--steps",
                               str(steps), option)
        assert run.status == 0, f"{option}: 8-byte reads allowed\n{run}"
        assert report["budget"]["verdict"] == "ok", shown(report["budget"])


def test_migration_is_counted_where_it_happened(case, cupti_built, fake_cuda,
                                                budget):
    """Managed memory allocated in setup, and a page fault in the third step
    of 'integrate' that migrates 64 KiB to the device: CUDA's record of it
    comes at the end of the run, and counts in 'integrate', where it
    happened, which forbids it."""
    assert cupti_built
    run, report = replayed(case, fake_cuda, budget, "--steps", "5",
                           "--migration")
    assert run.status == 3, f"'integrate' forbids migrations\n{run}"
    view = report["cuda_view"]
    assert view["unified_memory"] and view["migrations_unseen"] == "" and \
        view["migration_records"] == 1 and view["migrated_bytes"] == 65536, \
        shown(view)
    integrate = [p for p in report["phases"] if p["name"] == "integrate"][0]
    assert integrate["kinds"]["migration"]["count"] == 1 and \
        integrate["kinds"]["migration"]["bytes"] == 65536, shown(integrate)
    assert [(v["phase"], v["kind"]) for v in
            report["budget"]["violations"]] == [("integrate", "migration")], \
        shown(report["budget"])
