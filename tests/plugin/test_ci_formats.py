"""The reports CI systems show, read by the programs that show them: SARIF
(sarif-pydantic's model of SARIF 2.1.0; sarif-tools, whose `--check error`
fails a job and whose `codeclimate` makes GitLab's code quality report),
JUnit XML (junitparser), and GitHub's annotations on stderr. The legacy
example under its budget, broken (--copy-in-step) and kept; a run that
checked nothing and one that may have missed events; a merged job; the
examples of examples/ci, whose commands build the files they upload.
The readers come from PyPI into the build's ci-venv (skipped in one line
when PyPI cannot be reached)."""

import json
import os
import re
import subprocess
import xml.etree.ElementTree

import pytest

from plugin_helpers import (LEGACY_APP, REPOSITORY, STATE_BYTES, STEPS,
                            STEP_COPY)
from report_tool_helpers import (build_venv, call_tool, passing, version3,
                                 write_job, write_json)


pytestmark = [LEGACY_APP, pytest.mark.needs("device"),
              pytest.mark.ctest(TIMEOUT=900, RESOURCE_LOCK="cunumpy_ci_venv")]

EXAMPLES = os.path.join(REPOSITORY, "examples", "ci")

READ_SARIF = """
import json, sys
from sarif_pydantic import Sarif
with open(sys.argv[1], encoding="utf-8") as stream:
    log = Sarif.model_validate_json(stream.read())
run, = log.runs
rules = run.tool.driver.rules or []
results = []
for result in run.results or []:
    location, = result.locations
    physical = location.physical_location
    rule = rules[result.rule_index]
    assert rule.id == result.rule_id, (rule.id, result.rule_id)
    results.append({"rule": result.rule_id, "level": result.level.value,
                    "uri": physical.artifact_location.uri,
                    "base": physical.artifact_location.uri_base_id,
                    "line": physical.region.start_line,
                    "message": result.message.text,
                    "fingerprint": result.partial_fingerprints["cunumpy/v1"],
                    "rule_text": rule.full_description.text,
                    "properties": result.properties})
json.dump({"version": log.version, "category": run.automation_details.id,
           "base_ids": {key: value.uri for key, value in
                        (run.original_uri_base_ids or {}).items()},
           "properties": run.properties, "results": results}, sys.stdout)
"""

READ_JUNIT = """
import json, sys
from junitparser import Failure, JUnitXml, Skipped
suites = []
for suite in JUnitXml.fromfile(sys.argv[1]):
    cases = {}
    for case in suite:
        cases[case.name] = {
            "time": case.time,
            "failures": [{"type": result.type, "message": result.message,
                          "text": result.text} for result in case.result
                         if isinstance(result, Failure)],
            "skipped": [result.message for result in case.result
                        if isinstance(result, Skipped)]}
    suites.append({"name": suite.name, "tests": suite.tests,
                   "failures": suite.failures, "cases": cases})
json.dump(suites, sys.stdout)
"""


def ci_venv(case, request):
    return build_venv(case, request, "ci-venv",
                      ["sarif-pydantic", "sarif-tools", "junitparser"],
                      "sarif_pydantic, junitparser, sarif")


