"""One recorder serves both languages: copies made by C++ code called from
Python (raw Kokkos::deep_copy, no cunumpy call) are counted in Python's
counters and budgets, attributed to the Python line that called into C++
when the C++ stack has no better site, with the native frame beside it
(module+offset), or beside the C++ line that has one."""

import re

import numpy as np

import cunumpy as xp
from helpers import next_site

count_transfers = xp.profiling.count_transfers
NATIVE = r"cunumpy_test_copies\..*so\+0x[0-9a-f]+"


def test_raw_cpp_copies_are_counted_at_the_python_line(device_space, ext):
    with count_transfers() as counter:
        site = next_site()
        ext.round_trip(100)
    assert (counter.to_device, counter.to_host, counter.total) == (1, 1, 2)
    assert counter.bytes_to_device == counter.bytes_to_host == 800
    assert [(e.kind, f"{e.file}:{e.line}", e.what) for e in counter.events] == [
        ("to_device", site, 'deep_copy("raw_host", nbytes=800)'),
        ("to_host", site, 'deep_copy("raw_device", nbytes=800)'),
    ]
    assert counter.events[0].dst_space == device_space
    # Beside the Python line: the extension's frame without a line.
    event = counter.events[0]
    assert re.fullmatch(NATIVE, event.native), event.native
    assert event.site == f"{site} (in {event.native})" and event.python == ""


def test_a_cpp_line_with_debug_information_is_a_better_site(device_space, ext):
    with count_transfers() as counter:
        line = ext.copy_with_lines(10)
    (event,) = counter.events
    assert f"{event.file}:{event.line}" == f"{ext.source_with_lines}:{line}"
    # Beside the C++ line: the Python line that called it.
    assert re.fullmatch(
        r".*test_cpp_copies\.py:\d+ in "
        r"test_a_cpp_line_with_debug_information_is_a_better_site",
        event.python), event.python
    assert event.site == f"{ext.source_with_lines}:{line} (from {event.python})"


def test_without_the_gil_the_python_line_is_not_read(device_space, ext):
    with count_transfers() as counter:
        python_site = next_site()
        ext.round_trip_without_gil(10)
    assert counter.total == 2
    assert all(event.site != python_site for event in counter.events)
    assert all(event.line == 0 for event in counter.events)  # no line known


def test_cpp_copies_count_in_budgets_and_assertions(device_space, ext):
    budget = xp.profiling.TransferBudget()
    with budget.phase("legacy"):
        site = next_site()
        ext.round_trip(4)
    budget.require("legacy")
    assert {v.kind for v in budget.violations()} == {"to_host", "to_device"}
    assert budget.violations()[0].events[0].site.startswith(f"{site} (in ")
    import pytest

    with pytest.raises(AssertionError, match="deep_copy"):
        with xp.profiling.assert_no_transfers():
            ext.round_trip(4)


def test_scalar_reads_in_cpp_are_implicit_syncs(device_space, ext):
    with count_transfers() as counter:
        site = next_site()
        ext.read_scalar(1.0)
    assert (counter.to_host, counter.syncs) == (1, 1)
    assert re.fullmatch(
        re.escape(f"    {site} (in ") + NATIVE +
        re.escape('): deep_copy(scalar <- "norm", nbytes=8) (x1) [implicit]'),
        counter.report().rstrip().split("\n")[-1])


def test_python_and_cpp_copies_share_one_counter(device_space, ext):
    with count_transfers() as counter:
        xp.to_numpy(xp.to_device(np.ones(3)))
        ext.round_trip(3)
    assert (counter.to_device, counter.to_host) == (2, 2)
