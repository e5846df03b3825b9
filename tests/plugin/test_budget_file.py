"""The budget file (CUNUMPY_BUDGET) and CUNUMPY_ON_VIOLATION on the legacy
example: a copy added to the time step breaks a rule; a file that cannot be
used is refused with one line on stderr, and the program runs on."""

import os
import re
import subprocess

import pytest

from plugin_helpers import (LEGACY_APP, STEP_COPY, VIOLATION_STATUS,
                            one_warning, phase, program_ran, shown)


pytestmark = [LEGACY_APP, pytest.mark.needs("device")]


def check_step_violation(case, run):
    """stderr names the broken rule and the line of the copy in the time
    step; returns that line."""
    line = case.source_line(STEP_COPY)
    assert f"legacy_app.cpp:{line}:" in run.stderr, \
        ("stderr names the line of the copy added to the time step "
         f"(legacy_app.cpp:{line})\n{run}")
    assert ("phase 'integrate': to_host is not allowed, got 100 event(s)"
            in run.stderr), f"stderr names the broken rule\n{run}"
    return line


def test_copy_in_step_warn(case, budget):
    run = case.run(["--copy-in-step"], CUNUMPY_REPORT="report.txt",
                   CUNUMPY_BUDGET=budget)
    assert run.status == 0, \
        f"warn (the default) keeps the exit status\n{run}"
    line = check_step_violation(case, run)
    text = case.read("report.txt")
    assert ("phase 'integrate' (100 calls); rule: allow nothing; ignore "
            "device_copy, sync [BROKEN]" in text), \
        f"the phase is marked\n{text}"
    assert (f"legacy_app.cpp:{line}: deep_copy(\"state\", nbytes=800000) "
            "(x100)" in text), f"the report names the line\n{text}"


def test_copy_in_step_exit(case, budget):
    run = case.run(["--copy-in-step"], CUNUMPY_REPORT="report.json",
                   CUNUMPY_BUDGET=budget, CUNUMPY_ON_VIOLATION="exit")
    assert run.status == VIOLATION_STATUS, \
        f"CUNUMPY_ON_VIOLATION=exit ends with status {VIOLATION_STATUS}\n{run}"
    assert "legacy_app: 100 steps" in run.stdout, \
        f"the program ran to its end first\n{run}"
    line = check_step_violation(case, run)
    report = case.json("report.json", run)
    violations = report["budget"]["violations"]
    assert not report["budget"]["ok"] and len(violations) == 1, \
        f"one broken rule in the JSON\n{shown(report['budget'])}"
    violation = violations[0]
    assert (violation["phase"] == "integrate" and
            violation["kind"] == "to_host" and
            violation["limit"] == "forbidden" and
            violation["actual"] == "100" and
            violation["events"][0]["line"] == line and
            violation["events"][0]["file"].endswith("legacy_app.cpp")), \
        f"the violation: region, rule, events and line\n{shown(violation)}"
    assert phase(report, "integrate")["broken"], "integrate is broken"


def test_report_that_cannot_be_made(case, budget, fail_alloc):
    """An allocation that fails while the JSON report is made (its 64 KiB
    buffer, LD_PRELOAD'ed to fail once) loses the file, not the verdict: one
    line says why, the summary with the broken rule goes to stderr, and
    CUNUMPY_ON_VIOLATION=exit still ends the run with its status."""
    run = case.run(["--copy-in-step"], CUNUMPY_REPORT="report.json",
                   CUNUMPY_BUDGET=budget, CUNUMPY_ON_VIOLATION="exit",
                   LD_PRELOAD=fail_alloc, FAIL_ALLOC_SIZE="65537")
    assert run.status == VIOLATION_STATUS, \
        f"the broken rule still ends the run with {VIOLATION_STATUS}\n{run}"
    assert "legacy_app: 100 steps" in run.stdout, f"the program ran\n{run}"
    one_warning(run, r"^cunumpy: CUNUMPY_REPORT: cannot write .*report\.json' "
                     r"\(it could not be made: std::bad_alloc\); the summary "
                     r"goes to stderr instead$")
    assert any(re.match(r"^cunumpy: budget .*budget\.toml: BROKEN", line)
               for line in run.cunumpy_lines()), \
        f"the summary on stderr has the verdict\n{run}"


def test_budget_unentered_phase(case):
    """A rule whose phase no region ran (a typo, say) leaves the real region
    unconstrained: it is a broken rule that names the regions that ran,
    closest first, unless the rule is optional."""
    budget = case.write("typo.toml",
                        "[phases.intergrate]\nallow.to_host = "
                        "{ max_nbytes = 8 }\n[phases.output]\n"
                        "allow.to_host = {}\n")
    run = case.run(["--copy-in-step"], CUNUMPY_BUDGET=budget,
                   CUNUMPY_ON_VIOLATION="exit")
    assert run.status == VIOLATION_STATUS, \
        f"a rule that never applied fails the run\n{run}"
    assert ("phase 'intergrate': never entered while counting" in run.stderr
            and "regions and phases that ran: 'integrate', 'output', 'setup'"
            in run.stderr), f"stderr names it and what ran\n{run}"
    assert any(": BROKEN, 1 broken rule(s)" in line
               for line in run.cunumpy_lines()), f"the verdict\n{run}"
    run = case.run(["--copy-in-step"], CUNUMPY_BUDGET=budget,
                   CUNUMPY_REPORT="report.json")
    report = case.json("report.json", run)
    assert report["budget"]["unentered_phases"] == ["intergrate"], \
        f"the JSON names the phase\n{shown(report['budget'])}"
    violation = report["budget"]["violations"][0]
    assert (violation["limit"] == "never_entered" and
            violation["phase"] == "intergrate"), shown(violation)
    # Marked optional, the phase may not run.
    budget = case.write("optional.toml",
                        "[phases.intergrate]\noptional = true\n"
                        "[phases.output]\nallow.to_host = {}\n")
    run = case.run(CUNUMPY_BUDGET=budget, CUNUMPY_ON_VIOLATION="exit")
    program_ran(run)
    assert any(line.endswith(": ok (2 rule(s))")
               for line in run.cunumpy_lines()), f"optional: ok\n{run}"
    # A calls rule on a phase that never ran is broken as a calls rule.
    budget = case.write("calls.toml", "[phases.intergrate]\ncalls = 100\n")
    run = case.run(CUNUMPY_BUDGET=budget, CUNUMPY_REPORT="report.json")
    violations = case.json("report.json", run)["budget"]["violations"]
    assert [v["limit"] for v in violations] == ["calls"], shown(violations)