def read_with(python, script, path):
    run = subprocess.run([python, "-c", script, path], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, f"{path}:\n{run.stderr}"
    return json.loads(run.stdout)


def sarif_tool(python, *arguments, cwd=None):
    """sarif-tools' `sarif` command: (exit status, output)."""
    run = subprocess.run([os.path.join(os.path.dirname(python), "sarif"),
                          *arguments], capture_output=True, text=True,
                         timeout=300, cwd=cwd)
    return run.returncode, run.stdout + run.stderr


def errors(sarif):
    return [result for result in sarif["results"]
            if result["level"] == "error"]


def legacy_source(case):
    return os.path.relpath(case.source, REPOSITORY)


def edit_site(event, **fields):
    """`event` (a site of the JSON report) with `fields` changed, and its
    text ("file:line") as the report writes it."""
    event.update(fields)
    event["site"] = f"{event['file']}:{event['line']}"


def broken_report(case, budget, name="broken.json"):
    """The JSON report of the legacy example breaking its budget: 100
    copies of the state to the host in phase 'integrate'."""
    run = case.run(["--copy-in-step"], CUNUMPY_REPORT=name,
                   CUNUMPY_BUDGET=budget)
    assert run.status == 0, run
    return case.json(name, run)


def test_broken_run(case, budget, request):
    """A broken rule is an error on its line, in SARIF and JUnit alike, as
    the readers CI systems use see them."""
    python = ci_venv(case, request)
    run = case.run(["--copy-in-step"], CUNUMPY_REPORT="report.sarif",
                   CUNUMPY_BUDGET=budget, CUNUMPY_LABEL="cpu fake device",
                   CUNUMPY_SOURCE_ROOT=REPOSITORY)
    assert run.status == 0 and "BROKEN" in run.stderr, run
    sarif = read_with(python, READ_SARIF, case.path("report.sarif"))
    line = case.source_line(STEP_COPY)
    assert sarif["version"] == "2.1.0" and \
        sarif["category"] == "cunumpy/cpu fake device/", sarif
    assert sarif["base_ids"] == {
        "SRCROOT": "file://" + REPOSITORY.replace(" ", "%20") + "/"}, sarif
    found = errors(sarif)
    assert [(r["rule"], r["uri"], r["base"], r["line"]) for r in found] == \
        [("integrate/to_host", legacy_source(case), "SRCROOT", line)], found
    message = found[0]["message"]
    assert ("phase 'integrate': to_host is not allowed, got 100 event(s)"
            in message and 'deep_copy("state", nbytes=800000)' in message
            and f"(x{STEPS}, {STEPS * STATE_BYTES} bytes)" in message
            and "the rule allows: allow nothing" in message), message
    assert "allow nothing" in found[0]["rule_text"], found[0]
    assert sarif["properties"]["verdict"] == "broken" and \
        sarif["properties"]["omittedResults"] == 0, sarif["properties"]

    status, output = sarif_tool(python, "--check", "error", "summary",
                                case.path("report.sarif"))
    assert status != 0 and "error: 1" in output, output
    status, output = sarif_tool(python, "codeclimate", "-o",
                                case.path("quality.json"),
                                case.path("report.sarif"))
    assert status == 0, output
    with open(case.path("quality.json"), encoding="utf-8") as stream:
        quality = json.load(stream)
    assert [(issue["check_name"], issue["location"]["path"],
             issue["location"]["lines"]["begin"], issue["severity"])
            for issue in quality] == \
        [("integrate/to_host", legacy_source(case), line, "major")], quality

    run = case.run(["--copy-in-step"], CUNUMPY_REPORT="report.xml",
                   CUNUMPY_BUDGET=budget, CUNUMPY_SOURCE_ROOT=REPOSITORY)
    assert run.status == 0, run
    suite, = read_with(python, READ_JUNIT, case.path("report.xml"))
    assert suite["failures"] == 1 and \
        suite["name"] == "cunumpy: legacy_app (rank 0)", suite
    failed = {name: test["failures"] for name, test in suite["cases"].items()
              if test["failures"]}
    assert list(failed) == ["phase 'integrate': to_host"], suite
    failure, = failed["phase 'integrate': to_host"]
    assert failure["type"] == "forbidden" and \
        f"{legacy_source(case)}:{line}: deep_copy(\"state\", " \
        f"nbytes=800000) (x{STEPS}, {STEPS * STATE_BYTES} bytes)" in \
        failure["text"], failure
    for name in ("all events seen", "copies checked", "phase 'setup': calls",
                 "phase 'setup': to_device", "phase 'integrate': calls",
                 "phase 'output': to_host"):
        assert name in suite["cases"], (name, sorted(suite["cases"]))


def test_kept_budget_is_a_clean_run(case, budget, request):
    """The legacy example keeping its budget: no error in the SARIF (the
    check passes), no failure in the JUnit, whose cases are its rules."""
    python = ci_venv(case, request)
    for name in ("report.sarif", "report.xml"):
        run = case.run([], CUNUMPY_REPORT=name, CUNUMPY_BUDGET=budget)
        assert run.status == 0 and run.stderr == "", run
    sarif = read_with(python, READ_SARIF, case.path("report.sarif"))
    assert errors(sarif) == [] and \
        sarif["properties"]["verdict"] == "ok", sarif
    status, output = sarif_tool(python, "--check", "error", "summary",
                                case.path("report.sarif"))
    assert status == 0, output
    suite, = read_with(python, READ_JUNIT, case.path("report.xml"))
    assert suite["failures"] == 0 and suite["tests"] >= 6, suite
    assert suite["cases"]["phase 'integrate': calls"]["time"] > 0, suite


def test_checked_nothing_or_missed_events_is_not_clean(case, budget,
                                                      report_tool, request):
    """NOT CHECKED (no device memory space; a rule file that could not be
    used) and INCOMPLETE (events may be missing) are errors in the SARIF
    and failures in the JUnit, never a clean file."""
    python = ci_venv(case, request)
    runs = {"no_device": {"CUNUMPY_DEVICE_SPACES": None,
                          "CUNUMPY_BUDGET": budget},
            "bad_rule_file": {"CUNUMPY_BUDGET": case.path("missing.toml")}}
    for name, variables in runs.items():
        for suffix in ("sarif", "xml"):
            run = case.run([], CUNUMPY_REPORT=f"{name}.{suffix}", **variables)
            assert run.status == 0, run
        sarif = read_with(python, READ_SARIF, case.path(f"{name}.sarif"))
        assert [r["rule"] for r in errors(sarif)] == ["cunumpy/not-checked"], \
            (name, sarif)
        status, output = sarif_tool(python, "--check", "error", "summary",
                                    case.path(f"{name}.sarif"))
        assert status != 0, (name, output)
        suite, = read_with(python, READ_JUNIT, case.path(f"{name}.xml"))
        assert [n for n, test in suite["cases"].items()
                if test["failures"]] == ["copies checked"], (name, suite)
    # Without CUNUMPY_SOURCE_ROOT, paths are relative to the git top level
    # of the working directory (where the build is in the checkout); a
    # relative root is one from the working directory.
    rule_file = os.path.relpath(budget, REPOSITORY)
    sarif = read_with(python, READ_SARIF, case.path("no_device.sarif"))
    if not os.path.relpath(case.work, REPOSITORY).startswith("..") and \
            os.path.exists(os.path.join(REPOSITORY, ".git")):
        assert (errors(sarif)[0]["uri"], errors(sarif)[0]["base"]) == \
            (rule_file, "SRCROOT"), sarif
    run = case.run([], CUNUMPY_REPORT="relative_root.sarif",
                   CUNUMPY_DEVICE_SPACES=None, CUNUMPY_BUDGET=budget,
                   CUNUMPY_SOURCE_ROOT=os.path.relpath(REPOSITORY, case.work))
    sarif = read_with(python, READ_SARIF, case.path("relative_root.sarif"))
    assert errors(sarif)[0]["uri"] == rule_file, (run, sarif)
    # The rule file that could not be used is where the finding is.
    sarif = read_with(python, READ_SARIF, case.path("bad_rule_file.sarif"))
    assert errors(sarif)[0]["uri"].endswith("missing.toml"), sarif

    # Events lost on the way: the plugin's report, as a run whose queue
    # overflowed writes it, through cunumpy-report.
    report = passing(case.json("kept.json", case.run(
        [], CUNUMPY_REPORT="kept.json", CUNUMPY_BUDGET=budget)))
    report.update(complete=False, losses=["12 events lost: queue full"])
    write_json(case.path("lost.json"),
               version3(report, 0, 1, verdict="incomplete"))
    for fmt in ("sarif", "junit"):
        status, _, stderr = call_tool(report_tool, [
            "--format", fmt, "-o", case.path(f"lost.{fmt}"),
            case.path("lost.json")])
        assert status == 0, stderr
    sarif = read_with(python, READ_SARIF, case.path("lost.sarif"))
    found = errors(sarif)
    assert [r["rule"] for r in found] == ["cunumpy/incomplete"] and \
        "12 events lost: queue full" in found[0]["message"], sarif
    status, output = sarif_tool(python, "--check", "error", "summary",
                                case.path("lost.sarif"))
    assert status != 0, output
    suite, = read_with(python, READ_JUNIT, case.path("lost.junit"))
    assert [n for n, test in suite["cases"].items() if test["failures"]] == \
        ["all events seen"], suite


def test_merged_job(case, budget, report_tool, request):
    """cunumpy-report's SARIF and JUnit of a job: the ranks that broke a
    rule on its sites, the rank without a report an error of its own; one
    test suite for the job."""
    python = ci_venv(case, request)
    report = broken_report(case, budget)
    write_job(case.path("job"), report, [0, 1, 3], size=4)
    for fmt in ("sarif", "junit"):
        status, _, stderr = call_tool(report_tool, [
            "--format", fmt, "-o", case.path(f"job.{fmt}"),
            case.path("job")])
        assert status == 0, stderr
    sarif = read_with(python, READ_SARIF, case.path("job.sarif"))
    found = errors(sarif)
    assert [r["rule"] for r in found] == \
        ["cunumpy/incomplete", "integrate/to_host"], found
    assert "no report from rank(s) 2 of 4" in found[0]["message"], found
    assert found[1]["properties"]["ranks"] == "0, 1, 3" and \
        "on rank(s) 0, 1, 3" in found[1]["message"] and \
        found[1]["line"] == case.source_line(STEP_COPY), found
    assert sarif["properties"]["ranks"] == "0, 1, 3", sarif
    suites = read_with(python, READ_JUNIT, case.path("job.junit"))
    assert len(suites) == 1 and \
        suites[0]["name"] == "cunumpy: legacy_app (job of 3 rank(s): 0, 1, 3)"
    failed = [n for n, test in suites[0]["cases"].items() if test["failures"]]
    assert failed == ["all events seen", "phase 'integrate': to_host"], \
        suites
    assert "[rank(s) 0, 1, 3]" in \
        suites[0]["cases"]["phase 'integrate': to_host"]["failures"][0][
            "text"], suites


def test_github_annotations(case, budget):
    """Under GitHub Actions the errors are annotations, ten at most, the
    sites first, then one notice saying how many more and where the full
    report is; nothing of it elsewhere or when the budget is kept."""
    with open(budget, encoding="utf-8") as stream:
        rules = stream.read()
    # Twelve rules of phases that never run, one named with what a workflow
    # command must escape.
    for i in range(11):
        rules += f"\n[phases.never_{i}]\n"
    rules += '\n[phases."a:b,c%d"]\n'
    many = case.write("many.toml", rules)
    run = case.run(["--copy-in-step"], CUNUMPY_BUDGET=many,
                   CUNUMPY_REPORT="report.json", GITHUB_ACTIONS="true",
                   CUNUMPY_SOURCE_ROOT=REPOSITORY)
    lines = [line for line in run.stderr.splitlines()
             if line.startswith("::")]
    assert len(lines) == 11 and \
        all(line.startswith("::error ") for line in lines[:10]), run
    line = case.source_line(STEP_COPY)
    assert lines[0].startswith(
        f"::error file={legacy_source(case)},line={line},title=cunumpy%3A "
        "phase 'integrate'%3A to_host::phase 'integrate': to_host is not "
        "allowed"), lines[0]
    rule_file = os.path.relpath(case.path("many.toml"), REPOSITORY)
    if rule_file.startswith(".."):  # a build outside the checkout
        rule_file = case.path("many.toml")
    assert all(f"file={rule_file},title=" in line
               for line in lines[1:10]), lines
    assert lines[10] == (
        "::notice title=cunumpy::3 more error(s) of cunumpy not annotated "
        "(GitHub shows 10 a step): the full report is "
        f"{case.path('report.json')}"), lines[10]
    run = case.run([], CUNUMPY_BUDGET=many, CUNUMPY_REPORT="report.json",
                   GITHUB_ACTIONS="true")
    escaped = [line for line in run.stderr.splitlines()
               if "a%3Ab%2Cc%25d" in line]
    assert len(escaped) == 1 and \
        "::phase 'a:b,c%25d': never entered while counting" in escaped[0], \
        run
    for variables in ({"GITHUB_ACTIONS": None, "CUNUMPY_BUDGET": many},
                      {"GITHUB_ACTIONS": "true", "CUNUMPY_BUDGET": budget}):
        run = case.run([], **variables)
        assert not any(line.startswith("::")
                       for line in run.stderr.splitlines()), run


def test_fingerprints_survive_edits_above_the_line(case, budget,
                                                   report_tool, request):
    """A site's fingerprint stays when lines are added above it or the
    copy's size changes, and changes with its file or function."""
    python = ci_venv(case, request)
    report = version3(broken_report(case, budget), 0, 1)

    def fingerprint(name, change):
        edited = json.loads(json.dumps(report))
        for event in edited["budget"]["violations"][0]["events"]:
            change(event)
        write_json(case.path(f"{name}.json"), edited)
        status, _, stderr = call_tool(report_tool, [
            "--format", "sarif", "-o", case.path(f"{name}.sarif"),
            case.path(f"{name}.json")])
        assert status == 0, stderr
        result, = errors(read_with(python, READ_SARIF,
                                   case.path(f"{name}.sarif")))
        return result["fingerprint"], result["line"]

    first, line = fingerprint("first", lambda event: None)
    moved = fingerprint("moved", lambda event: edit_site(
        event, line=event["line"] + 7))
    resized = fingerprint("resized", lambda event: edit_site(
        event, what=event["what"].replace("800000", "1600000")))
    assert moved == (first, line + 7) and resized == (first, line), \
        (first, moved, resized)
    for name, change in {
            "file": lambda event: edit_site(event, file=event["file"] + "x"),
            "function": lambda event: edit_site(event, function="other()"),
            "what": lambda event: edit_site(event, what="deep_copy(\"o\")")
    }.items():
        assert fingerprint(name, change)[0] != first, name


def test_hostile_names_and_many_sites(case, budget, report_tool, request):
    """Names and paths with markup, quotes, control characters and bytes
    that are not characters stay data in SARIF and XML; 30000 sites keep
    GitHub's 25000 results, the most serious first, the rest counted."""
    python = ci_venv(case, request)
    report = version3(broken_report(case, budget), 0, 2)
    hostile = "a<b>&\"c'\x01\nd\ufffe]]>%s"
    violation = report["budget"]["violations"][0]
    violation["phase"] = hostile
    event = violation["events"][0]
    events = []
    for i in range(30000):
        copy = dict(event)
        edit_site(copy, line=i + 1, count=30000 - i,
                  file=f"/src/dir with space/{hostile}{i}.cpp",
                  function=hostile, what=hostile)
        events.append(copy)
    violation["events"] = events
    write_json(case.path("hostile.json"), report)
    for fmt in ("sarif", "junit"):
        status, _, stderr = call_tool(report_tool, [
            "--format", fmt, "-o", case.path(f"hostile.{fmt}"),
            case.path("hostile.json")])
        assert status == 0, stderr
    sarif = read_with(python, READ_SARIF, case.path("hostile.sarif"))
    results = sarif["results"]
    assert len(results) == 25000 and \
        sarif["properties"]["results"] == 30001 and \
        sarif["properties"]["omittedResults"] == 5001, sarif["properties"]
    # The job of 2 ranks without rank 1's report first, then the largest.
    assert results[0]["rule"] == "cunumpy/incomplete" and \
        results[1]["line"] == 1 and results[2]["line"] == 2, results[:3]
    uri = results[1]["uri"]
    assert uri.startswith("file:///src/dir%20with%20space/a%3Cb%3E%26") and \
        re.fullmatch(r"[A-Za-z0-9/%._~:-]+", uri), uri
    assert results[1]["properties"]["phase"] == \
        "a<b>&\"c'\\x01\\x0ad\ufffe]]>%s", results[1]
    assert len({r["fingerprint"] for r in results[1:]}) == 24999, \
        "each file its own fingerprint"
    xml.etree.ElementTree.parse(case.path("hostile.junit"))  # well-formed
    suite, = read_with(python, READ_JUNIT, case.path("hostile.junit"))
    failed = {name: test["failures"] for name, test in suite["cases"].items()
              if test["failures"]}
    name = "phase 'a<b>&\"c'\\x01\\x0ad\\uFFFE]]>%s': to_host"
    assert name in failed, sorted(failed)
    text = failed[name][0]["text"]
    assert text.count("dir with space") == 1000 and \
        "… and 29000 more site(s)" in text, text[-300:]


def test_ci_examples_build_what_they_upload(case, legacy_budget, report_tool,
                                            request):
    """The commands of examples/ci's GitHub and GitLab jobs, run here on
    the legacy example: the files they upload are made, and read by the
    programs that read them there."""
    python = ci_venv(case, request)
    commands = []
    for name in ("github-actions.yml", "gitlab-ci.yml"):
        with open(os.path.join(EXAMPLES, name), encoding="utf-8") as stream:
            text = stream.read()
        assert "cunumpy.sarif" in text and "CUNUMPY_LABEL: cpu-fake-device" \
            in text, name
        for line in text.splitlines():
            line = line.strip().removeprefix("- ").removeprefix("run: ")
            if "check-transfers.sh" in line or "sarif codeclimate" in line:
                commands.append(line)
    assert "junit: cunumpy.xml" in text and \
        "codequality: gl-code-quality-report.json" in text, text
    assert len(commands) == 3 and commands[0] == commands[1].split(" ||")[0], \
        commands
    # The build's paths for those of the examples.
    paths = {"examples/": REPOSITORY + "/examples/",
             "build/src/plugin/cunumpy-report": report_tool,
             "build/examples/legacy_app/legacy_app": case.program,
             "/opt/sarif-tools/bin/": os.path.dirname(python) + "/"}
    for original, here in paths.items():
        commands = [re.sub(r"(?<![\w/.-])" + re.escape(original),
                           lambda _: here, command) for command in commands]
    script = "\n".join(commands[1:]) + "\nexit ${status:-0}\n"
    for arguments, status in (("", 0), (" --copy-in-step", 1)):
        run = case.run(command=["bash", "-c", script.replace(
            case.program, case.program + arguments)],
            CUNUMPY_LABEL="cpu-fake-device", CUNUMPY_SOURCE_ROOT=REPOSITORY,
            GITHUB_ACTIONS="true" if status else None)
        assert run.status == status, run
        sarif = read_with(python, READ_SARIF, case.path("cunumpy.sarif"))
        assert sarif["category"] == "cunumpy/cpu-fake-device/" and \
            len(errors(sarif)) == status, sarif
        suite, = read_with(python, READ_JUNIT, case.path("cunumpy.xml"))
        assert suite["failures"] == status, suite
        with open(case.path("gl-code-quality-report.json"),
                  encoding="utf-8") as stream:
            quality = json.load(stream)
        assert [issue["location"]["path"] for issue in quality] == \
            [os.path.relpath(case.source, REPOSITORY)] * status, quality
        assert (f"::error file={legacy_source(case)}," in run.stderr) == \
            bool(status), run
