#!/usr/bin/env python3
"""Runs a real program with libkp_cunumpy loaded the way kokkos-tools are
(ctest sets KOKKOS_TOOLS_LIBS or KOKKOS_PROFILE_LIBRARY in the environment)
and checks what the plugin leaves: the report, the JSON, the trace, the exit
status, stderr, and what a chained tool received.

    check_plugin.py <case> --program <exe> --work-dir <dir> [options]

Each case is a function below; a failed check exits with status 1 and says
what was expected and what the plugin produced.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

CUNUMPY_VARIABLES = ["CUNUMPY_REPORT", "CUNUMPY_BUDGET", "CUNUMPY_TRACE",
                     "CUNUMPY_ON_VIOLATION", "CUNUMPY_BACKTRACE"]
VIOLATION_STATUS = 3


class CheckFailed(Exception):
    pass


def expect(condition, message, context=""):
    if not condition:
        raise CheckFailed(message + ("\n--- context ---\n" + context
                                     if context else ""))


class Run:
    def __init__(self, completed):
        self.status = completed.returncode
        self.stdout = completed.stdout
        self.stderr = completed.stderr

    def context(self):
        return (f"exit status {self.status}\n--- stdout ---\n{self.stdout}"
                f"--- stderr ---\n{self.stderr}")

    def cunumpy_lines(self):
        return [line for line in self.stderr.splitlines()
                if line.startswith("cunumpy:")]


class Case:
    def __init__(self, arguments):
        self.args = arguments
        self.work = arguments.work_dir
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)

    def path(self, name):
        return os.path.join(self.work, name)

    def run(self, arguments=(), program=None, command=None, timeout=300,
            **variables):
        """Runs the program with the loading variables ctest set, the
        CUNUMPY_* variables given here and no other."""
        environment = dict(os.environ)
        for name in CUNUMPY_VARIABLES:
            environment.pop(name, None)
        for name, value in variables.items():
            if value is None:
                environment.pop(name, None)
            else:
                environment[name] = str(value)
        if command is None:
            command = [program or self.args.program, *arguments]
        completed = subprocess.run(command, cwd=self.work, env=environment,
                                   capture_output=True, text=True,
                                   timeout=timeout)
        return Run(completed)

    def source_line(self, text, source=None):
        """The line number of the one line of the source holding `text`."""
        source = source or self.args.source
        with open(source, encoding="utf-8") as stream:
            numbers = [number for number, line in enumerate(stream, 1)
                       if text in line]
        expect(len(numbers) == 1,
               f"'{text}' must appear once in {source}, found {numbers}")
        return numbers[0]

    def site(self, text):
        return f"{os.path.basename(self.args.source)}:{self.source_line(text)}"

    def read(self, name):
        with open(self.path(name), encoding="utf-8") as stream:
            return stream.read()

    def json(self, name, run):
        expect(os.path.exists(self.path(name)), f"{name} was not written",
               run.context())
        try:
            return json.loads(self.read(name))
        except ValueError as error:
            raise CheckFailed(f"{name} is not valid JSON: {error}")


def region(report, name):
    for entry in report["regions"]:
        if entry["name"] == name:
            return entry
    raise CheckFailed(f"no region '{name}' in the report: "
                      f"{[entry['name'] for entry in report['regions']]}")


def count(phase, kind):
    return phase["kinds"][kind]["count"]


def nbytes(phase, kind):
    return phase["kinds"][kind]["bytes"]


# The legacy example: 100 steps of 100000 doubles, output every 10 steps.
STATE_BYTES = 800000
DIAGNOSTICS_BYTES = 16 * 8
STEPS, OUTPUTS = 100, 10
OUTPUT_COPY = "Kokkos::deep_copy(host_state, state);"
SETUP_COPY = "Kokkos::deep_copy(state, host_state);"
STEP_COPY = "Kokkos::deep_copy(probe, state);"
SYNC = "diagnostics.sync_host();"
MODIFY = "parameters.modify_host();"


def case_report_text(case):
    run = case.run(CUNUMPY_REPORT="report.txt", CUNUMPY_BUDGET=case.args.budget)
    expect(run.status == 0, "the program must succeed", run.context())
    expect("legacy_app: 100 steps" in run.stdout, "the program ran",
           run.context())
    expect(run.cunumpy_lines() == [],
           "all is well and the report has a file: stderr stays quiet",
           run.context())
    text = case.read("report.txt")
    for needle in [
            "cunumpy transfer report: ",
            "budget " + case.args.budget + ": ok (3 rule(s))",
            "region 'setup' (1 call); rule: allow to_device",
            "region 'integrate' (100 calls); rule: allow nothing",
            "region 'output' (10 calls); rule: allow to_host "
            "(max_nbytes=800000)",
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
        expect(needle in text, f"the text report must contain: {needle}",
               text)
    expect(re.search(r"to_host +20 +8001280 +20 +0 +[0-9.]+ +[0-9.]+ [GMk]B/s",
                     text) is not None,
           "a row: to_host count, bytes, blocking, async, time, bandwidth",
           text)
    expect("BROKEN" not in text, "no rule is broken", text)


def case_report_json(case):
    run = case.run(CUNUMPY_REPORT="report.json",
                   CUNUMPY_BUDGET=case.args.budget)
    expect(run.status == 0, "the program must succeed", run.context())
    report = case.json("report.json", run)
    expect(report["format"] == "cunumpy-report" and report["version"] == 1,
           "format and version")
    expect(report["rank"] == 0 and report["pid"] > 0, "rank 0 and a pid")
    expect(report["budget"]["ok"] and report["budget"]["checked"] and
           report["budget"]["rules"] == 3 and
           report["budget"]["violations"] == [], "budget checked and ok",
           json.dumps(report["budget"], indent=1))
    total = report["total"]
    expect(count(total, "to_host") == 2 * OUTPUTS and
           nbytes(total, "to_host") == OUTPUTS * (STATE_BYTES +
                                                  DIAGNOSTICS_BYTES),
           "total to_host", json.dumps(total, indent=1))
    expect(count(total, "to_device") == 1 and
           nbytes(total, "to_device") == STATE_BYTES, "total to_device")
    to_host = total["kinds"]["to_host"]
    expect(to_host["blocking"] == 20 and to_host["async"] == 0 and
           to_host["seconds"] > 0 and
           to_host["bandwidth_bytes_per_second"] > 0,
           "blocking, async, time and bandwidth", json.dumps(to_host))
    integrate = region(report, "integrate")
    expect(integrate["calls"] == STEPS and integrate["transfers"] == 0 and
           not integrate["broken"], "integrate: 100 calls, no transfer")
    output = region(report, "output")
    expect(output["calls"] == OUTPUTS and count(output, "to_host") == 20,
           "output: 10 calls, 20 copies home")
    top = output["top_sites"][0]
    expect(top["file"].endswith("legacy_app.cpp") and
           top["line"] == case.source_line(OUTPUT_COPY) and
           top["count"] == OUTPUTS and top["bytes"] == OUTPUTS * STATE_BYTES,
           "output's top site is the copy of the state, by line",
           json.dumps(top, indent=1))
    setup = region(report, "setup")
    expect(setup["calls"] == 1 and count(setup, "to_device") == 1,
           "setup: the initial copy")
    syncs = report["dual_views"]["syncs"]
    expect(len(syncs) == 1 and syncs[0]["label"] == "diagnostics_mirror" and
           syncs[0]["count"] == OUTPUTS and
           syncs[0]["bytes"] == OUTPUTS * DIAGNOSTICS_BYTES and
           syncs[0]["copy_kind"] == "to_host" and
           syncs[0]["site"].endswith(case.site(SYNC)),
           "the DualView sync is linked to the copy it made",
           json.dumps(report["dual_views"], indent=1))
    unsynced = report["dual_views"]["modified_never_synced"]
    expect(len(unsynced) == 1 and
           unsynced[0]["label"] == "parameters_mirror" and
           unsynced[0]["on"] == "host" and
           unsynced[0]["site"].endswith(case.site(MODIFY)),
           "the modify no sync followed is listed",
           json.dumps(report["dual_views"], indent=1))
    expect(report["metadata"], "Kokkos' metadata is kept")


def check_step_violation(case, run):
    line = case.source_line(STEP_COPY)
    expect(f"legacy_app.cpp:{line}:" in run.stderr,
           f"stderr names the line of the copy added to the time step "
           f"(legacy_app.cpp:{line})", run.context())
    expect("phase 'integrate': to_host is not allowed, got 100 event(s)"
           in run.stderr, "stderr names the broken rule", run.context())
    return line


def case_copy_in_step_warn(case):
    run = case.run(["--copy-in-step"], CUNUMPY_REPORT="report.txt",
                   CUNUMPY_BUDGET=case.args.budget)
    expect(run.status == 0, "warn (the default) keeps the exit status",
           run.context())
    line = check_step_violation(case, run)
    text = case.read("report.txt")
    expect("region 'integrate' (100 calls); rule: allow nothing; ignore "
           "device_copy, sync [BROKEN]" in text, "the region is marked", text)
    expect(f"legacy_app.cpp:{line}: deep_copy(\"state\", nbytes=800000) "
           "(x100)" in text, "the report names the line", text)


def case_copy_in_step_exit(case):
    run = case.run(["--copy-in-step"], CUNUMPY_REPORT="report.json",
                   CUNUMPY_BUDGET=case.args.budget,
                   CUNUMPY_ON_VIOLATION="exit")
    expect(run.status == VIOLATION_STATUS,
           f"CUNUMPY_ON_VIOLATION=exit ends with status {VIOLATION_STATUS}",
           run.context())
    expect("legacy_app: 100 steps" in run.stdout,
           "the program ran to its end first", run.context())
    line = check_step_violation(case, run)
    report = case.json("report.json", run)
    violations = report["budget"]["violations"]
    expect(not report["budget"]["ok"] and len(violations) == 1,
           "one broken rule in the JSON", json.dumps(report["budget"]))
    violation = violations[0]
    expect(violation["phase"] == "integrate" and
           violation["kind"] == "to_host" and
           violation["limit"] == "forbidden" and
           violation["actual"] == "100" and
           violation["events"][0]["line"] == line and
           violation["events"][0]["file"].endswith("legacy_app.cpp"),
           "the violation: region, rule, events and line",
           json.dumps(violation, indent=1))
    expect(region(report, "integrate")["broken"], "integrate is broken")


def case_trace(case):
    run = case.run(CUNUMPY_TRACE="trace.json", CUNUMPY_REPORT="report.json")
    expect(run.status == 0, "the program must succeed", run.context())
    trace = case.json("trace.json", run)
    events = trace["traceEvents"]
    for event in events:
        expect(event["ph"] in ("X", "i", "M"), "known phases", str(event))
        if event["ph"] == "X":
            expect(event["dur"] >= 0 and event["ts"] >= 0,
                   "slices have a start and a duration", str(event))

    def of(category):
        return [event for event in events if event.get("cat") == category]

    regions = [event["name"] for event in of("region")]
    expect(regions.count("integrate") == STEPS and
           regions.count("output") == OUTPUTS and
           regions.count("setup") == 1, "one slice per region call",
           str(sorted(set(regions))))
    copies = of("copy")
    expect(len(copies) == 21, "one slice per copy", str(len(copies)))
    state = [event for event in copies
             if event["args"]["site"].endswith(case.site(OUTPUT_COPY))]
    expect(len(state) == OUTPUTS, "the output copies, by site",
           json.dumps(copies[:3], indent=1))
    args = state[0]["args"]
    # The device is the fake one on a host-only build, "Cuda" on a CUDA one.
    source, _, destination = args["direction"].partition(" -> ")
    expect(args["bytes"] == STATE_BYTES and args["kind"] == "to_host" and
           source in ("FakeDevice", "Cuda", "HIP", "SYCL") and
           destination == "Host" and
           args["label"] == "state", "bytes, direction and label", str(args))
    kernels = [event["name"] for event in of("kernel")]
    expect(kernels.count("legacy::advance") == STEPS,
           "one slice per kernel", str(sorted(set(kernels))))
    syncs = [event for event in of("dual_view")
             if event["args"].get("copied")]
    expect(len(syncs) == OUTPUTS and
           syncs[0]["args"]["bytes"] == DIAGNOSTICS_BYTES and
           syncs[0]["args"]["direction"] == "to_host",
           "DualView syncs with their copy", str(syncs[:1]))
    names = {event["name"] for event in events if event["ph"] == "M"}
    expect({"process_name", "thread_name"} <= names, "track names")
    report = case.json("report.json", run)
    expect(report["trace"]["file"].endswith("trace.json") and
           report["trace"]["dropped_slices"] == 0, "the report names the trace")


def case_stderr_summary(case):
    run = case.run()
    expect(run.status == 0, "the program must succeed", run.context())
    lines = run.cunumpy_lines()
    expect(lines and "21 transfer(s) through cunumpy (20 to_host, 1 to_device"
           in lines[0], "without CUNUMPY_REPORT a summary goes to stderr",
           run.context())
    for needle in ["region 'integrate' (100 calls): no transfers",
                   "region 'output' (10 calls): 20 to_host (8001280 bytes)",
                   "budget: none",
                   "full report: set CUNUMPY_REPORT"]:
        expect(any(needle in line for line in lines),
               f"the summary says: {needle}", run.context())


def case_unknown_device_space(case):
    """Without CUNUMPY_DEVICE_SPACES, FakeDevice is a name cunumpy does not
    know: its copies are taken as host-to-host, and every report says so,
    with the variable to set."""
    args = ["--probes", "2"]
    run = case.run(args, CUNUMPY_REPORT="report.json",
                   CUNUMPY_DEVICE_SPACES=None)
    program_ran(run)
    # 1 copy in setup, 2 probes per step, 2 copies every 10 steps.
    report = case.json("report.json", run)
    lines = one_warning(case, run,
                        r"^cunumpy: note: 221 copies not counted: .* \(report "
                        r"in .*/report\.json\)$")
    expect(len(lines) == 1, "a quiet report file still gets the note on "
           "stderr, and nothing else", run.context())
    expect(report["unknown_spaces"] == {"names": ["FakeDevice"],
                                        "uncounted_copies": 221} and
           report["total"]["transfers"] == 0,
           "the JSON counts the copies it took as host-to-host",
           json.dumps({key: report[key] for key in ("unknown_spaces",
                                                    "total")}))
    run = case.run(args, CUNUMPY_DEVICE_SPACES=None)
    one_warning(case, run,
                r"^cunumpy: note: 221 copies not counted: cunumpy does not "
                r"know the memory space\(s\) 'FakeDevice' and took them for "
                r"host spaces; if one is a device, set "
                r"CUNUMPY_DEVICE_SPACES=FakeDevice$")
    run = case.run(args, CUNUMPY_REPORT="report.txt",
                   CUNUMPY_DEVICE_SPACES=None)
    expect("\nnote: 221 copies not counted" in case.read("report.txt"),
           "the text report has the note", case.read("report.txt"))
    # Named, FakeDevice is a device: its copies count, and no note.
    run = case.run(args, CUNUMPY_REPORT="report.json")
    report = case.json("report.json", run)
    expect(report["unknown_spaces"] == {"names": [], "uncounted_copies": 0}
           and report["total"]["transfers"] == 221,
           "with CUNUMPY_DEVICE_SPACES the copies are transfers",
           json.dumps(report["unknown_spaces"]))
    expect(not any("note:" in line for line in run.cunumpy_lines()),
           "and there is no note", run.context())


def case_relative_paths_after_chdir(case):
    """Relative paths name files in the directory the program started in,
    even when it moves to a run directory before the files are written."""
    os.makedirs(case.path("run"))
    run = case.run(["--chdir", "run"], CUNUMPY_REPORT="report.json",
                   CUNUMPY_TRACE="trace.json")
    program_ran(run)
    expect(not os.path.exists(case.path("run/report.json")) and
           not os.path.exists(case.path("run/trace.json")),
           "nothing written in the run directory", run.context())
    report = case.json("report.json", run)
    expect(report["trace"]["file"] == case.path("trace.json") and
           os.path.exists(case.path("trace.json")),
           "the trace where it was asked for, named by its absolute path",
           json.dumps(report["trace"]))


def case_exit_without_finalize(case):
    run = case.run(["--exit-without-finalize"], CUNUMPY_REPORT="report.txt",
                   KP_TEST_TOOL_OUTPUT=case.path("tool.txt"))
    expect(run.status == 0, "exit(0) keeps its status", run.context())
    text = case.read("report.txt")
    expect(text.count("cunumpy transfer report:") == 1,
           "the report is written once", text)
    expect("21 transfer(s) through cunumpy" in text, "with every event", text)
    if case.args.tool:
        tool = case.read("tool.txt")
        expect("finalize 1" in tool,
               "the chained tool is finalized too", tool)
    run = case.run(["--exit-without-finalize", "--copy-in-step"],
                   CUNUMPY_REPORT="report.json",
                   CUNUMPY_BUDGET=case.args.budget,
                   CUNUMPY_ON_VIOLATION="exit")
    expect(run.status == VIOLATION_STATUS,
           "a broken budget still ends with the violation status",
           run.context())
    expect(not case.json("report.json", run)["budget"]["ok"],
           "and the report says why")


def tool_counts(case, name="tool.txt"):
    counts = {}
    for line in case.read(name).splitlines():
        key, value = line.split()
        counts[key] = int(value)
    return counts


def check_chained(case, run):
    expect(run.status == 0, "the program must succeed", run.context())
    counts = tool_counts(case)
    report = case.json("report.json", run)
    trace = case.json("trace.json", run)
    kernels = sum(1 for event in trace["traceEvents"]
                  if event.get("cat") == "kernel")
    regions = sum(1 for event in trace["traceEvents"]
                  if event.get("cat") == "region")
    expected = {"init": 1, "finalize": 1,
                "deep_copy": report["total"]["transfers"],
                "end_deep_copy": report["total"]["transfers"],
                "push_region": regions, "pop_region": regions,
                "kernel": kernels, "dual_view_sync": OUTPUTS,
                "dual_view_modify": OUTPUTS + 1}
    for key, value in expected.items():
        expect(counts.get(key) == value,
               f"the chained tool received {key} {value}, got "
               f"{counts.get(key)}", json.dumps(counts))
    expect(report["total"]["transfers"] == 21, "cunumpy still counts")


def case_chaining(case):
    """The ';' list is in the variable Kokkos reads (ctest's environment)."""
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_TRACE="trace.json",
                   KP_TEST_TOOL_OUTPUT=case.path("tool.txt"))
    check_chained(case, run)


