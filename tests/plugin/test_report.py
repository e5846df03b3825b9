"""The report of the legacy example: the text file, the JSON, the summary on
stderr, unknown memory spaces, call sites, and the report at exit."""

import os
import re
import shutil
import subprocess

import pytest

from plugin_helpers import (DIAGNOSTICS_BYTES, LEGACY_APP, MODIFY, OUTPUTS,
                            OUTPUT_COPY, SETUP_COPY, STATE_BYTES, STEPS, SYNC,
                            VIOLATION_STATUS, count, nbytes, one_warning,
                            phase, program_ran, region, shown)


pytestmark = [LEGACY_APP, pytest.mark.needs("device")]


def test_report_text(case, budget):
    run = case.run(CUNUMPY_REPORT="report.txt", CUNUMPY_BUDGET=budget)
    assert run.status == 0, f"the program must succeed\n{run}"
    assert "legacy_app: 100 steps" in run.stdout, f"the program ran\n{run}"
    assert run.cunumpy_lines() == [], \
        f"all is well and the report has a file: stderr stays quiet\n{run}"
    text = case.read("report.txt")
    for needle in [
            "cunumpy transfer report: ",
            "budget " + budget + ": ok (3 rule(s))",
            "phase 'setup' (1 call); rule: allow to_device",
            "phase 'integrate' (100 calls); rule: allow nothing",
            "phase 'output' (10 calls); rule: allow to_host "
            "(max_nbytes=800000)",
            "'integrate' (100 calls, ",
            "'output' (10 calls, ",
            "21 transfer(s) through cunumpy (20 to_host, 1 to_device",
            "top call sites:",
            case.site(OUTPUT_COPY) + ': deep_copy("state", nbytes=800000) '
            "(x10), 8000000 bytes",
            case.site(SETUP_COPY) + ': deep_copy("host_state"',
            'sync to host "diagnostics_mirror": 10 sync(s) copied 1280 bytes '
            "(to_host) at ",
            case.site(SYNC),
            'modified on host, never synced: "parameters_mirror" '
            "(1 modify call(s) since the last sync; last at ",
            case.site(MODIFY)]:
        assert needle in text, \
            f"the text report must contain: {needle}\n{text}"
    assert re.search(r"to_host +20 +8001280 +20 +0 +[0-9.]+ +[0-9.]+ [GMk]B/s",
                     text) is not None, \
        f"a row: to_host count, bytes, blocking, async, time, bandwidth\n{text}"
    assert "BROKEN" not in case.without_paths(text), \
        f"no rule is broken\n{text}"


