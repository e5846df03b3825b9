"""Reading a program's debug information while it runs, with a program of
the C++ library (tests/programs/reports_with_debug_files.cpp): a report
that runs out of memory breaks no other, no event waits for a debug file
that is slow to open, and an exit while a report reads one ends the
process with the plugin's report."""

import os
import re

import pytest

from debug_file_helpers import (claimed_size, copy_program,
                                libdw_version_at_least, objcopy)

pytestmark = [pytest.mark.program("reports_with_debug_files"),
              pytest.mark.needs("device")]


def library_run(case, *arguments, program=None, **variables):
    """The C++ library's program, without the plugin."""
    return case.run(list(arguments), program=program,
                    KOKKOS_PROFILE_LIBRARY=None, KOKKOS_TOOLS_LIBS=None,
                    **variables)


def test_a_report_out_of_memory_breaks_no_other(case, fail_alloc):
    """C++ library: the allocation of the program's decompressed
    .debug_info fails (cunumpy decompresses zstd where libelf cannot,
    elfutils before 0.189). Neither report throws: each names the copy's
    module+offset and says why; the second is made as the first."""
    if libdw_version_at_least((0, 189)):
        pytest.skip("libelf decompresses zstd itself (elfutils 0.189 on)")
    program = copy_program(case, "zstd")
    objcopy("--compress-debug-sections=zstd", program)
    run = library_run(case, "twice", program=program, LD_PRELOAD=fail_alloc,
                      FAIL_ALLOC_SIZE=claimed_size(program, ".debug_info"))
    assert run.status == 0, f"no crash\n{run}"
    assert "threw" not in run.stdout and "report 1:" in run.stdout and \
        "report 2:" in run.stdout, f"two reports, neither thrown\n{run}"
    name = os.path.basename(program)
    assert re.search(rf"site: {name}\+0x[0-9a-f]+\nproblem: {name}: not "
                     "enough memory to read its debug information\n",
                     run.stdout), f"module+offset and why\n{run}"


def test_events_wait_for_no_debug_file(case, slow_open):
    """C++ library: a report reads debug files outside the recorder's lock.
    While the program's own file takes 2 s to open for the report, another
    thread goes on copying, and the report names its line."""
    run = library_run(case, "concurrent", LD_PRELOAD=slow_open,
                      SLOW_OPEN_PATH="/proc/self/exe", SLOW_OPEN_SECONDS=2)
    assert run.status == 0, run
    copies = re.search(r"copies while reporting: (\d+)", run.stdout)
    assert copies and int(copies.group(1)) >= 100, \
        f"copies made while the report waited for the file\n{run}"
    assert re.search(r"reports_with_debug_files\.cpp:\d+", run.stdout), \
        f"the copy's line\n{run}"


def test_exit_while_symbolizing(case, slow_open):
    """Under the plugin: SIGALRM's handler ends the process while a report
    of the C++ library reads the program's file on that thread. The
    plugin's report at the exit waits for no symbolizing: it is written,
    its stacks not symbolized, and says so."""
    run = case.run(["exit_while_reporting"], timeout=60, LD_PRELOAD=slow_open,
                   SLOW_OPEN_PATH="/proc/self/exe", SLOW_OPEN_SECONDS=5,
                   CUNUMPY_REPORT="report.json")
    assert run.status == 0, f"ended by the handler's exit(0)\n{run}"
    problems = case.json("report.json", run)["site_problems"]
    assert any(problem.startswith("stacks not symbolized for this report")
               for problem in problems), problems
