"""The frame cache: the call sites read from debug information in one run
are kept by the program's build id (CUNUMPY_SITE_CACHE) and found there by
the next runs, which show the same sites without reading debug
information."""

import glob
import json
import os
import re
import shutil
import subprocess

from plugin_helpers import OUTPUT_COPY, one_warning, phase, program_ran, shown


def build_id(path):
    """The GNU build id of an ELF file, as readelf prints it."""
    text = subprocess.run(["readelf", "-n", path], capture_output=True,
                          text=True, check=True).stdout
    found = re.search(r"Build ID: ([0-9a-f]+)", text)
    assert found, f"{path} has a build id\n{text}"
    return found.group(1)


def output_site(report):
    """(file, line) of the output phase's top site."""
    top = phase(report, "output")["top_sites"][0]
    return top["file"], top["line"]


def sites_of(report):
    """The sites of every phase, with what they counted (not advice's,
    whose findings depend on measured times), in a set."""
    return {(p["name"], site["file"], site["line"], site["count"],
             site["bytes"])
            for p in report["phases"] for site in p["top_sites"]}


def test_sites_are_kept_by_build_id(case, budget):
    cache = case.path("cache")
    run = case.run(CUNUMPY_BUDGET=budget, CUNUMPY_REPORT="first.json", CUNUMPY_SITE_CACHE=cache)
    program_ran(run)
    first = case.json("first.json", run)
    file, line = output_site(first)
    assert line == case.source_line(OUTPUT_COPY), shown(phase(first, "output"))
    kept = os.path.join(cache, build_id(case.program) + ".sites.json")
    files = glob.glob(os.path.join(cache, "*"))
    assert kept in files, f"a file named by the program's build id\n{run}"
    assert all(re.fullmatch(r"[0-9a-f]+\.sites\.json", os.path.basename(f))
               for f in files), \
        f"and one per library its stacks went through, by build id: {files}"
    assert oct(os.stat(cache).st_mode & 0o777) == "0o700"
    with open(kept, encoding="utf-8") as stream:
        content = json.load(stream)
    assert (content["format"] == "cunumpy frame cache 2" and
            content["build_id"] == build_id(case.program)), shown(content)

    run = case.run(CUNUMPY_BUDGET=budget, CUNUMPY_REPORT="second.json", CUNUMPY_SITE_CACHE=cache)
    program_ran(run)
    second = case.json("second.json", run)
    assert sites_of(second) == sites_of(first) and sites_of(first), \
        "the second run, from the cache, shows the same sites"

    # The cache is what the next run reads: moved lines show.
    for frames in content["addresses"].values():
        for frame in frames:
            frame[2] += 10000
    with open(kept, "w", encoding="utf-8") as stream:
        json.dump(content, stream)
    run = case.run(CUNUMPY_BUDGET=budget, CUNUMPY_REPORT="third.json", CUNUMPY_SITE_CACHE=cache)
    program_ran(run)
    assert output_site(case.json("third.json", run)) == (file, line + 10000), \
        "the sites came from the cache"


def test_a_broken_cache_file_is_replaced(case, budget):
    cache = case.path("cache")
    os.makedirs(cache, mode=0o700)
    kept = os.path.join(cache, build_id(case.program) + ".sites.json")
    this_build = build_id(case.program)
    for broken in ('{"format": "cunumpy frame cache 2", "build_id": "%s", '
                   '"addresses": {"zz": 1}}' % this_build,
                   '{"format": "cunumpy frame cache 2", "build_id": "%s", '
                   '"addresses": {"10": [[1, 2, 3, 4]]}}' % this_build,
                   '{"format": 1, "build_id": 2}',
                   "not json at all", '{"format": "another format"}', ""):
        with open(kept, "w", encoding="utf-8") as stream:
            stream.write(broken)
        run = case.run(CUNUMPY_BUDGET=budget, CUNUMPY_REPORT="report.json", CUNUMPY_SITE_CACHE=cache)
        program_ran(run)
        assert not run.cunumpy_lines(), f"nothing to say\n{run}"
        report = case.json("report.json", run)
        assert output_site(report)[1] == case.source_line(OUTPUT_COPY), \
            f"sites read from debug information past {broken!r}"
        with open(kept, encoding="utf-8") as stream:
            assert json.load(stream)["addresses"], \
                f"the file rewritten whole after {broken!r}"


