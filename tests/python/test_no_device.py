"""A program without a device memory space: a budget checks nothing, and
check() says so and fails, unless CUNUMPY_ALLOW_NO_DEVICE=1 lets a CPU-only
run pass. Each case runs in its own interpreter (what the process has of
devices is the whole process')."""

import os
import subprocess
import sys
import textwrap

CODE = """
import numpy as np
import cunumpy as xp
if xp._core.has_device_backend:
    print("skip: this build has a device")
    raise SystemExit(0)
budget = xp.profiling.TransferBudget()
budget.require("step")
with budget.phase("step"):
    xp.to_numpy(np.zeros(4))
try:
    budget.check()
except AssertionError as error:
    print("failed:", str(error))
else:
    print("passed:", budget.report())
"""


def run(**variables):
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith("CUNUMPY_")}
    environment["PYTHONPATH"] = os.pathsep.join(sys.path)
    environment.update(variables)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(CODE)],
                          capture_output=True, text=True, env=environment,
                          timeout=120)


def test_a_budget_without_a_device_fails_and_says_why():
    done = run()
    assert done.returncode == 0, done.stderr
    if done.stdout.startswith("skip"):
        return
    assert done.stdout.startswith("failed:"), done.stdout
    assert "no device memory space in this program" in done.stdout
    assert "CUNUMPY_ALLOW_NO_DEVICE=1" in done.stdout


def test_a_cpu_only_run_may_pass_and_says_it_checked_nothing():
    done = run(CUNUMPY_ALLOW_NO_DEVICE="1")
    assert done.returncode == 0, done.stderr
    if done.stdout.startswith("skip"):
        return
    assert done.stdout.startswith("passed:"), done.stdout
    assert "no copy was checked: no device memory space" in done.stdout
