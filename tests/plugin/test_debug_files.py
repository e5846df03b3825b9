"""Call sites from every way a build ships its debug information: compressed
sections (zlib, zstd), a separate debug file found by .gnu_debuglink or by
build id in debuginfod's cache, split DWARF (.dwo, .dwp); and when none
can be read, the report says why once. The legacy example, changed with
binutils as distributions and HPC stacks change their binaries. Hostile
files (FIFOs, /dev/zero, sizes a section only claims) end no run and cost
no memory; and with a program of the C++ library, a report that runs out
of memory breaks no other, and no event waits for a debug file."""

import os
import re
import resource
import shutil
import struct
import subprocess

import pytest

from plugin_helpers import OUTPUT_COPY, SYNC, phase, program_ran


def copy_program(case, folder):
    """A copy of the example in its own folder of the case."""
    folder = case.path(folder)
    os.makedirs(folder)
    program = os.path.join(folder, os.path.basename(case.program))
    shutil.copyfile(case.program, program)
    shutil.copymode(case.program, program)
    return program


def output_site(case, budget, program, **environment):
    """The output phase's sites, its top one first, and the report's site
    problems."""
    run = case.run(program=program, CUNUMPY_REPORT="report.json",
                   CUNUMPY_BUDGET=budget, **environment)
    program_ran(run)
    report = case.json("report.json", run)
    return phase(report, "output")["top_sites"], report["site_problems"]


def assert_line(case, sites, problems):
    """The output copy's line, and the DualView sync's, which is found
    through the inlined calls of Kokkos' sync (their call sites)."""
    for site in sites:
        text = OUTPUT_COPY if site["what"].startswith('deep_copy("state"') \
            else SYNC
        expected = case.source_line(text)
        assert site["file"].endswith("legacy_app.cpp") and \
            site["line"] == expected, \
            f"the line of {site['what']}: {site['site']}, expected {expected}"
    assert len(sites) == 2, sites
    assert problems == [], f"nothing is missing: {problems}"


def objcopy(*arguments):
    subprocess.run(["objcopy", *arguments], check=True)


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
    with open(program, "r+b") as file:
        data = file.read()
        # ELF64 little-endian: section headers at e_shoff, e_shentsize,
        # e_shnum, e_shstrndx.
        shoff, = struct.unpack_from("<Q", data, 0x28)
        size, count, names = struct.unpack_from("<HHH", data, 0x3a)
        names_offset, = struct.unpack_from("<Q", data,
                                           shoff + names * size + 0x18)
        for index in range(count):
            header = shoff + index * size
            name, = struct.unpack_from("<I", data, header)
            flags, = struct.unpack_from("<Q", data, header + 8)
            offset, = struct.unpack_from("<Q", data, header + 0x18)
            end = data.index(b"\0", names_offset + name)
            if data[names_offset + name:end].startswith(b".debug") and \
                    flags & 0x800:  # SHF_COMPRESSED: ch_type first
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


def libdw_version_at_least(version):
    """Whether this libdw is `version` ((0, 189)) or later."""
    text = subprocess.run(["pkg-config", "--modversion", "libdw"],
                          capture_output=True, text=True).stdout.strip()
    return tuple(int(part) for part in text.split(".")[:2]) >= version


def compressed_section(program, wanted):
    """The offset in an ELF64 little-endian file of the compression header
    of its compressed section `wanted` (ch_type, ch_reserved, ch_size,
    ch_addralign)."""
    with open(program, "rb") as file:
        data = file.read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    size, count, names = struct.unpack_from("<HHH", data, 0x3a)
    names_offset, = struct.unpack_from("<Q", data, shoff + names * size + 0x18)
    for index in range(count):
        header = shoff + index * size
        name, = struct.unpack_from("<I", data, header)
        flags, = struct.unpack_from("<Q", data, header + 8)
        offset, = struct.unpack_from("<Q", data, header + 0x18)
        end = data.index(b"\0", names_offset + name)
        if data[names_offset + name:end] == wanted.encode():
            assert flags & 0x800, f"{wanted} is compressed (SHF_COMPRESSED)"
            return offset
    raise AssertionError(f"no {wanted} in {program}")


def claimed_size(program, section):
    with open(program, "rb") as file:
        file.seek(compressed_section(program, section) + 8)
        return struct.unpack("<Q", file.read(8))[0]


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