def test_report_json(case, budget):
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BUDGET=budget)
    assert run.status == 0, f"the program must succeed\n{run}"
    report = case.json("report.json", run)
    assert report["format"] == "cunumpy-report", "format"
    assert report["version"] == 3, "version"
    assert report["complete"] and report["callbacks_watched"], \
        "nothing lost, and the callbacks were watched"
    assert report["rank"] == 0 and report["pid"] > 0, "rank 0 and a pid"
    run_info = report["run"]
    assert (run_info["rank"] == 0 and run_info["size"] == 1 and
            run_info["id"].startswith("local:") and run_info["label"] is None), \
        f"one process: its own run\n{shown(run_info)}"
    kokkos = report["kokkos"]
    assert (kokkos["interface_known"] and kokkos["interface"] > 0 and
            kokkos["sessions"] == 1), f"the Kokkos\n{shown(kokkos)}"
    assert report["device"]["present"], "the fake device is a device"
    assert report["cunumpy_version"], "cunumpy's version"
    assert (report["budget"]["ok"] and report["budget"]["checked"] and
            report["budget"]["verdict"] == "ok" and
            report["budget"]["rules"] == 3 and
            report["budget"]["violations"] == []), \
        f"budget checked and ok\n{shown(report['budget'])}"
    total = report["total"]
    assert (count(total, "to_host") == 2 * OUTPUTS and
            nbytes(total, "to_host") == OUTPUTS * (STATE_BYTES +
                                                   DIAGNOSTICS_BYTES)), \
        f"total to_host\n{shown(total)}"
    assert (count(total, "to_device") == 1 and
            nbytes(total, "to_device") == STATE_BYTES), \
        f"total to_device\n{shown(total)}"
    to_host = total["kinds"]["to_host"]
    assert (to_host["blocking"] == 20 and to_host["async"] == 0 and
            to_host["seconds"] > 0 and
            to_host["bandwidth_bytes_per_second"] > 0), \
        f"blocking, async, time and bandwidth\n{shown(to_host)}"
    integrate = phase(report, "integrate")
    assert (integrate["calls"] == STEPS and integrate["transfers"] == 0 and
            not integrate["broken"]), \
        f"integrate: 100 calls, no transfer\n{shown(integrate)}"
    node = region(report, "integrate")
    assert (node["calls"] == STEPS and node["is_phase"] and
            node["phase"] == "integrate" and node["inclusive_transfers"] == 0), \
        f"the region integrate in the tree\n{shown(node)}"
    output = phase(report, "output")
    assert output["calls"] == OUTPUTS and count(output, "to_host") == 20, \
        f"output: 10 calls, 20 copies home\n{shown(output)}"
    top = output["top_sites"][0]
    assert (top["file"].endswith("legacy_app.cpp") and
            top["line"] == case.source_line(OUTPUT_COPY) and
            top["count"] == OUTPUTS and
            top["bytes"] == OUTPUTS * STATE_BYTES), \
        f"output's top site is the copy of the state, by line\n{shown(top)}"
    setup = phase(report, "setup")
    assert setup["calls"] == 1 and count(setup, "to_device") == 1, \
        f"setup: the initial copy\n{shown(setup)}"
    syncs = report["dual_views"]["syncs"]
    assert (len(syncs) == 1 and syncs[0]["label"] == "diagnostics_mirror" and
            syncs[0]["count"] == OUTPUTS and
            syncs[0]["bytes"] == OUTPUTS * DIAGNOSTICS_BYTES and
            syncs[0]["copy_kind"] == "to_host" and
            syncs[0]["site"].endswith(case.site(SYNC))), \
        ("the DualView sync is linked to the copy it made\n"
         f"{shown(report['dual_views'])}")
    unsynced = report["dual_views"]["modified_never_synced"]
    assert (len(unsynced) == 1 and
            unsynced[0]["label"] == "parameters_mirror" and
            unsynced[0]["on"] == "host" and
            unsynced[0]["site"].endswith(case.site(MODIFY))), \
        f"the modify no sync followed is listed\n{shown(report['dual_views'])}"
    assert report["metadata"], "Kokkos' metadata is kept"


def test_stderr_summary(case):
    run = case.run()
    assert run.status == 0, f"the program must succeed\n{run}"
    lines = run.cunumpy_lines()
    assert lines and ("21 transfer(s) through cunumpy (20 to_host, "
                      "1 to_device" in lines[0]), \
        f"without CUNUMPY_REPORT a summary goes to stderr\n{run}"
    # Which cunumpy wrote it, as the JSON report says.
    version = case.json("report.json", case.run(
        CUNUMPY_REPORT="report.json"))["cunumpy_version"]
    assert re.match(r"\d+\.\d+\.\d+$", version) and \
        f"(rank 0, cunumpy {version}): " in lines[0], run
    for needle in ["region 'output' (10 calls): 20 to_host (8001280 bytes)",
                   "region 'setup' (1 call): 1 to_device (800000 bytes)",
                   "budget: none",
                   "full report: set CUNUMPY_REPORT"]:
        assert any(needle in line for line in lines), \
            f"the summary says: {needle}\n{run}"