def case_chaining_tools_libs(case):
    """Kokkos 3 loads KOKKOS_PROFILE_LIBRARY; the plugin reads the chain from
    KOKKOS_TOOLS_LIBS first."""
    plugin = os.environ["KOKKOS_PROFILE_LIBRARY"]
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_TRACE="trace.json",
                   KP_TEST_TOOL_OUTPUT=case.path("tool.txt"),
                   KOKKOS_TOOLS_LIBS=f"{plugin};{case.args.tool}")
    check_chained(case, run)


def one_warning(case, run, pattern):
    lines = run.cunumpy_lines()
    matching = [line for line in lines if re.search(pattern, line)]
    expect(len(matching) == 1,
           f"one clear line on stderr matching /{pattern}/", run.context())
    return lines


def program_ran(run):
    expect(run.status == 0, "the program runs on unharmed", run.context())
    expect("legacy_app: 100 steps" in run.stdout, "to its end",
           run.context())


def case_bad_budget_missing(case):
    run = case.run(CUNUMPY_REPORT="report.json",
                   CUNUMPY_BUDGET=case.path("missing.toml"))
    program_ran(run)
    lines = one_warning(case, run,
                        r"^cunumpy: CUNUMPY_BUDGET: .*cannot read rule file "
                        r".*missing\.toml.*; running without a budget$")
    expect(len(lines) == 1, "and nothing else", run.context())
    budget = case.json("report.json", run)["budget"]
    expect(not budget["checked"] and "missing.toml" in budget["error"],
           "the report says the budget was not checked", str(budget))
    run = case.run(CUNUMPY_REPORT="report.json",
                   CUNUMPY_BUDGET=case.path("missing.toml"),
                   CUNUMPY_ON_VIOLATION="exit")
    expect(run.status == VIOLATION_STATUS,
           "with CUNUMPY_ON_VIOLATION=exit an unchecked budget fails the run",
           run.context())


