"""What the debug-file cases share: copies of a program, the legacy
example's output site and its check, objcopy, libdw's version, the sizes
compressed sections claim."""

import os
import shutil
import struct
import subprocess

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


def libdw_version_at_least(version):
    """Whether this libdw is `version` ((0, 189)) or later."""
    text = subprocess.run(["pkg-config", "--modversion", "libdw"],
                          capture_output=True, text=True).stdout.strip()
    return tuple(int(part) for part in text.split(".")[:2]) >= version


def sections(program):
    """(name, flags, offset) of each section of an ELF64 little-endian file:
    section headers at e_shoff, e_shentsize, e_shnum, e_shstrndx."""
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
        yield data[names_offset + name:end].decode(), flags, offset


SHF_COMPRESSED = 0x800  # the section starts with a compression header


def compressed_section(program, wanted):
    """The offset in an ELF64 little-endian file of the compression header
    of its compressed section `wanted` (ch_type, ch_reserved, ch_size,
    ch_addralign)."""
    for name, flags, offset in sections(program):
        if name == wanted:
            assert flags & SHF_COMPRESSED, f"{wanted} is compressed"
            return offset
    raise AssertionError(f"no {wanted} in {program}")


def claimed_size(program, section):
    with open(program, "rb") as file:
        file.seek(compressed_section(program, section) + 8)
        return struct.unpack("<Q", file.read(8))[0]
