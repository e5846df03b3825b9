"""Advice from Python: counter.advice() and budget.advice() return Findings
naming the Python lines of the copies, with str() of one line each; the
thresholds are keyword arguments, checked; a counter made with
advice="off" says it has none; advice never changes a budget's verdict."""

import json

import numpy as np
import pytest

import cunumpy as xp
from helpers import next_site, required_extension

count_transfers = xp.profiling.count_transfers
TransferBudget = xp.profiling.TransferBudget
TransferCounter = xp.profiling.TransferCounter


def of_rule(findings, rule):
    return [finding for finding in findings if finding.rule == rule]


def test_a_round_trip_in_a_loop_names_its_two_python_lines(device_space):
    state = np.ones(100000)
    with count_transfers(advice="on") as counter:
        for _ in range(12):
            up = next_site()
            device = xp.to_device(state)
            down = next_site()
            state = xp.to_numpy(device)
    findings = counter.advice(min_saving_seconds=0.0)
    trips = of_rule(findings, "round_trip")
    assert len(trips) == 1, [str(f) for f in findings]
    trip = trips[0]
    assert [site.site for site in trip.sites] == [up, down]
    assert [site.kind for site in trip.sites] == ["to_device", "to_host"]
    assert trip.sites[0].what == "to_device(shape=(100000,), dtype=float64)"
    assert trip.region == "" and trip.calls == 12 and trip.count == 24
    assert trip.bytes == 24 * 800000
    # Every pair but one, of the measured times.
    assert trip.saving_seconds == pytest.approx(trip.seconds * 11 / 12)
    assert trip.saving_per_call == pytest.approx(trip.saving_seconds / 12)
    text = str(trip)
    assert "\n" not in text
    assert text.startswith("[round_trip] outside every region (12 times) at " + up)
    assert "fix: keep the data where the loop uses it" in text
    assert repr(trip).startswith("Finding('round_trip', region='', saving_seconds=")


def test_the_same_loop_with_the_copies_at_its_boundaries_has_no_round_trip(device_space):
    state = np.ones(100000)
    with count_transfers(advice="on") as counter:
        device = xp.to_device(state)
        for _ in range(12):
            device = device.copy()  # work on the device
        state = xp.to_numpy(device)
    assert of_rule(counter.advice(min_saving_seconds=0.0), "round_trip") == []


def test_budget_findings_name_the_phase_and_leave_the_verdict(device_space):
    budget = TransferBudget(advice="on")
    state = np.ones(100000)
    for _ in range(12):
        with budget.phase("integrate"):
            state = xp.to_numpy(xp.to_device(state))
    budget.require("integrate", allow={"to_host": {"max_count": 3}}, ignore=())
    broken = [str(v) for v in budget.violations()]
    budget_without = TransferBudget(advice="off")
    findings = budget.advice(min_saving_seconds=0.0)
    trips = of_rule(findings, "round_trip")
    assert len(trips) == 1 and trips[0].phase == "integrate"
    assert trips[0].region == "integrate" and trips[0].region_calls == 12
    assert [str(v) for v in budget.violations()] == broken  # unchanged
    assert len(broken) == 2  # to_device forbidden, too many to_host
    in_phase = budget["integrate"].advice(min_saving_seconds=0.0)
    assert [str(f) for f in of_rule(in_phase, "round_trip")] == [str(trips[0])]
    with pytest.raises(RuntimeError, match="this budget records nothing for advice"):
        budget_without.advice()