def write(case, name, text):
    with open(case.path(name), "w", encoding="utf-8") as stream:
        stream.write(text)
    return case.path(name)


def case_bad_budget_syntax(case):
    budget = write(case, "broken.toml",
                   "[phases.integrate]\nallow.to_host = { max_nbytes = }\n")
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BUDGET=budget)
    program_ran(run)
    lines = one_warning(case, run,
                        r"^cunumpy: CUNUMPY_BUDGET: .*broken\.toml:2:.*TOML "
                        r"syntax error")
    expect(len(lines) == 1, "and nothing else", run.context())


def case_bad_budget_key(case):
    budget = write(case, "typo.toml",
                   "[phases.integrate]\nallow.to_host = { max_bytes = 8 }\n")
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BUDGET=budget)
    program_ran(run)
    lines = one_warning(case, run,
                        r"^cunumpy: CUNUMPY_BUDGET: .*typo\.toml:2: key "
                        r"'phases\.integrate\.allow\.to_host\.max_bytes': "
                        r"unknown limit")
    expect(len(lines) == 1, "and nothing else", run.context())


def case_bad_budget_empty(case):
    """A budget path that names no rules is refused, not passed: an empty
    file, and a directory (which opens for reading)."""
    empty = write(case, "empty.toml", "# rules to come\n")
    for path, pattern in ((empty, r"empty\.toml' defines no phases"),
                          (case.path(""), r"' is a directory")):
        run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BUDGET=path)
        program_ran(run)
        lines = one_warning(case, run,
                            r"^cunumpy: CUNUMPY_BUDGET: rule file '.*" +
                            pattern + r".*; running without a budget$")
        expect(len(lines) == 1, "and nothing else", run.context())
        budget = case.json("report.json", run)["budget"]
        expect(not budget["checked"] and not budget["ok"],
               "the report says the budget was not checked", str(budget))
        run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BUDGET=path,
                       CUNUMPY_ON_VIOLATION="exit")
        expect(run.status == VIOLATION_STATUS,
               "with CUNUMPY_ON_VIOLATION=exit it fails the run",
               run.context())