def test_host_space_as_device_is_refused(case):
    """A host space in CUNUMPY_DEVICE_SPACES would make every host copy an
    ignored device_copy: it is left out with one line, the others kept."""
    run = case.run(["--probes", "2"], CUNUMPY_REPORT="report.json",
                   CUNUMPY_DEVICE_SPACES="HostSpace, FakeDevice")
    program_ran(run)
    one_warning(run, r"^cunumpy: CUNUMPY_DEVICE_SPACES: 'HostSpace' is a host "
                     r"memory space; as a device it would turn every host "
                     r"copy into an ignored device_copy and hide it .*; it is "
                     r"left out$")
    report = case.json("report.json", run)
    assert (report["total"]["transfers"] == 221 and
            report["device_spaces"] == ["FakeDevice"]), \
        ("FakeDevice's copies counted, HostSpace not a device\n" +
         shown({key: report[key] for key in ("device_spaces", "total")}))


def test_unknown_device_space(case):
    """Without CUNUMPY_DEVICE_SPACES, FakeDevice is a name cunumpy does not
    know: its copies are taken as host-to-host, and every report says so,
    with the variable to set."""
    args = ["--probes", "2"]
    run = case.run(args, CUNUMPY_REPORT="report.json",
                   CUNUMPY_DEVICE_SPACES=None)
    program_ran(run)
    # 1 copy in setup, 2 probes per step, 2 copies every 10 steps.
    report = case.json("report.json", run)
    lines = one_warning(run,
                        r"^cunumpy: note: 221 copies not counted: .* \(report "
                        r"in .*/report\.json\)$")
    assert len(lines) == 1, ("a quiet report file still gets the note on "
                             f"stderr, and nothing else\n{run}")
    assert (report["unknown_spaces"] == {"names": ["FakeDevice"],
                                         "uncounted_copies": 221} and
            report["total"]["transfers"] == 0), \
        ("the JSON counts the copies it took as host-to-host\n" +
         shown({key: report[key] for key in ("unknown_spaces", "total")}))
    run = case.run(args, CUNUMPY_DEVICE_SPACES=None)
    one_warning(run,
                r"^cunumpy: note: 221 copies not counted: cunumpy does not "
                r"know the memory space\(s\) 'FakeDevice' and took them for "
                r"host spaces; if one is a device, set "
                r"CUNUMPY_DEVICE_SPACES=FakeDevice$")
    run = case.run(args, CUNUMPY_REPORT="report.txt",
                   CUNUMPY_DEVICE_SPACES=None)
    text = case.read("report.txt")
    assert "\nnote: 221 copies not counted" in text, \
        f"the text report has the note\n{text}"
    # Named, FakeDevice is a device: its copies count, and no note.
    run = case.run(args, CUNUMPY_REPORT="report.json")
    report = case.json("report.json", run)
    assert (report["unknown_spaces"] == {"names": [], "uncounted_copies": 0}
            and report["total"]["transfers"] == 221), \
        ("with CUNUMPY_DEVICE_SPACES the copies are transfers\n" +
         shown(report["unknown_spaces"]))
    assert not any("note:" in line for line in run.cunumpy_lines()), \
        f"and there is no note\n{run}"


