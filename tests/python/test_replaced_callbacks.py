"""Another in-process tool replaces cunumpy's Kokkos Tools callbacks, as
Tpetra's DeepCopyCounter does: Python's counters, assertions and budgets
then say that events may have been lost, and fail; the other tool keeps
working. Each case runs in its own interpreter, as the replacement is for
the whole process."""

import os
import subprocess
import sys
import textwrap

import pytest


def run_python(code):
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(sys.path)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, env=environment, timeout=120)


@pytest.fixture
def ext_available(ext):
    return ext


def test_a_counter_is_incomplete_and_the_other_tool_still_counts(
        ext_available):
    run = run_python("""
        import cunumpy as xp
        import cunumpy_test_copies as ext
        with xp.profiling.count_transfers() as counter:
            ext.tool_copies(1)
            ext.start_copy_counter()
            ext.tool_copies(3)
        assert not counter.complete, counter.losses
        assert any("begin_deep_copy" in loss for loss in counter.losses)
        assert counter.to_device + counter.events_lost == 4
        assert "INCOMPLETE" in counter.report()
        assert ext.counted_copies() == 3, ext.counted_copies()
        print("ok")
    """)
    assert run.returncode == 0 and "ok" in run.stdout, run.stderr
    assert "cunumpy: another tool replaced cunumpy's Kokkos Tools " \
        "callback(s) begin_deep_copy" in run.stderr, run.stderr


def test_assert_no_transfers_and_budgets_fail(ext_available):
    run = run_python("""
        import cunumpy as xp
        import cunumpy_test_copies as ext
        budget = xp.profiling.TransferBudget()
        budget.require("step", allow=["to_device"], optional=True)
        try:
            with xp.profiling.assert_no_transfers():
                ext.start_copy_counter()
                ext.tool_copies(1)
        except AssertionError as error:
            assert "events may have been lost" in str(error), str(error)
        else:
            raise SystemExit("assert_no_transfers passed")
        # The copy whose begin the other tool took is all this process
        # did: cunumpy saw no device either (no_device).
        limits = sorted(v.limit for v in budget.violations())
        assert limits == ["events_lost", "no_device"], limits
        try:
            budget.check()
        except AssertionError as error:
            assert "so no rule can be trusted" in str(error), str(error)
        else:
            raise SystemExit("the budget passed")
        print("ok")
    """)
    assert run.returncode == 0 and "ok" in run.stdout, run.stdout + run.stderr


def test_a_tool_that_swallows_the_ends_of_copies_keeps_it_incomplete(
        ext_available):
    # It forwards the begins (cunumpy learns that much), never the ends:
    # the three copies made before cunumpy noticed it lost their ends.
    run = run_python("""
        import cunumpy as xp
        import cunumpy_test_copies as ext
        with xp.profiling.count_transfers() as counter:
            ext.start_half_forwarder()
            ext.tool_copies(3)
            assert not counter.complete  # the read finds the tool
            ext.tool_copies(3)
        assert not counter.complete, counter.report()
        print("ok")
    """)
    assert run.returncode == 0 and "ok" in run.stdout, run.stdout + run.stderr
