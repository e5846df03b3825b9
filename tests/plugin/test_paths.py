"""The files the plugin writes, CUNUMPY_REPORT and CUNUMPY_TRACE: their
paths are relative to where the program started; one that cannot be
written, is a hard link or a special file, or names the rule file, the
other output or the next tool's library, is refused with one line on
stderr (a long one by an excerpt); a forked child never writes its
parent's report. The legacy example, and tool_events for fork and
chains."""

import json
import os
import re
import shutil

import pytest

from plugin_helpers import LEGACY_APP, one_warning, program_ran, shown


pytestmark = pytest.mark.program("tool_events")


@LEGACY_APP
@pytest.mark.needs("device")
def test_relative_paths_after_chdir(case):
    """Relative paths name files in the directory the program started in,
    even when it moves to a run directory before the files are written."""
    os.makedirs(case.path("run"))
    run = case.run(["--chdir", "run"], CUNUMPY_REPORT="report.json",
                   CUNUMPY_TRACE="trace.json")
    program_ran(run)
    assert (not os.path.exists(case.path("run/report.json")) and
            not os.path.exists(case.path("run/trace.json"))), \
        f"nothing written in the run directory\n{run}"
    report = case.json("report.json", run)
    assert (report["trace"]["file"] == case.path("trace.json") and
            os.path.exists(case.path("trace.json"))), \
        ("the trace where it was asked for, named by its absolute path\n" +
         shown(report["trace"]))


@LEGACY_APP
@pytest.mark.needs("device")
def test_a_longer_file_is_replaced_whole(case):
    """The report and the trace replace what an earlier run left in their
    files, a longer text included (they are written over it and cut, not
    truncated first): nothing of it after their end."""
    # The old text is a control character, which JSON never holds raw
    # (the writer escapes it): no path in the new report can match it.
    old = "\x01" * 300000 + "\n"
    for name in ("report.json", "trace.json"):
        case.write(name, old)
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_TRACE="trace.json")
    program_ran(run)
    case.json("report.json", run)  # the whole file parses
    with open(case.path("trace.json")) as stream:
        assert json.load(stream)["traceEvents"], "the trace parses whole"
    for name in ("report.json", "trace.json"):
        with open(case.path(name), "rb") as stream:
            written = stream.read()
        assert b"\x01" not in written, f"{name}: the old text is gone"


@LEGACY_APP
@pytest.mark.needs("device")
def test_bad_report_path(case):
    run = case.run(CUNUMPY_REPORT=case.path("no/such/dir/report.txt"))
    program_ran(run)
    one_warning(run,
                r"^cunumpy: CUNUMPY_REPORT: cannot write '.*no/such/dir/"
                r"report\.txt' \(directory .*No such file or directory\); "
                r"the summary goes to stderr instead$")
    assert any("21 transfer(s)" in line for line in run.cunumpy_lines()), \
        f"the summary went to stderr\n{run}"


@LEGACY_APP
@pytest.mark.needs("device")
def test_bad_trace_path(case):
    os.makedirs(case.path("a_directory"))
    run = case.run(CUNUMPY_REPORT="report.json",
                   CUNUMPY_TRACE=case.path("a_directory"))
    program_ran(run)
    lines = one_warning(run,
                        r"^cunumpy: CUNUMPY_TRACE: cannot write .* \(it is a "
                        r"directory\); no trace is recorded$")
    assert len(lines) == 1, f"and nothing else\n{run}"
    assert case.json("report.json", run)["trace"] is None, \
        "no trace in the report"