def case_bad_budget_fifo(case):
    """A FIFO as the rule file is refused at once: reading it would block
    Kokkos::initialize until a writer comes."""
    fifo = case.path("rules.fifo")
    os.mkfifo(fifo)
    try:
        run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BUDGET=fifo,
                       timeout=60)
    except subprocess.TimeoutExpired:
        raise CheckFailed("the program blocked on the FIFO given as "
                          "CUNUMPY_BUDGET")
    program_ran(run)
    lines = one_warning(case, run,
                        r"^cunumpy: CUNUMPY_BUDGET: rule file '.*rules\.fifo' "
                        r"is a FIFO \(named pipe\), not a regular file; .*"
                        r"; running without a budget$")
    expect(len(lines) == 1, "and nothing else", run.context())
    budget = case.json("report.json", run)["budget"]
    expect(not budget["checked"], "the report says the budget was not "
           "checked", str(budget))


def case_budget_unentered_phase(case):
    """A rule whose phase no region ran (a typo, say) leaves the real region
    unconstrained: the verdict stays ok, and a note names it."""
    budget = write(case, "typo.toml",
                   "[phases.intergrate]\nallow.to_host = { max_nbytes = 8 }"
                   "\n[phases.output]\nallow.to_host = {}\n")
    note = (r"^cunumpy: note: the rule of phase 'intergrate' never applied: "
            r"no region of that name ran \(regions that ran: 'setup', "
            r"'integrate', 'output'\); check the names in .*typo\.toml")
    run = case.run(["--copy-in-step"], CUNUMPY_BUDGET=budget)
    program_ran(run)
    one_warning(case, run, note + "$")
    expect(any(line.endswith(": ok (2 rule(s))")
               for line in run.cunumpy_lines()),
           "the verdict is still ok", run.context())
    run = case.run(["--copy-in-step"], CUNUMPY_BUDGET=budget,
                   CUNUMPY_REPORT="report.json")
    lines = one_warning(case, run, note + r" \(report in .*report\.json\)$")
    expect(len(lines) == 1, "a quiet report file still gets the note",
           run.context())
    expect(case.json("report.json", run)["budget"]["unentered_phases"] ==
           ["intergrate"], "the JSON names the phase")
    # A calls rule on a phase that never ran is broken, which says enough.
    budget = write(case, "calls.toml", "[phases.intergrate]\ncalls = 100\n")
    run = case.run(CUNUMPY_BUDGET=budget, CUNUMPY_REPORT="report.json")
    expect(case.json("report.json", run)["budget"]["unentered_phases"] == []
           and not any("never applied" in line
                       for line in run.cunumpy_lines()),
           "no note next to the broken calls rule", run.context())