def test_blocking_reads_made_by_kokkos_events():
    # Through Kokkos' own tools entry points: on every Kokkos, without a
    # device (the parity test's extension).
    events = required_extension("cunumpy_parity_events")
    loop = [{"region": "iterate", "do": [{"scalar_read": 8}]}] * 20
    with count_transfers(advice="on") as counter:
        events.run_events(json.dumps(loop))
    findings = counter.advice(min_saving_seconds=0.0)
    reads = of_rule(findings, "blocking_small_read")
    assert len(reads) == 1, [str(f) for f in findings]
    assert reads[0].region == "iterate" and reads[0].calls == 20
    assert reads[0].count == 20 and reads[0].bytes == 160
    assert reads[0].saving_seconds == pytest.approx(reads[0].seconds)
    assert "to_host_async" in reads[0].fix
    # A larger threshold, as a keyword argument: nothing.
    assert counter.advice(min_calls=21) == []
    assert counter.advice(min_saving_seconds=1.0) == []


def test_contents_are_hashed_only_when_asked_for(device_space):
    host = np.arange(8192.0)
    mirror = xp.DeviceMirror(host)
    for advice in ("on", "contents"):
        with count_transfers(advice=advice) as counter:
            for _ in range(12):
                line = next_site()
                mirror.to_device()  # the same bytes into the same buffer
        redundant = of_rule(counter.advice(min_saving_seconds=0.0),
                            "redundant_copy")
        if advice == "on":
            assert redundant == []
            continue
        assert len(redundant) == 1, [str(f) for f in redundant]
        assert redundant[0].sites[0].site == line
        assert redundant[0].count == 11  # all but the first
        assert "copy only when the host data changed" in redundant[0].fix
    # Changed host data between the copies: not redundant.
    with count_transfers(advice="contents") as counter:
        for step in range(12):
            host[0] = 1000.0 + step
            mirror.to_device()
    assert of_rule(counter.advice(min_saving_seconds=0.0), "redundant_copy") == []


def test_a_counter_without_advice_says_so():
    counter = TransferCounter(advice="off")
    with pytest.raises(RuntimeError,
                       match="this counter records nothing for advice"):
        counter.advice()
    # Off by default (counting stays cheap); the message says how to ask.
    with count_transfers() as default:
        pass
    with pytest.raises(RuntimeError, match=r"advice='off', the default\); "
                                           r"count with count_transfers\(advice='on'\)"):
        default.advice()
    with pytest.raises(RuntimeError, match=r"make it with TransferBudget\(advice='on'\)"):
        TransferBudget().advice()
    with xp.profiling.assert_no_transfers() as checked:
        pass
    with pytest.raises(RuntimeError):
        checked.advice()  # assert_no_transfers needs counts only


def test_bad_arguments_name_what_is_wrong():
    with pytest.raises(ValueError, match="advice must be 'on', 'off' or 'contents'"):
        TransferCounter(advice="maybe")
    with pytest.raises(TypeError, match="TransferBudget: advice must be"):
        TransferBudget(advice=True)
    counter = TransferCounter()
    with pytest.raises(TypeError, match="unknown threshold 'min_saving' "
                                        r"\(expected min_saving_seconds"):
        counter.advice(min_saving=0.1)
    with pytest.raises(ValueError, match="min_calls must be a non-negative integer, not -1"):
        counter.advice(min_calls=-1)
    with pytest.raises(TypeError, match="small_bytes must be"):
        counter.advice(small_bytes=1.5)
    with pytest.raises(TypeError, match="min_saving_seconds must be a number"):
        counter.advice(min_saving_seconds="1")
    with pytest.raises(ValueError, match="pinned_bandwidth must be a non-negative number"):
        counter.advice(pinned_bandwidth=-1e9)
    with pytest.raises(TypeError, match="advice= is for a new counter"):
        count_transfers(counter, advice="on")


def test_the_defaults_and_rules_are_listed():
    thresholds = xp.profiling.advice_thresholds
    assert thresholds["min_calls"] == 10 and thresholds["small_bytes"] == 4096
    assert thresholds["min_saving_seconds"] == pytest.approx(1e-3)
    assert "round_trip" in xp.profiling.advice_rules
    assert len(xp.profiling.advice_rules) == 9
    # The defaults are what advice() uses with no argument.
    with count_transfers(advice="on") as counter:
        pass
    assert counter.advice() == [] and counter.advice(**thresholds) == []