def test_bad_budget_missing(case):
    missing = case.path("missing.toml")
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BUDGET=missing)
    program_ran(run)
    lines = one_warning(run,
                        r"^cunumpy: CUNUMPY_BUDGET: .*cannot read rule file "
                        r".*missing\.toml.*; no rule is checked, and the "
                        r"budget fails$")
    assert len(lines) == 1, f"and nothing else\n{run}"
    budget = case.json("report.json", run)["budget"]
    assert not budget["checked"] and "missing.toml" in budget["error"], \
        f"the report says the budget was not checked\n{shown(budget)}"
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BUDGET=missing,
                   CUNUMPY_ON_VIOLATION="exit")
    assert run.status == VIOLATION_STATUS, \
        f"with CUNUMPY_ON_VIOLATION=exit an unchecked budget fails the run\n{run}"


def test_bad_budget_empty(case):
    """A budget path that names no rules is refused, not passed: an empty
    file, and a directory (which opens for reading)."""
    empty = case.write("empty.toml", "# rules to come\n")
    for path, pattern in ((empty, r"empty\.toml' defines no phases"),
                          (case.path(""), r"' is a directory")):
        run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BUDGET=path)
        program_ran(run)
        lines = one_warning(run,
                            r"^cunumpy: CUNUMPY_BUDGET: rule file '.*" +
                            pattern + r".*; no rule is checked, and the "
                                      r"budget fails$")
        assert len(lines) == 1, f"and nothing else\n{run}"
        budget = case.json("report.json", run)["budget"]
        assert not budget["checked"] and not budget["ok"], \
            f"the report says the budget was not checked\n{shown(budget)}"
        run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BUDGET=path,
                       CUNUMPY_ON_VIOLATION="exit")
        assert run.status == VIOLATION_STATUS, \
            f"with CUNUMPY_ON_VIOLATION=exit it fails the run\n{run}"


def test_bad_budget_syntax(case):
    budget = case.write("broken.toml", "[phases.integrate]\n"
                        "allow.to_host = { max_nbytes = }\n")
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BUDGET=budget)
    program_ran(run)
    lines = one_warning(run,
                        r"^cunumpy: CUNUMPY_BUDGET: .*broken\.toml:2:.*TOML "
                        r"syntax error")
    assert len(lines) == 1, f"and nothing else\n{run}"


def test_bad_budget_key(case):
    budget = case.write("typo.toml", "[phases.integrate]\n"
                        "allow.to_host = { max_bytes = 8 }\n")
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BUDGET=budget)
    program_ran(run)
    lines = one_warning(run,
                        r"^cunumpy: CUNUMPY_BUDGET: .*typo\.toml:2: key "
                        r"'phases\.integrate\.allow\.to_host\.max_bytes': "
                        r"unknown limit")
    assert len(lines) == 1, f"and nothing else\n{run}"


def test_bad_on_violation(case, budget):
    run = case.run(["--copy-in-step"], CUNUMPY_REPORT="report.json",
                   CUNUMPY_BUDGET=budget, CUNUMPY_ON_VIOLATION="explode")
    program_ran(run)
    one_warning(run,
                r"^cunumpy: CUNUMPY_ON_VIOLATION=\"explode\" is not one of "
                r"warn, exit; using warn$")
    # A huge value is named by an excerpt, not echoed whole.
    run = case.run(CUNUMPY_REPORT="report.json",
                   CUNUMPY_ON_VIOLATION="x" * 100000)
    program_ran(run)
    lines = one_warning(run, r"^cunumpy: CUNUMPY_ON_VIOLATION=\"x{32}"
                             r"\.\.\.\[99936 bytes\]\.\.\.x{32}\" is not one of")
    assert len(lines) == 1, f"and nothing else\n{run}"


def test_bad_budget_fifo(case):
    """A FIFO as the rule file is refused at once: reading it would block
    Kokkos::initialize until a writer comes."""
    fifo = case.path("rules.fifo")
    os.mkfifo(fifo)
    try:
        run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BUDGET=fifo,
                       timeout=60)
    except subprocess.TimeoutExpired:
        raise AssertionError("the program blocked on the FIFO given as "
                             "CUNUMPY_BUDGET")
    program_ran(run)
    lines = one_warning(run,
                        r"^cunumpy: CUNUMPY_BUDGET: rule file '.*rules\.fifo' "
                        r"is a FIFO \(named pipe\), not a regular file; .*"
                        r"; no rule is checked, and the budget fails$")
    assert len(lines) == 1, f"and nothing else\n{run}"
    budget = case.json("report.json", run)["budget"]
    assert not budget["checked"], \
        f"the report says the budget was not checked\n{shown(budget)}"