@LEGACY_APP
@pytest.mark.needs("device")
def test_bad_same_paths(case):
    """An output that names the rule file or the other output is refused:
    a report written over budget.toml would destroy the rules it checks."""
    rules = "[phases.integrate]\nallow.to_host = { max_nbytes = 8 }\n"
    budget = case.write("budget.toml", rules)
    run = case.run(CUNUMPY_BUDGET=budget,
                   CUNUMPY_REPORT=os.path.join(case.work, ".", "budget.toml"),
                   CUNUMPY_TRACE=budget)
    program_ran(run)
    one_warning(run,
                r"^cunumpy: CUNUMPY_REPORT: cannot write '.*budget\.toml' "
                r"\(it is also CUNUMPY_BUDGET, the rule file\); the summary "
                r"goes to stderr instead$")
    one_warning(run,
                r"^cunumpy: CUNUMPY_TRACE: cannot write '.*budget\.toml' "
                r"\(it is also CUNUMPY_BUDGET, the rule file\); no trace is "
                r"recorded$")
    assert case.read("budget.toml") == rules, \
        f"the rule file is intact\n{case.read('budget.toml')}"
    assert any("budget " in line and ": ok" in line
               for line in run.cunumpy_lines()), f"and it was checked\n{run}"
    run = case.run(CUNUMPY_REPORT="report.json",
                   CUNUMPY_TRACE=case.path("report.json"))
    program_ran(run)
    one_warning(run,
                r"^cunumpy: CUNUMPY_TRACE: cannot write '.*report\.json' "
                r"\(it is also CUNUMPY_REPORT, the report\); no trace is "
                r"recorded$")
    assert case.json("report.json", run)["trace"] is None, \
        "the report is the report, and names no trace"


def test_forked_child_finalizes(case):
    """A forked child that calls Kokkos::finalize does not write its
    parent's report: the parent writes it, with its own pid."""
    # One OpenMP thread: Kokkos' OpenMP backend cannot finalize in a forked
    # child (GNU OpenMP's thread pool does not survive fork; the child
    # waits for it forever), whatever tool is loaded.
    one_thread = {"OMP_NUM_THREADS": "1"}
    run = case.run(["--fork"], CUNUMPY_REPORT="report.json", **one_thread)
    assert run.status == 0, f"{run}"
    pid = int(re.search(r"tool_events: pid (\d+)", run.stdout).group(1))
    assert run.cunumpy_lines() == [], f"nothing to refuse or note\n{run}"
    report = case.json("report.json", run)
    assert report["pid"] == pid and report["total"]["transfers"] == 12, \
        f"the parent's report\n{shown(report['total'])}"
    run = case.run(["--fork"], **one_thread)
    summaries = [line for line in run.cunumpy_lines()
                 if "transfer(s) through cunumpy" in line]
    assert len(summaries) == 1, f"one summary, the parent's\n{run}"
    # Nor its parent's recording (CUNUMPY_RECORD): it is the parent's run.
    run = case.run(["--fork"], CUNUMPY_RECORD="run.jsonl", **one_thread)
    pid = int(re.search(r"tool_events: pid (\d+)", run.stdout).group(1))
    with open(case.path("run.jsonl"), encoding="utf-8") as stream:
        lines = [json.loads(line) for line in stream]
    events = [line["ev"] for line in lines[1:]]
    assert lines[0]["pid"] == pid and events.count("finalize") == 1 and \
        events.count("end") == 1 and events[-1] == "end", \
        f"the parent's recording, whole\n{events}"


