"""Split DWARF as builds ship it: the legacy example built with
-gsplit-dwarf, its .dwo found relative to the program (a copy elsewhere
has none, and the report says where it looked), a .dwp package beside a
copy (DWARF 4, binutils' dwp); hostile split files (a FIFO or /dev/zero as
.dwo, a FIFO as .dwp) end no run, and the report says what the file is."""

import os
import re
import shutil
import subprocess

import pytest

from debug_file_helpers import assert_line, copy_program, output_site
from plugin_helpers import LEGACY_BUDGET, LEGACY_SOURCE, phase, program_ran

pytestmark = [pytest.mark.program("legacy_app_split5", source=LEGACY_SOURCE,
                                  budget=LEGACY_BUDGET),
              pytest.mark.needs("device")]


def dwo_file(program):
    """The split example's .dwo, where the compiler left it."""
    folder = os.path.join(os.path.dirname(program), "CMakeFiles",
                          os.path.basename(program) + ".dir")
    for root, _, files in os.walk(folder):
        for name in files:
            if name.endswith(".dwo"):
                return os.path.join(root, name)
    raise AssertionError(f"no .dwo under {folder}")


def libdw_reads_packages():
    """Whether this libdw reads .dwp packages (elfutils 0.191 and later)."""
    version = subprocess.run(["pkg-config", "--modversion", "libdw"],
                             capture_output=True, text=True).stdout.strip()
    return tuple(int(part) for part in version.split(".")[:2]) >= (0, 191)


def test_split_dwarf_dwo(case, budget):
    """Split DWARF with its .dwo where the compiler left it: the site's
    line, inlined calls expanded from the .dwo."""
    assert_line(case, *output_site(case, budget, case.program))


def test_split_dwarf_missing(case, budget):
    """A copy without its .dwo: the report says where it looked."""
    program = copy_program(case, "without_dwo")
    _, problems = output_site(case, budget, program)
    found = re.fullmatch(r"legacy_app_split5: split DWARF: (.*\.dwo) not "
                         r"found, so inlined calls are not expanded",
                         problems[0] if len(problems) == 1 else "")
    assert found, problems
    # Relative to the copy, where the build's .dwo is not.
    missing = os.path.normpath(found.group(1))
    assert found.group(1).startswith(os.path.dirname(program) + "/") and \
        not os.path.exists(missing) and missing.endswith("legacy_app_split5.dir" +
                         dwo_file(case.program).split(
                             "legacy_app_split5.dir")[1]), missing


@pytest.mark.program("legacy_app_split4", source=LEGACY_SOURCE,
                     budget=LEGACY_BUDGET)
def test_split_dwarf_dwp(case, budget):
    """A copy with a .dwp package beside it (binutils' dwp, DWARF 4): read
    where libdw reads packages; else the report names the package it could
    not read."""
    if shutil.which("dwp") is None:
        pytest.skip("needs binutils' dwp")
    program = copy_program(case, "with_dwp")
    subprocess.run(["dwp", "-o", program + ".dwp", dwo_file(case.program)],
                   check=True)
    sites, problems = output_site(case, budget, program)
    if libdw_reads_packages():
        assert_line(case, sites, problems)
    else:
        assert len(problems) == 1 and problems[0].endswith(
            f"not expanded; {program}.dwp is a DWARF package, which libdw "
            "reads from elfutils 0.191 (this one is 0.188)"), problems


def split_copy(case, budget, folder):
    """A copy of the split example, and where libdw looks for its .dwo
    (from the report's problem while there is none): the compiler's
    directory is relative, so the copy is deep enough in the case's
    folder for that path to be in it too."""
    program = copy_program(case, os.path.join(folder, "build", "bin"))
    _, problems = output_site(case, budget, program)
    found = re.fullmatch(r"legacy_app_split5: split DWARF: (.*\.dwo) not "
                         r"found, so inlined calls are not expanded",
                         problems[0] if len(problems) == 1 else "")
    assert found, problems
    path = found.group(1)
    assert os.path.realpath(path).startswith(case.work + "/"), path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return program, path


def refused_split_file(case, budget, program, path, what):
    """The run ends promptly with its report, the lines of the skeleton,
    and one problem naming the file and what it is."""
    run = case.run(program=program, timeout=120, CUNUMPY_REPORT="report.json",
                   CUNUMPY_BUDGET=budget)
    program_ran(run)
    report = case.json("report.json", run)
    sites = phase(report, "output")["top_sites"]
    assert all(site["file"].endswith("legacy_app.cpp") for site in sites), \
        f"lines from the skeleton: {sites}"
    assert report["site_problems"] == [
        f"legacy_app_split5: split DWARF: {path} is {what}, so inlined "
        "calls are not expanded"], report["site_problems"]


def test_split_dwarf_dwo_is_a_fifo(case, budget):
    """A FIFO where the .dwo belongs: libdw's open of it would wait for a
    writer forever; cunumpy checks the file first and says what it is."""
    program, path = split_copy(case, budget, "dwo_fifo")
    os.mkfifo(path)
    refused_split_file(case, budget, program, path, "a FIFO (named pipe)")


def test_split_dwarf_dwo_is_dev_zero(case, budget):
    """A .dwo that is a link to /dev/zero, which never ends."""
    program, path = split_copy(case, budget, "dwo_zero")
    os.symlink("/dev/zero", path)
    refused_split_file(case, budget, program, path, "a character device")


def test_split_dwarf_dwp_is_a_fifo(case, budget):
    """A FIFO where a .dwp package belongs, which libdw opens itself from
    elfutils 0.191: refused whatever the version."""
    program = copy_program(case, "dwp_fifo")
    os.mkfifo(program + ".dwp")
    refused_split_file(case, budget, program,
                       os.path.realpath(program) + ".dwp",
                       "a FIFO (named pipe)")
