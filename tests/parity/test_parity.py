"""One table of budget cases (cases.json), three front ends: the C++
library (Rule, Limits, TransferBudget::require), the Python module
(TransferBudget.require(name, allow=..., ...)) and the plugin (a TOML rule
file in CUNUMPY_BUDGET, violations from its JSON report). Each case's
events are made through Kokkos' own tools entry points in all three, so
each front end must give the violations the case expects, and all three
the same violations: phase, kind, limit, allowed, actual, details, the
message (less the lines naming call sites, which differ by front end) and
the offending events' counts and bytes."""

import json
import os
import re
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
CASES_PATH = os.path.join(HERE, "cases.json")
with open(CASES_PATH, encoding="utf-8") as _file:
    CASES = json.load(_file)["cases"]
IDS = [case["name"].replace(" ", "_") for case in CASES]


def run(command, cwd, env=None, timeout=120):
    completed = subprocess.run(command, cwd=cwd, env=env, timeout=timeout,
                               capture_output=True, text=True, check=False)
    shown = (f"\n$ {' '.join(command)}\nexit status {completed.returncode}\n"
             f"stdout:\n{completed.stdout}\nstderr:\n{completed.stderr}")
    return completed, shown


def normalized(violations):
    """What must agree between front ends: everything but the call sites
    (the C++ line of an event in C++ and in the plugin, the Python line in
    Python) and the time spent."""
    result = []
    for violation in violations:
        # The module of a tool that replaced a callback is the program
        # (C++, the plugin) or the test extension (Python).
        details = [re.sub(r"with a function in [^)]*\)",
                          "with a function in <module>)", detail)
                   for detail in violation["details"]]
        lines = violation["message"].splitlines()
        lines[1:1 + len(details)] = ["  " + detail for detail in details]
        result.append({
            "phase": violation["phase"],
            "kind": violation["kind"],
            "limit": violation["limit"],
            "allowed": violation["allowed"],
            "actual": violation["actual"],
            "details": details,
            # The rule's line, then its details; one line per site follows.
            "message": lines[:1 + len(details)],
            "sites": len(lines) - 1 - len(details),
            "events": sorted(
                (e["kind"], e["what"], e["blocking"], e["implicit"],
                 e["count"], e["bytes"], e["max_bytes"])
                for e in violation["events"]),
        })
    return result


def toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{key} = {toml_value(v)}"
                                for key, v in value.items()) + " }"
    raise TypeError(f"no TOML for {value!r}")


def rule_file(rules):
    """The rules of a case as the plugin's TOML rule file."""
    text = ""
    for phase, fields in rules.items():
        text += f"[phases.{json.dumps(phase)}]\n"
        for key, value in fields.items():
            if key == "allow":
                for kind, limits in value.items():
                    text += f"allow.{kind} = {toml_value(limits)}\n"
            else:
                text += f"{key} = {toml_value(value)}\n"
        text += "\n"
    return text


def cpp_violations(options, index, tmp_path, *extra):
    if not options.parity_cpp:
        pytest.fail("needs --parity-cpp (see tests/parity/CMakeLists.txt)")
    completed, shown = run([options.parity_cpp, options.cases or CASES_PATH,
                            str(index), *extra], tmp_path)
    assert completed.returncode == 0, shown
    return json.loads(completed.stdout), shown


def expected(case):
    return sorted((phase, limit, kind) for phase, limit, kind
                  in case["expect"])


def found(violations):
    return sorted((v["phase"], v["limit"], v["kind"]) for v in violations)


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_cpp(options, index, tmp_path):
    """The C++ library gives the violations the case expects, whether the
    rules are set before the run or after it."""
    case = CASES[index]
    before, shown = cpp_violations(options, index, tmp_path)
    assert found(before) == expected(case), shown
    after, shown_after = cpp_violations(options, index, tmp_path, "after")
    assert normalized(after) == normalized(before), shown + shown_after


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_python(options, index, tmp_path):
    """The Python module gives the C++ library's violations."""
    if not options.python_path:
        pytest.skip("the Python module is not built (CUNUMPY_BUILD_PYTHON)")
    cpp, shown_cpp = cpp_violations(options, index, tmp_path)
    env = dict(os.environ, PYTHONPATH=options.python_path)
    completed, shown = run([options.python,
                            os.path.join(HERE, "parity_python.py"),
                            options.cases or CASES_PATH, str(index)],
                           tmp_path, env)
    assert completed.returncode == 0, shown
    python = json.loads(completed.stdout)
    assert normalized(python) == normalized(cpp), shown + shown_cpp


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_plugin(options, index, tmp_path):
    """The plugin, with the case's rules as a TOML rule file, reports the
    C++ library's violations."""
    if not (options.plugin and options.parity_events
            and options.tools_variable):
        pytest.fail("needs --plugin, --parity-events and --tools-variable")
    cpp, shown_cpp = cpp_violations(options, index, tmp_path)
    case = CASES[index]
    (tmp_path / "budget.toml").write_text(rule_file(case["rules"]))
    env = dict(os.environ)
    env.pop("KOKKOS_TOOLS_LIBS", None)
    env.pop("KOKKOS_PROFILE_LIBRARY", None)
    env.update({options.tools_variable: options.plugin,
                "CUNUMPY_BUDGET": "budget.toml",
                "CUNUMPY_REPORT": "report.json"})
    completed, shown = run([options.parity_events,
                            options.cases or CASES_PATH, str(index)],
                           tmp_path, env)
    shown += "budget.toml:\n" + rule_file(case["rules"])
    assert completed.returncode == 0, shown
    report = json.loads((tmp_path / "report.json").read_text())
    plugin = report["budget"]["violations"]
    assert report["budget"]["checked"], shown
    assert report["budget"]["ok"] == (not case["expect"]), shown
    assert normalized(plugin) == normalized(cpp), (
        shown + shown_cpp + "\nplugin violations:\n" +
        json.dumps(plugin, indent=1))