def test_hard_links_and_special_files(case, plugin):
    """Outputs that would destroy something are refused, the program runs
    on: a hard link to the rule file, a loaded library (the plugin itself),
    a FIFO."""
    budget = case.write("budget.toml", "[phases.step]\nallow.to_device = {}\n")
    os.link(budget, case.path("report.txt"))
    run = case.run(CUNUMPY_REPORT="report.txt", CUNUMPY_BUDGET=budget)
    one_warning(run, r"^cunumpy: CUNUMPY_REPORT: cannot write .*report\.txt' "
                     r"\(it is also CUNUMPY_BUDGET, the rule file\)")
    assert case.read("budget.toml").startswith("[phases.step]"), \
        "the rules are intact"
    os.link(case.write("trace.json", ""), case.path("trace_link.json"))
    run = case.run(CUNUMPY_REPORT="trace.json", CUNUMPY_TRACE="trace_link.json")
    one_warning(run, r"^cunumpy: CUNUMPY_TRACE: cannot write .*trace_link\.json' "
                     r"\(it is also CUNUMPY_REPORT, the report\)")
    size = os.path.getsize(plugin)
    run = case.run(CUNUMPY_REPORT=plugin)
    assert run.status == 0, f"no SIGBUS\n{run}"
    one_warning(run, r"^cunumpy: CUNUMPY_REPORT: cannot write .* \(it is the "
                     r"library .*libkp_cunumpy\.so, loaded in this process\)")
    assert os.path.getsize(plugin) == size, "the plugin is intact"
    os.symlink(plugin, case.path("link_to_plugin.so"))
    run = case.run(CUNUMPY_REPORT="link_to_plugin.so")
    assert run.status == 0, f"no SIGBUS through a symbolic link\n{run}"
    one_warning(run, r"^cunumpy: CUNUMPY_REPORT: cannot write .* \(it is the "
                     r"library .*libkp_cunumpy\.so, loaded in this process\)")
    assert os.path.getsize(plugin) == size, "the plugin is intact"
    program_size = os.path.getsize(case.program)
    run = case.run(CUNUMPY_TRACE=case.program)
    assert run.status == 0, f"no SIGBUS\n{run}"
    one_warning(run, r"^cunumpy: CUNUMPY_TRACE: cannot write .* \(it is the "
                     r"running program\)")
    assert os.path.getsize(case.program) == program_size, "the program is intact"
    os.mkfifo(case.path("fifo"))
    run = case.run(CUNUMPY_REPORT="fifo", CUNUMPY_TRACE="fifo2")
    assert run.status == 0, f"no hang at the end\n{run}"
    one_warning(run, r"^cunumpy: CUNUMPY_REPORT: cannot write .*fifo' \(it is "
                     r"a FIFO, which would block the program at its end\)")


def test_next_tool_library_as_output(case, plugin, tool):
    """The library of the next tool in the chain, loaded after the plugin
    read its settings, is refused as a report or trace at the end: writing
    it would truncate code the process runs (SIGBUS)."""
    next_tool = case.path("libkp_next_tool.so")
    shutil.copyfile(tool, next_tool)
    with open(next_tool, "rb") as stream:
        original = stream.read()
    chain = f"{plugin};{next_tool}"
    for variable, said in (("CUNUMPY_REPORT", "; the summary goes to stderr "
                                              "instead"),
                           ("CUNUMPY_TRACE", "")):
        run = case.run(KOKKOS_TOOLS_LIBS=chain, KOKKOS_PROFILE_LIBRARY=chain,
                       KP_TEST_TOOL_OUTPUT=case.path("tool.txt"),
                       **{variable: next_tool})
        assert run.status == 0, f"no SIGBUS with {variable}\n{run}"
        one_warning(run, rf"^cunumpy: {variable}: cannot write .*"
                         r"libkp_next_tool\.so' \(it is the library .*"
                         rf"libkp_next_tool\.so, loaded in this process\){said}")
        with open(next_tool, "rb") as stream:
            assert stream.read() == original, \
                f"the next tool's library is intact after {variable}\n{run}"
        assert case.tool_counts()["finalize"] == 1, f"the tool ran\n{run}"


def test_long_paths_are_excerpted(case):
    """A path of thousands of bytes is named by an excerpt in the one line
    that refuses it, not echoed whole."""
    long_path = "/no/such/" + "d" * 5000 + "/report.txt"
    run = case.run(CUNUMPY_REPORT=long_path, CUNUMPY_TRACE=long_path + ".json")
    assert run.status == 0, f"{run}"
    lines = [line for line in run.cunumpy_lines() if "cannot write" in line]
    assert len(lines) == 2 and all(len(line) < 1200 for line in lines), \
        f"two short lines\n{run}"
    assert all("bytes]" in line for line in lines), f"excerpts\n{run}"
