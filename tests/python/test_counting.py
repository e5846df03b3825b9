"""count_transfers and assert_no_transfers: the report format with the
Python caller's file and line, nesting and accumulation, bytes, markers and
syncs."""

import importlib
import pathlib
import sys

import numpy as np
import pytest

import cunumpy as xp
from helpers import next_site, report_lines

count_transfers = xp.profiling.count_transfers
assert_no_transfers = xp.profiling.assert_no_transfers


def write_module(path, lines):
    """A module with the given {line number: code}, blank elsewhere."""
    text = [""] * max(lines)
    for number, code in lines.items():
        text[number - 1] = code
    path.write_text("\n".join(text) + "\n")


@pytest.fixture
def simulation(tmp_path, monkeypatch):
    """The documented program: /home/me/sim/step.py:17 copies the state to the
    device, /home/me/sim/diagnostics.py:42 copies it back."""
    sim = tmp_path / "sim"
    sim.mkdir()
    write_module(
        sim / "diagnostics.py",
        {
            1: "import cunumpy as xp",
            41: "def write_output(state):",
            42: "    return xp.to_numpy(state)",
        },
    )
    write_module(
        sim / "step.py",
        {
            1: "import cunumpy as xp",
            2: "from diagnostics import write_output",
            16: "def step(state, dt):",
            17: "    state = xp.to_cunumpy(state)",
            18: "    return write_output(state)",
        },
    )
    monkeypatch.syspath_prepend(str(sim))
    monkeypatch.delitem(sys.modules, "step", raising=False)
    monkeypatch.delitem(sys.modules, "diagnostics", raising=False)
    step = importlib.import_module("step").step
    yield sim, step
    sys.modules.pop("step", None)
    sys.modules.pop("diagnostics", None)


def test_the_documented_report_names_the_python_files_and_lines(device_space, simulation):
    sim, step = simulation
    state = np.zeros(100000)
    dt = 0.1
    with xp.profiling.count_transfers() as counter:
        for _ in range(10):
            step(state, dt)

    print(counter.total)
    print(counter.report())
    assert counter.total == 20
    assert counter.report() == (
        "20 transfer(s) through cunumpy (10 to_host, 10 to_device, "
        "0 kernel_conversion, 0 fallback, 0 device_copy)\n"
        "  to_host (10):\n"
        f"    {sim}/diagnostics.py:42: to_numpy(shape=(100000,), dtype=float64) (x10)\n"
        "  to_device (10):\n"
        f"    {sim}/step.py:17: to_cunumpy(shape=(100000,), dtype=float64) (x10)\n"
    )


def test_report_of_an_empty_counter():
    with count_transfers() as counter:
        pass
    assert counter.report() == (
        "0 transfer(s) through cunumpy (0 to_host, 0 to_device, "
        "0 kernel_conversion, 0 fallback, 0 device_copy)\n"
    )
    assert counter.total == counter.syncs == 0


def test_each_line_is_its_own_report_entry(device_space):
    a = np.ones(10)
    with count_transfers() as counter:
        first = next_site()
        xp.to_device(a)
        second = next_site()
        xp.to_device(a), xp.to_device(a)
    assert report_lines(counter)[1:] == [
        "  to_device (3):",
        f"    {first}: to_device(shape=(10,), dtype=float64) (x1)",
        f"    {second}: to_device(shape=(10,), dtype=float64) (x2)",
    ]


def test_copies_inside_library_helpers_name_the_callers_line(device_space):
    # The frames of the cunumpy package are skipped: the site is this file.
    device = xp.to_device(np.ones(3))
    with count_transfers() as counter:
        site = next_site()
        xp.host_call(np.sum, device)
    assert {event.site for event in counter.events} == {site}


def test_blocks_nest_and_each_counts_its_own_events(device_space):
    a = np.ones(4)
    with count_transfers() as outer:
        xp.to_device(a)
        with count_transfers() as inner:
            xp.to_numpy(xp.to_device(a))
        xp.to_device(a)
    assert (inner.to_device, inner.to_host, inner.total) == (1, 1, 2)
    assert (outer.to_device, outer.to_host, outer.total) == (3, 1, 4)


def test_count_transfers_of_a_counter_accumulates_over_blocks(device_space):
    counter = xp.profiling.TransferCounter()
    a = np.ones(3)
    for _ in range(3):
        with count_transfers(counter) as yielded:
            assert yielded is counter
            xp.to_device(a)
        xp.to_device(a)  # outside the blocks: not counted
    assert counter.to_device == 3
    assert counter.bytes_to_device == 3 * a.nbytes


