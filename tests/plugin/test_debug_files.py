"""Call sites from the ways a build ships its debug information: compressed
sections (zlib, zstd), a separate debug file found by .gnu_debuglink or by
build id in debuginfod's cache; and when none can be read, the report says
why once. The legacy example, changed with binutils as distributions and
HPC stacks change their binaries. Compressed sections claiming sizes they
do not hold end no run and cost no memory. Split DWARF:
test_split_dwarf.py."""

import os
import re
import resource
import shutil
import struct
import subprocess

import pytest

from debug_file_helpers import (SHF_COMPRESSED, assert_line,
                                compressed_section, copy_program, objcopy,
                                output_site, sections)
from plugin_helpers import LEGACY_APP, phase, program_ran

pytestmark = [LEGACY_APP, pytest.mark.needs("device")]


def build_id(program):
    notes = subprocess.run(["readelf", "-n", program], check=True,
                           capture_output=True, text=True).stdout
    return re.search(r"Build ID: ([0-9a-f]+)", notes).group(1)


def split_off_debug(program):
    """program.debug with the debug sections; the program without them."""
    debug = program + ".debug"
    objcopy("--only-keep-debug", program, debug)
    subprocess.run(["strip", "--strip-debug", program], check=True)
    return debug


def test_compressed_zlib(case, budget):
    program = copy_program(case, "zlib")
    objcopy("--compress-debug-sections=zlib", program)
    assert_line(case, *output_site(case, budget, program))


def test_compressed_zstd(case, budget):
    """zstd: read with the libelf where it can (elfutils 0.189 and later),
    by cunumpy otherwise."""
    program = copy_program(case, "zstd")
    objcopy("--compress-debug-sections=zstd", program)
    assert_line(case, *output_site(case, budget, program))


def test_unknown_compression_is_said(case, budget):
    """A compression type no reader knows: module+offset, and why."""
    program = copy_program(case, "unknown")
    objcopy("--compress-debug-sections=zlib", program)
    headers = [offset for name, flags, offset in sections(program)
               if name.startswith(".debug") and flags & SHF_COMPRESSED]
    assert headers, f"no compressed debug section in {program}"
    with open(program, "r+b") as file:
        for offset in headers:  # ch_type first
            file.seek(offset)
            file.write(struct.pack("<I", 77))
    sites, problems = output_site(case, budget, program)
    assert re.fullmatch(r"legacy_app\+0x[0-9a-f]+", sites[0]["file"]), \
        f"module+offset: {sites[0]['site']}"
    assert problems == ["legacy_app: its debug sections are compressed with "
                        "an algorithm cunumpy cannot read (ELF compression "
                        "type 77)"], problems


def test_debuglink_beside_and_in_dot_debug(case, budget):
    program = copy_program(case, "debuglink")
    debug = split_off_debug(program)
    objcopy("--add-gnu-debuglink=" + debug, program)
    assert_line(case, *output_site(case, budget, program))
    # The same file in .debug/ beside the program.
    folder = os.path.join(os.path.dirname(program), ".debug")
    os.makedirs(folder)
    os.rename(debug, os.path.join(folder, os.path.basename(debug)))
    assert_line(case, *output_site(case, budget, program))


def test_build_id_in_debuginfod_cache(case, budget):
    program = copy_program(case, "build_id")
    debug = split_off_debug(program)
    cache = case.path("debuginfod")
    os.makedirs(os.path.join(cache, build_id(program)))
    os.rename(debug, os.path.join(cache, build_id(program), "debuginfo"))
    sites, problems = output_site(case, budget, program)
    assert re.fullmatch(r"legacy_app\+0x[0-9a-f]+", sites[0]["file"]), \
        f"not found without the cache's variable: {sites[0]['site']}"
    assert_line(case, *output_site(case, budget, program,
                                   DEBUGINFOD_CACHE_PATH=cache))


def test_missing_debug_file_says_where_it_looked(case, budget):
    program = copy_program(case, "missing")
    debug = split_off_debug(program)
    objcopy("--add-gnu-debuglink=" + debug, program)
    # Another build's file under the name the link gives.
    shutil.copyfile(case.program, debug)
    subprocess.run(["strip", "--only-keep-debug", debug], check=True)
    objcopy("--remove-section=.note.gnu.build-id", debug)
    cache = case.path("empty-cache")
    sites, problems = output_site(case, budget, program,
                                  DEBUGINFOD_CACHE_PATH=cache)
    assert re.fullmatch(r"legacy_app\+0x[0-9a-f]+", sites[0]["file"]), \
        f"module+offset: {sites[0]['site']}"
    folder = os.path.dirname(program)
    identifier = build_id(program)
    assert problems == [
        "legacy_app: no debug information, and no separate debug file at "
        f"/usr/lib/debug/.build-id/{identifier[:2]}/{identifier[2:]}.debug, "
        f"{cache}/{identifier}/debuginfo, {debug}, "
        f"{folder}/.debug/legacy_app.debug, "
        f"/usr/lib/debug{folder}/legacy_app.debug "
        f"({debug} is another build's)"], problems
    # The text report says it once, as a note.
    run = case.run(program=program, CUNUMPY_REPORT="report.txt",
                   DEBUGINFOD_CACHE_PATH=cache)
    program_ran(run)
    text = case.read("report.txt")
    assert text.count("note: call sites of legacy_app: no debug "
                      "information") == 1, text


def test_stripped_program_says_why(case, budget):
    program = copy_program(case, "stripped")
    subprocess.run(["strip", "--strip-all", program], check=True)
    sites, problems = output_site(case, budget, program,
                                  DEBUGINFOD_CACHE_PATH=case.path("none"))
    assert re.fullmatch(r"legacy_app\+0x[0-9a-f]+", sites[0]["file"]), \
        sites[0]["site"]
    assert len(problems) == 1 and problems[0].startswith(
        "legacy_app: no debug information, and no separate debug file at "
        "/usr/lib/debug/.build-id/"), problems


def claim_size(program, section, size):
    """Makes a compressed section's header claim `size` bytes, its bytes
    unchanged."""
    offset = compressed_section(program, section)
    with open(program, "r+b") as file:
        file.seek(offset + 8)
        file.write(struct.pack("<Q", size))


def claimed_too_much(case, budget, folder, size):
    """A zstd .debug_aranges of some 200 bytes claiming `size`: refused
    before anything is allocated, said, the report written, the program's
    exit status its own; the run's memory stays that of the program."""
    program = copy_program(case, folder)
    objcopy("--compress-debug-sections=zstd", program)
    claim_size(program, ".debug_aranges", size)
    run = case.run(program=program, CUNUMPY_REPORT="report.json",
                   CUNUMPY_BUDGET=budget, CUNUMPY_ON_VIOLATION="exit")
    program_ran(run)
    report = case.json("report.json", run)
    sites = phase(report, "output")["top_sites"]
    assert re.fullmatch(r"legacy_app\+0x[0-9a-f]+", sites[0]["file"]), \
        f"module+offset: {sites[0]['site']}"
    problems = report["site_problems"]
    assert len(problems) == 1 and re.fullmatch(
        rf"legacy_app: \.debug_aranges claims {size} bytes compressed in "
        r"\d+, more than 1032 times as many \(a damaged file\?\)",
        problems[0]), problems
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    assert peak < 512 << 20, f"{peak} bytes at most in a run"


def test_compressed_section_claiming_1_gib(case, budget):
    claimed_too_much(case, budget, "claims_1_gib", 1 << 30)


def test_compressed_section_claiming_4_tib(case, budget):
    claimed_too_much(case, budget, "claims_4_tib", 4 << 40)
