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
    # The report's verdict line tells it, not "0 broken rule(s)".
    assert done.stdout.splitlines()[1].startswith(
        "budget: NOT CHECKED: no device"), done.stdout


def test_a_cpu_only_run_may_pass_and_says_it_checked_nothing():
    done = run(CUNUMPY_ALLOW_NO_DEVICE="1")
    assert done.returncode == 0, done.stderr
    if done.stdout.startswith("skip"):
        return
    assert done.stdout.startswith("passed:"), done.stdout
    assert "no copy was checked: no device memory space" in done.stdout
    assert done.stdout.splitlines()[1].startswith(
        "budget: ok, but no copy was checked: no device memory space"), done.stdout


COUNTING = """
import numpy as np
import cunumpy as xp
if xp._core.has_device_backend:
    print("skip: this build has a device")
    raise SystemExit(0)
xp.set_backend("kokkos")
with xp.profiling.count_transfers() as counter:
    xp.to_numpy(xp.asarray(np.zeros(4)))
print("complete:", counter.complete, counter.losses)
try:
    with xp.profiling.assert_no_transfers():
        xp.to_numpy(np.zeros(4))
except AssertionError as error:
    print("failed:", str(error))
else:
    print("passed")
"""


def run_counting(**variables):
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith("CUNUMPY_")}
    environment["PYTHONPATH"] = os.pathsep.join(sys.path)
    environment.update(variables)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(COUNTING)],
                          capture_output=True, text=True, env=environment,
                          timeout=120)


def test_counters_and_assert_no_transfers_follow_the_budgets_rule():
    """The same rule as a budget's: without a device, a counter is not
    complete and assert_no_transfers fails, saying nothing was checked;
    CUNUMPY_ALLOW_NO_DEVICE=1 lets both pass."""
    done = run_counting()
    assert done.returncode == 0, done.stderr
    if done.stdout.startswith("skip"):
        return
    lines = done.stdout.splitlines()
    assert lines[0].startswith("complete: False"), done.stdout
    assert "no device memory space in this program" in lines[0], done.stdout
    assert lines[1].startswith("failed:"), done.stdout
    assert "nothing was checked" in done.stdout, done.stdout
    allowed = run_counting(CUNUMPY_ALLOW_NO_DEVICE="1")
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout.splitlines() == ["complete: True []", "passed"], \
        allowed.stdout