def case_bad_report_path(case):
    run = case.run(CUNUMPY_REPORT=case.path("no/such/dir/report.txt"))
    program_ran(run)
    one_warning(case, run,
                r"^cunumpy: CUNUMPY_REPORT: cannot write '.*no/such/dir/"
                r"report\.txt' \(directory .*No such file or directory\); "
                r"the summary goes to stderr instead$")
    expect(any("21 transfer(s)" in line for line in run.cunumpy_lines()),
           "the summary went to stderr", run.context())


def case_bad_trace_path(case):
    os.makedirs(case.path("a_directory"))
    run = case.run(CUNUMPY_REPORT="report.json",
                   CUNUMPY_TRACE=case.path("a_directory"))
    program_ran(run)
    lines = one_warning(case, run,
                        r"^cunumpy: CUNUMPY_TRACE: cannot write .* \(it is a "
                        r"directory\); no trace is recorded$")
    expect(len(lines) == 1, "and nothing else", run.context())
    expect(case.json("report.json", run)["trace"] is None,
           "no trace in the report")


def case_bad_same_paths(case):
    """An output that names the rule file or the other output is refused:
    a report written over budget.toml would destroy the rules it checks."""
    rules = "[phases.integrate]\nallow.to_host = { max_nbytes = 8 }\n"
    budget = write(case, "budget.toml", rules)
    run = case.run(CUNUMPY_BUDGET=budget,
                   CUNUMPY_REPORT=os.path.join(case.work, ".", "budget.toml"),
                   CUNUMPY_TRACE=budget)
    program_ran(run)
    one_warning(case, run,
                r"^cunumpy: CUNUMPY_REPORT: cannot write '.*budget\.toml' "
                r"\(it is also CUNUMPY_BUDGET, the rule file\); the summary "
                r"goes to stderr instead$")
    one_warning(case, run,
                r"^cunumpy: CUNUMPY_TRACE: cannot write '.*budget\.toml' "
                r"\(it is also CUNUMPY_BUDGET, the rule file\); no trace is "
                r"recorded$")
    expect(case.read("budget.toml") == rules, "the rule file is intact",
           case.read("budget.toml"))
    expect(any("budget " in line and ": ok" in line
               for line in run.cunumpy_lines()),
           "and it was checked", run.context())
    run = case.run(CUNUMPY_REPORT="report.json",
                   CUNUMPY_TRACE=case.path("report.json"))
    program_ran(run)
    one_warning(case, run,
                r"^cunumpy: CUNUMPY_TRACE: cannot write '.*report\.json' "
                r"\(it is also CUNUMPY_REPORT, the report\); no trace is "
                r"recorded$")
    expect(case.json("report.json", run)["trace"] is None,
           "the report is the report, and names no trace")


