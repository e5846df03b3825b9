"""The trace of the legacy example (CUNUMPY_TRACE, Chrome's trace format)."""

import pytest

from plugin_helpers import (DIAGNOSTICS_BYTES, LEGACY_APP, OUTPUTS,
                            OUTPUT_COPY, STATE_BYTES, STEPS, shown)


pytestmark = [LEGACY_APP, pytest.mark.needs("device")]


def test_trace(case):
    run = case.run(CUNUMPY_TRACE="trace.json", CUNUMPY_REPORT="report.json")
    assert run.status == 0, f"the program must succeed\n{run}"
    events = case.json("trace.json", run)["traceEvents"]
    for event in events:
        assert event["ph"] in ("X", "i", "M"), f"known phases: {event}"
        if event["ph"] == "X":
            assert event["dur"] >= 0 and event["ts"] >= 0, \
                f"slices have a start and a duration: {event}"

    def of(category):
        return [event for event in events if event.get("cat") == category]

    regions = [event["name"] for event in of("region")]
    assert (regions.count("integrate") == STEPS and
            regions.count("output") == OUTPUTS and
            regions.count("setup") == 1), \
        f"one slice per region call: {sorted(set(regions))}"
    copies = of("copy")
    assert len(copies) == 21, f"one slice per copy: {len(copies)}"
    state = [event for event in copies
             if event["args"]["site"].endswith(case.site(OUTPUT_COPY))]
    assert len(state) == OUTPUTS, \
        f"the output copies, by site\n{shown(copies[:3])}"
    args = state[0]["args"]
    # The device is the fake one on a host-only build, "Cuda" on a CUDA one.
    source, _, destination = args["direction"].partition(" -> ")
    assert (args["bytes"] == STATE_BYTES and args["kind"] == "to_host" and
            source in ("FakeDevice", "Cuda", "HIP", "SYCL") and
            destination == "Host" and args["label"] == "state"), \
        f"bytes, direction and label: {args}"
    kernels = [event["name"] for event in of("kernel")]
    assert kernels.count("legacy::advance") == STEPS, \
        f"one slice per kernel: {sorted(set(kernels))}"
    syncs = [event for event in of("dual_view")
             if event["args"].get("copied")]
    assert (len(syncs) == OUTPUTS and
            syncs[0]["args"]["bytes"] == DIAGNOSTICS_BYTES and
            syncs[0]["args"]["direction"] == "to_host"), \
        f"DualView syncs with their copy: {syncs[:1]}"
    names = {event["name"] for event in events if event["ph"] == "M"}
    assert {"process_name", "thread_name"} <= names, f"track names: {names}"
    report = case.json("report.json", run)
    assert (report["trace"]["file"].endswith("trace.json") and
            report["trace"]["dropped_slices"] == 0), \
        f"the report names the trace\n{shown(report['trace'])}"


def test_trace_of_many_steps(case):
    # More slices than one 2 MiB chunk of the trace's memory holds (29,127):
    # every slice kept, in the order it came, across the chunks.
    steps = 15000
    run = case.run(["--steps", str(steps)], CUNUMPY_TRACE="trace.json",
                   CUNUMPY_REPORT="report.json")
    assert run.status == 0, f"the program must succeed\n{run}"
    events = case.json("trace.json", run)["traceEvents"]
    steps_seen = [event for event in events
                  if event.get("cat") == "region" and
                  event["name"] == "integrate"]
    kernels = [event for event in events if event.get("cat") == "kernel" and
               event["name"] == "legacy::advance"]
    assert len(events) > 29127 and len(steps_seen) == steps and \
        len(kernels) == steps, \
        f"every slice kept: {len(events)} events, {len(steps_seen)} steps"
    starts = [event["ts"] for event in steps_seen]
    assert starts == sorted(starts) and len(set(starts)) == steps, \
        "the steps' slices in the order they came"
    assert case.json("report.json", run)["trace"]["dropped_slices"] == 0