def test_a_file_of_another_build_is_not_read(case, budget):
    """A cache file is read only for the build id it says it is for: one
    copied under another module's name is ignored."""
    cache = case.path("cache")
    run = case.run(CUNUMPY_BUDGET=budget, CUNUMPY_REPORT="first.json",
                   CUNUMPY_SITE_CACHE=cache)
    program_ran(run)
    kept = os.path.join(cache, build_id(case.program) + ".sites.json")
    with open(kept, encoding="utf-8") as stream:
        content = json.load(stream)
    for frames in content["addresses"].values():
        for frame in frames:
            frame[2] += 10000
    content["build_id"] = "0" * 40  # another build's file, renamed
    with open(kept, "w", encoding="utf-8") as stream:
        json.dump(content, stream)
    run = case.run(CUNUMPY_BUDGET=budget, CUNUMPY_REPORT="second.json",
                   CUNUMPY_SITE_CACHE=cache)
    program_ran(run)
    assert output_site(case.json("second.json", run))[1] == \
        case.source_line(OUTPUT_COPY), "read from debug information"


def test_where_the_cache_is(case, budget):
    home = case.path("home")
    os.makedirs(home)
    run = case.run(CUNUMPY_BUDGET=budget, CUNUMPY_REPORT="report.json", CUNUMPY_SITE_CACHE=None,
                   HOME=home, XDG_CACHE_HOME=None)
    program_ran(run)
    assert glob.glob(os.path.join(home, ".cache", "cunumpy", "*.sites.json")), \
        "under $HOME/.cache/cunumpy by default"
    xdg = case.path("xdg")
    run = case.run(CUNUMPY_BUDGET=budget, CUNUMPY_REPORT="report.json", CUNUMPY_SITE_CACHE=None,
                   HOME=home, XDG_CACHE_HOME=xdg)
    program_ran(run)
    assert glob.glob(os.path.join(xdg, "cunumpy", "*.sites.json")), \
        "under $XDG_CACHE_HOME/cunumpy when it is set"
    # A relative directory is the start directory's, as CUNUMPY_REPORT is.
    os.makedirs(case.path("run"))
    run = case.run(["--chdir", "run"], CUNUMPY_REPORT="report.json",
                   CUNUMPY_SITE_CACHE="relative-cache")
    program_ran(run)
    assert glob.glob(case.path("relative-cache/*.sites.json")) and \
        not os.path.exists(case.path("run/relative-cache")), \
        f"in the start directory\n{run}"
    for off in ("0", "off"):
        nowhere = case.path("nowhere-" + off)
        run = case.run(CUNUMPY_BUDGET=budget, CUNUMPY_REPORT="report.json", CUNUMPY_SITE_CACHE=off,
                       HOME=nowhere, XDG_CACHE_HOME=None)
        program_ran(run)
        assert not os.path.exists(nowhere), f"CUNUMPY_SITE_CACHE={off}: none"
        report = case.json("report.json", run)
        assert output_site(report)[1] == case.source_line(OUTPUT_COPY)


def test_a_cache_others_can_write_is_not_used(case, budget):
    cache = case.path("shared")
    os.makedirs(cache)
    os.chmod(cache, 0o777)
    run = case.run(CUNUMPY_BUDGET=budget, CUNUMPY_REPORT="report.json", CUNUMPY_SITE_CACHE=cache)
    program_ran(run)
    one_warning(run, r"^cunumpy: CUNUMPY_SITE_CACHE: cannot use '.*shared' "
                     r"\(writable by others\); call sites are read from "
                     r"debug information at every run$")
    assert os.listdir(cache) == [], "nothing written there"
    report = case.json("report.json", run)
    assert output_site(report)[1] == case.source_line(OUTPUT_COPY)
    a_file = case.write("a_file", "")
    run = case.run(CUNUMPY_BUDGET=budget, CUNUMPY_REPORT="report.json", CUNUMPY_SITE_CACHE=a_file)
    one_warning(run, r"^cunumpy: CUNUMPY_SITE_CACHE: cannot use '.*a_file' "
                     r"\((Not a directory|File exists|not a directory)\)")


def test_without_libdw_sites_are_module_and_offset(case, budget):
    """libdw is loaded at the first call site read from debug information;
    where it cannot be (here a library without its functions, found first
    on LD_LIBRARY_PATH), the program runs, one note says why, and sites
    are module+offset."""
    libraries = subprocess.run(["ldd", case.program], capture_output=True,
                               text=True, check=True).stdout
    libm = re.search(r"libm\.so\.6 => (\S+)", libraries)
    assert libm, f"the program links libm\n{libraries}"
    fake = case.path("fake")
    os.makedirs(fake)
    shutil.copyfile(libm.group(1), os.path.join(fake, "libdw.so.1"))
    path = fake + ":" + os.environ.get("LD_LIBRARY_PATH", "")
    run = case.run(CUNUMPY_BUDGET=budget, CUNUMPY_REPORT="report.json",
                   CUNUMPY_SITE_CACHE="0", LD_LIBRARY_PATH=path)
    program_ran(run)
    one_warning(run, r"^cunumpy: note: libdw\.so\.1 has no dw\w+; call sites "
                     r"are shown as module\+offset")
    file, line = output_site(case.json("report.json", run))
    assert re.fullmatch(r"legacy_app\+0x[0-9a-f]+", file) and line == 0, \
        f"module+offset: {file}:{line}"