def case_bad_on_violation(case):
    run = case.run(["--copy-in-step"], CUNUMPY_REPORT="report.json",
                   CUNUMPY_BUDGET=case.args.budget,
                   CUNUMPY_ON_VIOLATION="explode")
    program_ran(run)
    one_warning(case, run,
                r"^cunumpy: CUNUMPY_ON_VIOLATION=\"explode\" is neither "
                r"'warn' nor 'exit'; using warn$")
    # A huge value is named by an excerpt, not echoed whole.
    run = case.run(CUNUMPY_REPORT="report.json",
                   CUNUMPY_ON_VIOLATION="x" * 100000)
    program_ran(run)
    lines = one_warning(case, run, r"^cunumpy: CUNUMPY_ON_VIOLATION=\"x{32}"
                        r"\.\.\.\[99936 bytes\]\.\.\.x{32}\" is neither")
    expect(len(lines) == 1, "and nothing else", run.context())


def case_bad_backtrace(case):
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BACKTRACE="deep")
    program_ran(run)
    lines = one_warning(case, run,
                        r"^cunumpy: CUNUMPY_BACKTRACE=\"deep\" is not an "
                        r"integer in \[0, [0-9]+\]; using [0-9]+$")
    expect(len(lines) == 1, "and nothing else", run.context())
    top = region(case.json("report.json", run), "output")["top_sites"][0]
    expect(top["line"] == case.source_line(OUTPUT_COPY),
           "call sites work with the default depth", json.dumps(top))
    # One rule for every numeric variable: digits, blanks around them
    # allowed; anything else, an empty value included, is one line.
    for value, depth in ((" 5", 5), ("5 ", 5), ("\t7\t", 7), ("007", 7)):
        run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BACKTRACE=value)
        program_ran(run)
        expect(not run.cunumpy_lines(), f"{value!r} is accepted",
               run.context())
        expect(case.json("report.json", run)["backtrace_depth"] == depth,
               f"{value!r} is depth {depth}")
    for value in ("", " ", "-0", "+5", "65", "5x", "9" * 30):
        run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BACKTRACE=value)
        program_ran(run)
        one_warning(case, run, r"^cunumpy: CUNUMPY_BACKTRACE=\"" +
                    re.escape(value) + r"\" is not an integer in \[0, 64\]; "
                    r"using 32$")
        expect(case.json("report.json", run)["backtrace_depth"] == 32,
               f"{value!r} leaves the default depth")
    # The rank variables follow the same rule.
    run = case.run(CUNUMPY_REPORT="report-%r.json", OMPI_COMM_WORLD_RANK=" 3")
    program_ran(run)
    expect(case.json("report-3.json", run)["rank"] == 3, "rank ' 3' is 3")
    run = case.run(CUNUMPY_REPORT="report-%r.json", OMPI_COMM_WORLD_RANK="-1",
                   PMI_RANK="2")
    program_ran(run)
    one_warning(case, run, r'^cunumpy: OMPI_COMM_WORLD_RANK="-1" is not an '
                r'integer in \[0, 1073741823\]; ignored$')
    expect(case.json("report-2.json", run)["rank"] == 2,
           "a bad rank variable is skipped for the next one")


def case_bad_next_tool(case):
    plugin = os.environ.get("KOKKOS_TOOLS_LIBS") or \
        os.environ["KOKKOS_PROFILE_LIBRARY"]
    missing = case.path("libkp_missing.so")
    run = case.run(CUNUMPY_REPORT="report.json",
                   KOKKOS_TOOLS_LIBS=f"{plugin};{missing}")
    program_ran(run)
    lines = one_warning(case, run,
                        r"^cunumpy: cannot load the next Kokkos tool "
                        r"'.*libkp_missing\.so': .*; running without it$")
    expect(len(lines) == 1, "and nothing else", run.context())
    expect(case.json("report.json", run)["total"]["transfers"] == 21,
           "cunumpy still counts")


def case_backtrace_off(case):
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BACKTRACE="0")
    program_ran(run)
    report = case.json("report.json", run)
    expect(report["backtrace_depth"] == 0, "depth 0 in the report")
    sites = {site["site"] for site in report["total"]["top_sites"]}
    expect(sites == {"<unknown>"}, "no call sites without stacks",
           str(sites))


