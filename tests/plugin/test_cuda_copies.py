"""The copies the CUDA view sees, attributed: the H200's CUDA calls among
Kokkos' events (tests/programs/fake_cuda_app.cpp, replayed through the fake
libcupti of tests/tools/fake_cuda.cpp). Kokkos' own copies pass a budget
that allows none; the program's own CUDA copies, a reduction into a host
value and a migration count at the program's lines."""

import os

import pytest

from plugin_helpers import shown

pytestmark = pytest.mark.program("fake_cuda_app",
                                 budget="tests/plugin/fake_cuda_budget.toml")


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
