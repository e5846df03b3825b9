"""The cases are ctest tests: plugin.discovery (discover_cases.py check)
fails when a test function of tests/plugin is not run by the ctest test
named after it, and passes when each one is."""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DISCOVER = os.path.join(HERE, "discover_cases.py")

def collected():
    """pytest's node ids of the test functions here, as ctest passes them."""
    listing = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p",
         "no:cacheprovider", HERE], capture_output=True, text=True,
        cwd=HERE, check=True).stdout
    return [os.path.join(HERE, os.path.basename(line))
            for line in listing.splitlines() if "::" in line]


def check_against(tmp_path, nodes, facts_path):
    """discover_cases.py check with a ctest that lists `nodes`."""
    tests = [{"name": "plugin." + node.split("::")[-1].removeprefix("test_"),
              "command": [sys.executable, "-m", "pytest", node]}
             for node in nodes]
    listing = tmp_path / "listing.json"
    listing.write_text(json.dumps({"tests": tests}))
    ctest = tmp_path / "ctest"
    ctest.write_text(f"#!/bin/sh\ncat '{listing}'\n")
    ctest.chmod(0o755)
    return subprocess.run(
        [sys.executable, DISCOVER, "check", "--facts", facts_path, "--ctest",
         str(ctest), "--build", str(tmp_path)], capture_output=True,
        text=True)


def test_a_case_ctest_does_not_run_fails_the_guard(tmp_path, request):
    facts_path = request.config.getoption("facts")
    nodes = collected()
    assert len(nodes) > 100, nodes
    every = check_against(tmp_path, nodes, facts_path)
    assert every.returncode == 0 and "each of the" in every.stdout, \
        f"every case run: the guard passes\n{every.stdout}{every.stderr}"
    missing = nodes[len(nodes) // 2]
    short = check_against(tmp_path, nodes[:len(nodes) // 2] +
                          nodes[len(nodes) // 2 + 1:], facts_path)
    assert short.returncode == 1 and f"{missing} is not run by ctest" in \
        short.stdout, f"one case left out: the guard fails, naming it\n" \
        f"{short.stdout}{short.stderr}"
    renamed = check_against(tmp_path, nodes + [missing + "_renamed"],
                            facts_path)
    assert renamed.returncode == 1 and "which pytest does not collect" in \
        renamed.stdout, f"a case ctest runs that pytest does not have " \
        f"fails it too\n{renamed.stdout}{renamed.stderr}"