def case_with_cunumpy_library(case):
    """A program using cunumpy's library with the plugin loaded: one
    recorder, fed once."""
    run = case.run(["20"], CUNUMPY_REPORT="report.json")
    expect(run.status == 0, "the program must succeed", run.context())
    expect("wrong way: 40 transfer(s)" in run.stdout and
           "right way: 2 transfer(s)" in run.stdout,
           "the program's own counters are not doubled", run.context())
    report = case.json("report.json", run)
    expect(report["total"]["transfers"] == 42, "the plugin sees them all",
           json.dumps(report["total"]["kinds"]))
    sites = [site["site"] for site in report["total"]["top_sites"]]
    expect(any(site.endswith("time_loop.cpp:" +
                             str(case.source_line("state = cunumpy::to_host"
                                                  "(device);")))
               for site in sites),
           "cunumpy's API call sites reach the plugin's report", str(sites))


def case_entry_points(case):
    fencing = "1" if case.args.tool else "0"
    run = case.run(command=[case.args.program, case.args.plugin, fencing],
                   CUNUMPY_REPORT="report.json", CUNUMPY_TRACE="trace.json",
                   KP_TEST_TOOL_OUTPUT=case.path("tool.txt"))
    expect(run.status == 0 and "plugin_entry_points: ok" in run.stdout,
           "the entry points behave", run.context())
    report = case.json("report.json", run)
    total = report["total"]
    expect(count(total, "to_device") == 3 and
           nbytes(total, "to_device") == 800 + 256 + 16 and
           count(total, "to_host") == 1 and count(total, "sync") == 2 and
           total["kinds"]["sync"]["implicit"] == 1,
           "copies and syncs, none before init or after finalize",
           json.dumps(total["kinds"], indent=1))
    step = region(report, "step")
    expect(step["calls"] == 1 and count(step, "to_device") == 1 and
           nbytes(step, "to_device") == 800 and
           step["kinds"]["to_device"]["blocking"] == 1 and
           count(step, "sync") == 2, "region 'step'",
           json.dumps(step, indent=1))
    expect(region(report, "outer")["transfers"] == 0 and
           count(region(report, "inner"), "to_host") == 1,
           "an event counts in the innermost region only")
    outside = report["outside"]["kinds"]["to_device"]
    asynchronous = 1 if case.args.kokkos_major >= 4 else 0
    expect(outside["count"] == 1 and outside["async"] == asynchronous,
           "an unfenced copy is asynchronous on Kokkos 4", json.dumps(outside))
    sites = {site["file"] for site in total["top_sites"]}
    expect(sites == {site for site in sites
                     if site.endswith("plugin_entry_points.cpp")},
           "call sites are in the calling program", str(sites))
    dual = report["dual_views"]
    expect(len(dual["syncs"]) == 1 and dual["syncs"][0]["label"] == "field"
           and dual["syncs"][0]["bytes"] == 256 and
           dual["syncs"][0]["copy_kind"] == "to_device",
           "a sync linked to its copy", json.dumps(dual, indent=1))
    expect([entry["label"] for entry in dual["syncs_without_copy"]] ==
           ["constant"], "a sync that copied nothing", json.dumps(dual))
    expect([(entry["label"], entry["on"])
            for entry in dual["modified_never_synced"]] ==
           [("forgotten", "device")],
           "the synced modify is gone, the forgotten one listed",
           json.dumps(dual))
    expect(report["metadata"].get("entry_points") == "yes", "metadata")
    trace = case.json("trace.json", run)["traceEvents"]

    def names(category):
        return sorted(event["name"] for event in trace
                      if event.get("cat") == category)

    expect(names("kernel") == ["step::advance", "step::norm", "step::scan"],
           "kernel slices", str(names("kernel")))
    expect(len(names("fence")) == 2, "fence slices (a copy's own fence is "
           "part of the copy)", str(names("fence")))
    expect({"step", "outer", "inner", "dual"} <= set(names("region")),
           "region slices", str(names("region")))
    expect(len(names("copy")) == 4 and len(names("dual_view")) == 4,
           "copy slices and DualView instants", str(trace))
    if case.args.tool:
        counts = tool_counts(case)
        # Every call after init reaches the next tool, unbalanced ones too.
        for key, value in {"init": 1, "finalize": 1, "deep_copy": 5,
                           "end_deep_copy": 6, "fence": 5, "end_fence": 6,
                           "push_region": 5, "pop_region": 6, "kernel": 1,
                           "dual_view_sync": 2, "dual_view_modify": 2}.items():
            expect(counts.get(key) == value,
                   f"the next tool received {key} {value}",
                   json.dumps(counts))


def case_host_only(case):
    """A Kokkos build without a device (Kokkos 4 has no fake one): no
    transfers, but regions, kernels, fences, chaining and the budget's
    calls rule still work on the real program."""
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_TRACE="trace.json",
                   KP_TEST_TOOL_OUTPUT=case.path("tool.txt"))
    expect(run.status == 0, "the program must succeed", run.context())
    report = case.json("report.json", run)
    expect(region(report, "integrate")["calls"] == STEPS and
           region(report, "output")["calls"] == OUTPUTS and
           report["total"]["transfers"] == 0,
           "regions are phases; host copies are no transfers",
           json.dumps(report["regions"], indent=1))
    trace = case.json("trace.json", run)["traceEvents"]
    counts = tool_counts(case)

    def slices(category):
        return sum(1 for event in trace if event.get("cat") == category)

    expect(counts["init"] == 1 and counts["finalize"] == 1 and
           counts["push_region"] == slices("region") and
           counts["kernel"] == slices("kernel") and slices("kernel") > 0,
           "the chained tool and the trace saw the same regions and kernels",
           json.dumps(counts))
    if case.args.kokkos_major >= 4:
        expect(slices("fence") > 0, "Kokkos 4 fences are traced")
    budget = write(case, "calls.toml", "[phases.integrate]\ncalls = 1\n")
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BUDGET=budget,
                   CUNUMPY_ON_VIOLATION="exit")
    expect(run.status == VIOLATION_STATUS, "a broken calls rule fails the run",
           run.context())
    violations = case.json("report.json", run)["budget"]["violations"]
    expect([(v["phase"], v["limit"], v["actual"]) for v in violations] ==
           [("integrate", "calls", str(STEPS))], "the calls rule",
           json.dumps(violations))