def test_unknown_device_space_under_a_budget(case, budget, report_tool):
    """FakeDevice unnamed, under a budget: the copies went to a space
    cunumpy could not classify, so the run is not one without a device but
    one it could not check. The one hint is the space to name;
    CUNUMPY_ALLOW_NO_DEVICE=1 is not offered and does not make it pass; the
    merged report of 4 such ranks says NOT CHECKED, with the note."""
    unchecked = (r"NOT CHECKED: 121 copies to or from memory space\(s\) "
                 r"'FakeDevice', which cunumpy does not know, taken for host "
                 r"copies and not counted$")
    hint = ("if 'FakeDevice' is device memory, set "
            "CUNUMPY_DEVICE_SPACES=FakeDevice")
    for allow in (None, "1"):
        run = case.run(["--copy-in-step"], CUNUMPY_BUDGET=budget,
                       CUNUMPY_ON_VIOLATION="exit", CUNUMPY_DEVICE_SPACES=None,
                       CUNUMPY_ALLOW_NO_DEVICE=allow,
                       CUNUMPY_REPORT="report.json")
        assert run.status == VIOLATION_STATUS, \
            f"ALLOW_NO_DEVICE={allow}: the budget fails\n{run}"
        lines = one_warning(run, r": budget .*: " + unchecked)
        assert [line for line in lines if "CUNUMPY_" in line] == [
            "cunumpy:     " + hint,
            "cunumpy: CUNUMPY_ON_VIOLATION=exit: the budget failed, so the "
            "process ends with status 3 instead of 0"], \
            f"ALLOW_NO_DEVICE={allow}: one hint, the space to name\n{run}"
        budget_json = case.json("report.json", run)["budget"]
        assert (budget_json["verdict"] == "unchecked" and
                not budget_json["ok"] and not any(
                    "CUNUMPY_ALLOW_NO_DEVICE" in note
                    for note in budget_json["notes"])), shown(budget_json)
    # A device named that the program never used: the hint keeps it.
    run = case.run(CUNUMPY_BUDGET=budget, CUNUMPY_DEVICE_SPACES="OtherSpace")
    assert ("cunumpy:     if 'FakeDevice' is device memory, set "
            "CUNUMPY_DEVICE_SPACES=FakeDevice,OtherSpace"
            in run.cunumpy_lines()), f"the value keeps OtherSpace\n{run}"

    os.makedirs(case.path("reports"))
    for rank in range(4):
        run = case.run(CUNUMPY_BUDGET=budget, CUNUMPY_DEVICE_SPACES=None,
                       CUNUMPY_REPORT="reports/report-%r.json",
                       CUNUMPY_RUN_ID="four-ranks",
                       OMPI_COMM_WORLD_RANK=rank, OMPI_COMM_WORLD_SIZE=4)
        program_ran(run)
    run = case.run(command=[report_tool, "--check",
                            case.path("reports")])
    assert run.status == 1, f"--check fails: nothing was checked\n{run}"
    assert "BROKEN" not in run.stdout, f"no rank broke the budget\n{run}"
    # The reason is rank 0's (21 copies of 84), and says so.
    assert re.search(r"^budget: NOT CHECKED on rank\(s\) 0-3; rank 0: 21 copies "
                     r"to or from memory space\(s\) 'FakeDevice'",
                     run.stdout, re.MULTILINE), \
        f"the ranks could not check it\n{run}"
    assert ("\nmemory space(s) cunumpy does not know: 'FakeDevice', on "
            "rank(s) 0-3 (84 copies not counted)\n  if it is device memory, "
            "set CUNUMPY_DEVICE_SPACES=FakeDevice\n" in run.stdout), \
        f"the note of the ranks, with the space to name\n{run}"
    assert "ALLOW_NO_DEVICE" not in run.stdout, f"and no other hint\n{run}"


def test_backtrace_off(case):
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BACKTRACE="0")
    program_ran(run)
    report = case.json("report.json", run)
    assert report["backtrace_depth"] == 0, "depth 0 in the report"
    sites = {site["site"] for site in report["total"]["top_sites"]}
    assert sites == {"<unknown>"}, f"no call sites without stacks: {sites}"


def test_stripped_program_sites_are_module_and_offset(case, budget):
    """A program without debug information (stripped: no symbols either)
    has its sites as module+0xOFFSET, decided from its section headers:
    nothing else of it is read."""
    stripped = case.path("stripped")
    os.makedirs(stripped)
    program = os.path.join(stripped, os.path.basename(case.program))
    shutil.copyfile(case.program, program)
    shutil.copymode(case.program, program)
    subprocess.run(["strip", "--strip-all", program], check=True)
    run = case.run(program=program, CUNUMPY_BUDGET=budget,
                   CUNUMPY_REPORT="report.json")
    program_ran(run)
    top = phase(case.json("report.json", run), "output")["top_sites"][0]
    assert re.fullmatch(r"legacy_app\+0x[0-9a-f]+", top["file"]) and \
        top["line"] == 0, f"module+offset: {top['file']}:{top['line']}\n{run}"