def test_a_count_block_cannot_be_entered_twice_at_once():
    block = count_transfers()
    with block:
        with pytest.raises(ValueError, match="already active"):
            block.__enter__()


def test_events_have_their_payload_sizes_and_bytes_sum_them(device_space):
    small = np.ones(3, dtype=np.float32)
    large = np.ones((10, 10))
    with count_transfers() as counter:
        device = xp.to_device(small)
        xp.to_device(large)
        xp.to_numpy(device)
        device.astype(np.float64)
    assert [event.nbytes for event in counter.events] == [12, 800, 12, 24]
    assert counter.bytes_to_device == 812
    assert counter.bytes_to_host == 12
    assert counter.bytes("to_device") == 812
    assert counter.bytes("device_copy") == 24
    assert counter.bytes("sync") == 0
    with pytest.raises(ValueError, match="unknown event kind 'to_gpu'"):
        counter.bytes("to_gpu")


def test_device_only_conversions_are_device_copies(device_space):
    device = xp.to_device(np.asfortranarray(np.ones((3, 3))))
    with count_transfers() as counter:
        device.copy()
        device.astype(np.float32)
        xp.as_device_array(device, np.float64)
    assert (counter.device_copy, counter.to_host, counter.to_device) == (3, 0, 0)
    assert counter.total == 3
    assert {e.src_space for e in counter.events} == {device_space}
    assert {e.dst_space for e in counter.events} == {device_space}


def test_markers_add_no_bytes_and_count_in_total_only(device_space):
    with count_transfers() as counter:
        site = next_site()
        xp.profiling.record_marker("kernel_conversion", "advance(shape=(8,))")
        xp.profiling.record_marker("fallback", "push")
        xp.to_numpy(xp.to_device(np.ones(8)))
    assert (counter.kernel_conversion, counter.fallback) == (1, 1)
    assert counter.total == 4
    assert counter.to_host + counter.to_device == 2  # the physical copies
    assert counter.bytes("kernel_conversion") == counter.bytes("fallback") == 0
    lines = report_lines(counter)
    assert lines[0] == (
        "4 transfer(s) through cunumpy (1 to_host, 1 to_device, "
        "1 kernel_conversion, 1 fallback, 0 device_copy)"
    )
    assert f"    {site}: advance(shape=(8,)) (x1)" in lines
    with pytest.raises(ValueError, match="markers"):
        xp.profiling.record_marker("to_host", "x")


def test_reference_only_calls_record_nothing(device_space):
    a = np.ones(5)
    device = xp.to_device(a)
    with count_transfers() as counter:
        xp.to_numpy(a)
        xp.to_device(device)
        xp.to_cunumpy(device)
        xp.as_device_array(device, np.float64)
    assert counter.total == 0 and counter.syncs == 0
    assert counter.events == []


def test_syncs_are_listed_and_counted_apart_from_transfers(device_space):
    with count_transfers() as counter:
        site = next_site()
        xp.synchronize()
        xp.to_device(np.ones(2))
    assert counter.syncs == 1
    assert counter.total == 1
    assert report_lines(counter)[-2:] == ["  sync (1):", f"    {site}: synchronize() (x1)"]
    sync = [e for e in counter.events if e.kind == "sync"][0]
    assert sync.blocking and not sync.implicit and sync.nbytes == 0


def test_async_copies_are_marked_async(device_space):
    norm = xp.to_device(np.array(0.5))
    with count_transfers() as counter:
        site = next_site()
        xp.to_host_async(norm).result()
    assert counter.to_host == 1
    assert counter.async_count("to_host") == 1
    assert report_lines(counter)[-1] == (
        f"    {site}: to_host_async(shape=(), dtype=float64) (x1) [async]"
    )
    event = counter.events[0]
    assert getattr(event, "async") and event.async_ and not event.blocking


def test_counter_repr_and_event_fields(device_space):
    with count_transfers() as counter:
        xp.to_device(np.ones(2))
    assert repr(counter).startswith("<TransferCounter total=1 ")
    (event,) = counter.events
    assert event.file == __file__ and event.line > 0
    assert event.function == "test_counter_repr_and_event_fields"
    assert event.duration >= 0.0 and event.timestamp > 0.0
    assert "to_device" in repr(event)
    (summary,) = counter.sites
    assert (summary.kind, summary.count, summary.nbytes) == ("to_device", 1, 16)


