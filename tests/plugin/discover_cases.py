"""The plugin cases as ctest tests, from pytest's own collection.

    discover_cases.py list --facts <facts.json> --output <file.cmake>
        writes one ctest test plugin.<case> per test function of
        tests/plugin/test_*.py (ctest includes the file when it starts:
        CMakeLists.txt), with its pytest.mark.ctest properties.
    discover_cases.py check --facts <facts.json> --ctest <ctest> --build <dir>
        the test plugin.discovery: fails when pytest cannot collect a file,
        when two files hold a case of the same name, or when a test
        function is not run by exactly the ctest test named after it.
"""

import argparse
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
# What every case is given when no pytest.mark.ctest says otherwise.
DEFAULT_PROPERTIES = {"TIMEOUT": 300, "SKIP_RETURN_CODE": 77}


class Collector:
    """pytest plugin keeping what the collection found and what failed."""

    def __init__(self):
        self.items = []
        self.errors = []

    def pytest_collectreport(self, report):
        if report.failed:
            self.errors.append(f"{report.nodeid}: {report.longreprtext}")

    def pytest_collection_finish(self, session):
        self.items = list(session.items)


def collect():
    collector = Collector()
    status = pytest.main(["--collect-only", "-p", "no:terminal", "-p",
                          "no:cacheprovider", HERE], plugins=[collector])
    if status not in (0, 5) and not collector.errors:
        collector.errors.append(f"pytest --collect-only ended with {status}")
    return collector


def node(item):
    """What the ctest test passes pytest: <file>::<function>."""
    return "::".join([str(item.path), *item.nodeid.split("::")[1:]])


def ctest_name(item):
    return "plugin." + item.name.removeprefix("test_")


def command(item, facts):
    return [sys.executable, "-m", "pytest", "-q", "-p",
            "no:cacheprovider", node(item), "--facts", facts]


def properties(item, facts_values):
    values = dict(DEFAULT_PROPERTIES)
    for marker in reversed(list(item.iter_markers("ctest"))):
        values.update(marker.kwargs)
    runtime = facts_values.get("sanitizer_runtime")
    if item.get_closest_marker("python_interpreter") and runtime:
        # As cunumpy_python_tests (CMakeLists.txt): the interpreter loads
        # the sanitizer's runtime first, without LeakSanitizer.
        values["ENVIRONMENT_MODIFICATION"] = (
            f"LD_PRELOAD=set:{runtime};"
            "ASAN_OPTIONS=string_append::detect_leaks=0")
    return values


def bracket(text):
    return f"[==[{text}]==]"


def write_list(arguments):
    collector = collect()
    with open(arguments.facts, encoding="utf-8") as stream:
        facts_values = json.load(stream)
    lines = []
    for item in collector.items:
        name = bracket(ctest_name(item))
        lines.append(f"add_test({name} " + " ".join(
            bracket(part) for part in command(item, arguments.facts)) + ")")
        lines.append(f"set_tests_properties({name} PROPERTIES " + " ".join(
            f"{key} {bracket(value)}"
            for key, value in properties(item, facts_values).items()) + ")")
    # Whole or not at all: another ctest may be reading it.
    partial = f"{arguments.output}.{os.getpid()}"
    with open(partial, "w", encoding="utf-8") as stream:
        stream.write("# Written by tests/plugin/discover_cases.py.\n")
        stream.write("\n".join(lines) + "\n")
    os.replace(partial, arguments.output)
    for error in collector.errors:
        print(error, file=sys.stderr)


def check(arguments):
    collector = collect()
    problems = list(collector.errors)
    expected = {}
    for item in collector.items:
        name = ctest_name(item)
        if name in expected:
            problems.append(f"{name}: two test functions of this name, "
                            f"{expected[name]} and {node(item)}: rename one")
        expected[name] = node(item)
    listed = subprocess.run(
        [arguments.ctest, "--test-dir", arguments.build,
         "--show-only=json-v1"], capture_output=True, text=True, check=True)
    run = {}
    for test in json.loads(listed.stdout)["tests"]:
        nodes = [part for part in test.get("command", [])
                 if part.startswith(HERE + os.sep) and "::" in part]
        if nodes:
            run[test["name"]] = nodes
    for name, wanted in sorted(expected.items()):
        if run.get(name) != [wanted]:
            problems.append(f"{wanted} is not run by ctest as {name} "
                            f"(ctest runs: {run.get(name)})")
    for name, nodes in sorted(run.items()):
        if name not in expected:
            problems.append(f"ctest's {name} runs {nodes}, which pytest "
                            "does not collect")
    if not expected and not collector.errors:
        problems.append(f"pytest found no test function in {HERE}")
    for problem in problems:
        print(f"plugin.discovery: {problem}")
    if problems:
        return 1
    print(f"plugin.discovery: each of the {len(expected)} test functions of "
          f"{HERE}/test_*.py is the ctest test named after it")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["list", "check"])
    parser.add_argument("--facts", required=True)
    parser.add_argument("--output")
    parser.add_argument("--ctest")
    parser.add_argument("--build")
    arguments = parser.parse_args()
    if arguments.mode == "list":
        write_list(arguments)
        return 0
    return check(arguments)


if __name__ == "__main__":
    sys.exit(main())