def test_bad_backtrace(case):
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BACKTRACE="deep")
    program_ran(run)
    lines = one_warning(run,
                        r"^cunumpy: CUNUMPY_BACKTRACE=\"deep\" is not an "
                        r"integer in \[0, [0-9]+\]; using [0-9]+$")
    assert len(lines) == 1, f"and nothing else\n{run}"
    top = region(case.json("report.json", run), "output")["top_sites"][0]
    assert top["line"] == case.source_line(OUTPUT_COPY), \
        f"call sites work with the default depth\n{shown(top)}"
    # One rule for every numeric variable: digits, blanks around them
    # allowed; anything else, an empty value included, is one line.
    for value, depth in ((" 5", 5), ("5 ", 5), ("\t7\t", 7), ("007", 7)):
        run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BACKTRACE=value)
        program_ran(run)
        assert not run.cunumpy_lines(), f"{value!r} is accepted\n{run}"
        assert case.json("report.json", run)["backtrace_depth"] == depth, \
            f"{value!r} is depth {depth}"
    for value in ("", " ", "-0", "+5", "65", "5x", "9" * 30):
        run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BACKTRACE=value)
        program_ran(run)
        one_warning(run, r"^cunumpy: CUNUMPY_BACKTRACE=\"" + re.escape(value) +
                    r"\" is not an integer in \[0, 64\]; using 32$")
        assert case.json("report.json", run)["backtrace_depth"] == 32, \
            f"{value!r} leaves the default depth"
    # The rank variables follow the same rule.
    run = case.run(CUNUMPY_REPORT="report-%r.json", OMPI_COMM_WORLD_RANK=" 3")
    program_ran(run)
    assert case.json("report-3.json", run)["rank"] == 3, "rank ' 3' is 3"
    run = case.run(CUNUMPY_REPORT="report-%r.json", OMPI_COMM_WORLD_RANK="-1",
                   PMI_RANK="2")
    program_ran(run)
    one_warning(run, r'^cunumpy: OMPI_COMM_WORLD_RANK="-1" is not an '
                     r'integer in \[0, 1073741823\]; ignored$')
    assert case.json("report-2.json", run)["rank"] == 2, \
        "a bad rank variable is skipped for the next one"


@pytest.mark.chain
def test_exit_without_finalize(case, budget):
    """exit() before Kokkos::finalize, with the test tool chained: the
    plugin still writes its report once, finalizes the chained tool and
    keeps the violation status."""
    run = case.run(["--exit-without-finalize"], CUNUMPY_REPORT="report.txt",
                   KP_TEST_TOOL_OUTPUT=case.path("tool.txt"))
    assert run.status == 0, f"exit(0) keeps its status\n{run}"
    text = case.read("report.txt")
    assert text.count("cunumpy transfer report:") == 1, \
        f"the report is written once\n{text}"
    assert "21 transfer(s) through cunumpy" in text, f"with every event\n{text}"
    chained = case.read("tool.txt")
    assert "finalize 1" in chained, \
        f"the chained tool is finalized too\n{chained}"
    run = case.run(["--exit-without-finalize", "--copy-in-step"],
                   CUNUMPY_REPORT="report.json", CUNUMPY_BUDGET=budget,
                   CUNUMPY_ON_VIOLATION="exit")
    assert run.status == VIOLATION_STATUS, \
        f"a broken budget still ends with the violation status\n{run}"
    assert not case.json("report.json", run)["budget"]["ok"], \
        "and the report says why"