def test_counters_see_every_thread(device_space):
    import threading

    a = np.ones(1 << 18)  # large enough for the copy to release the GIL
    with count_transfers() as counter:
        threads = [threading.Thread(target=xp.to_device, args=(a,)) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert counter.to_device == 4


# assert_no_transfers


def test_step_stays_on_device(device_space):
    state = xp.to_device(np.ones(100))

    def step(state, dt):
        return state.astype(np.float64)  # device-only: allowed

    dt = 0.1
    with xp.profiling.assert_no_transfers():
        step(state, dt)


def test_assert_no_transfers_raises_assertion_error_with_the_report(device_space):
    state = np.ones(100)
    with pytest.raises(AssertionError) as error:
        check = next_site()
        with assert_no_transfers():
            site = next_site()
            xp.to_cunumpy(state)
    message = str(error.value)
    assert message.startswith(
        "cunumpy.profiling.assert_no_transfers: 1 host/device transfer(s) "
        f"where none are allowed (checked at {check})\n"
    )
    assert (
        "1 transfer(s) through cunumpy (0 to_host, 1 to_device, "
        "0 kernel_conversion, 0 fallback, 0 device_copy)\n" in message
    )
    assert f"    {site}: to_cunumpy(shape=(100,), dtype=float64) (x1)\n" in message


def test_the_assert_no_transfers_message_is_one_line_then_the_counter_report(device_space):
    """The same text as in C++: the failure in one line, then the report of
    a counter of the same block."""
    state = np.ones(100)
    with count_transfers() as counter:
        with pytest.raises(AssertionError) as error:
            check = next_site()
            with assert_no_transfers():
                xp.to_cunumpy(state)
    assert str(error.value) == (
        "cunumpy.profiling.assert_no_transfers: 1 host/device transfer(s) "
        f"where none are allowed (checked at {check})\n" + counter.report()
    )


def test_assert_no_transfers_rejects_host_execution_on_the_device_backend(device_space):
    with pytest.raises(AssertionError, match="kernel_conversion"):
        with assert_no_transfers():
            xp.profiling.record_marker("kernel_conversion", "spline")
    with pytest.raises(AssertionError, match="fallback"):
        with assert_no_transfers():
            xp.profiling.record_marker("fallback", "push")


def test_assert_no_transfers_allows_syncs_and_yields_the_counter(device_space):
    with assert_no_transfers() as counter:
        xp.synchronize()
    assert counter.syncs == 1


def test_exceptions_in_the_block_pass_through_unchanged(device_space):
    with pytest.raises(KeyError, match="mine"):
        with assert_no_transfers():
            xp.to_device(np.ones(3))
            raise KeyError("mine")


# The kinds


def documented_kinds():
    """docs/counting.md's table of kinds: {kind: (a transfer, rejected by
    assert_no_transfers)}, from its "yes"/"no" columns."""
    path = pathlib.Path(__file__).resolve().parents[2] / "docs" / "counting.md"
    table = path.read_text().split("## What is counted", 1)[1]
    kinds = {}
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`"):
            kinds[cells[0].strip("`")] = (cells[2].startswith("yes"),
                                          cells[3].startswith("yes"))
        elif kinds and not line.startswith("|"):
            break
    return kinds


def test_the_kinds_are_the_cpp_definitions_and_the_documented_ones(device_space):
    kinds = documented_kinds()
    profiling = xp.profiling
    assert set(profiling.event_kinds) == set(kinds)
    assert len(profiling.event_kinds) == len(kinds)
    assert set(profiling.transfer_kinds) == {k for k, (t, _) in kinds.items() if t}
    assert set(profiling.host_device_transfer_kinds) == {
        k for k, (_, rejected) in kinds.items() if rejected}
    # The tuples follow the report's order, and total is what they say.
    for subset in (profiling.transfer_kinds, profiling.host_device_transfer_kinds):
        assert list(subset) == [k for k in profiling.event_kinds if k in subset]
    with count_transfers() as counter:
        xp.to_device(np.ones(4))
        xp.synchronize()
        xp.profiling.record_marker("fallback", "push")
    assert counter.total == sum(counter.count(k) for k in profiling.transfer_kinds)
    assert counter.total == 2 and counter.syncs >= 1