# The same sequence with the test tool after the plugin (--tool).
case_entry_points_chained = case_entry_points


def case_mpi(case):
    mpirun = [case.args.mpirun, "--allow-run-as-root", "--oversubscribe"]
    merge = [sys.executable, case.args.report_tool]
    run = case.run(command=mpirun + ["-np", "2", case.args.program],
                   CUNUMPY_REPORT="same-%r.json",
                   CUNUMPY_BUDGET=case.args.budget)
    expect(run.status == 0, "mpirun -np 2 must succeed", run.context())
    same = [case.path(f"same-{rank}.json") for rank in (0, 1)]
    expect(all(os.path.exists(path) for path in same),
           "each rank writes report-<rank>.json", run.context())
    run = case.run(command=merge + ["--check"] + same)
    expect(run.status == 0 and "budget: no rank broke it" in run.stdout and
           re.search(r"region 'integrate'.*\n  calls +100 +100 +100 ",
                     run.stdout),
           "two equal ranks merge into one table", run.context())

    # One rank with a copy added to its time step.
    command = mpirun + ["-np", "1", case.args.program, ":",
                        "-np", "1", case.args.program, "--copy-in-step"]
    run = case.run(command=command, CUNUMPY_REPORT="report-%r.json",
                   CUNUMPY_BUDGET=case.args.budget)
    expect(run.status == 0, "mpirun must succeed (warn mode)", run.context())
    reports = [case.json(f"report-{rank}.json", run) for rank in (0, 1)]
    expect([report["rank"] for report in reports] == [0, 1] and
           all(report["rank_known"] for report in reports),
           "each rank writes its own report with its rank")
    expect(reports[0]["budget"]["ok"] and not reports[1]["budget"]["ok"],
           "rank 1 added a copy to its time step")
    files = [case.path("report-0.json"), case.path("report-1.json")]
    run = case.run(command=merge + ["--json", "merged.json"] + files)
    expect(run.status == 0, "cunumpy-report merges", run.context())
    table = run.stdout
    for needle in ["cunumpy-report: 2 rank(s) (0, 1)",
                   "budget: BROKEN on rank(s) 1",
                   "broken on rank(s): 1",
                   "rank 1: phase 'integrate': to_host is not allowed"]:
        expect(needle in table, f"the table says: {needle}", table)
    expect(re.search(r"region 'integrate'.*\n  calls +100 +100 +100 +0\n"
                     r"  to_host count +0 +50 +100 +1\n"
                     r"  to_host bytes +0 +40000000 +80000000 +1", table),
           "min, mean, max and the rank of the max per region", table)
    merged = case.json("merged.json", run)
    integrate = next(phase for phase in merged["phases"]
                     if phase["name"] == "integrate")
    expect(integrate["broken_ranks"] == [1] and
           integrate["rows"]["to_host count"] ==
           {"min": 0, "mean": 50.0, "max": 100, "max_rank": 1},
           "the merged JSON", json.dumps(integrate, indent=1))
    run = case.run(command=merge + ["--check"] + files)
    expect(run.status == 1, "--check fails when a rank broke its budget",
           run.context())
    with open(case.path("other.json"), "w", encoding="utf-8") as stream:
        stream.write("{}")
    run = case.run(command=merge + [case.path("other.json")])
    expect(run.status == 2 and "not a cunumpy plugin report" in run.stderr,
           "a file that is no report is refused", run.context())
    with open(case.path("report.txt"), "w", encoding="utf-8") as stream:
        stream.write("cunumpy transfer report: legacy_app (rank 0)\n")
    run = case.run(command=merge + [case.path("report.txt")])
    expect(run.status == 2 and "a text report cannot be merged: write the "
           "reports with CUNUMPY_REPORT=<file>.json" in run.stderr,
           "a text report is refused with what to do", run.context())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("case")
    parser.add_argument("--program", required=True)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--source", help="the program's source file")
    parser.add_argument("--budget", help="the program's budget file")
    parser.add_argument("--tool", help="the chained test tool")
    parser.add_argument("--plugin", help="libkp_cunumpy.so")
    parser.add_argument("--mpirun")
    parser.add_argument("--report-tool", help="cunumpy-report")
    parser.add_argument("--kokkos-major", type=int, default=3)
    arguments = parser.parse_args()
    function = globals().get("case_" + arguments.case)
    if function is None:
        print(f"check_plugin.py: unknown case {arguments.case}",
              file=sys.stderr)
        return 2
    try:
        function(Case(arguments))
    except CheckFailed as failure:
        print(f"FAILED ({arguments.case}): {failure}", file=sys.stderr)
        return 1
    print(f"ok ({arguments.case})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
