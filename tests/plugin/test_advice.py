"""Advice in the plugin's reports: the text section, the JSON field and the
stderr summary name each finding's rule, region, lines, evidence, estimate
and fix; CUNUMPY_ADVISE and the CUNUMPY_ADVISE_* thresholds set it (a bad
value: one line, the default); advice never changes the verdict or the exit
status; cunumpy-report merges the findings of the ranks. The program is
tests/programs/advice_events.cpp, whose copies go through Kokkos' own tools
entry points, so these run on every Kokkos."""

import json

import pytest

from plugin_helpers import one_warning, shown
from report_tool_helpers import short_paths

pytestmark = pytest.mark.program("advice_events",
                                 source="tests/programs/advice_events.cpp")

STEPS = 20


def findings(report, rule=None):
    result = report["advice"]["findings"]
    return [f for f in result if rule is None or f["rule"] == rule]


def sites(finding):
    return [site["site"] for site in finding["sites"]]


def expected_site(case, marker):
    """The full "file:line" of the line ending in `marker`."""
    return f"{case.source}:{case.source_line(marker + chr(10))}"


def test_advice_report(case):
    run = case.run(CUNUMPY_REPORT="report.json")
    assert run.status == 0, f"the program runs\n{run}"
    report = case.json("report.json", run)
    advice = report["advice"]
    assert advice["recording"] == "on", shown(advice)
    assert advice["thresholds"]["min_calls"] == 10
    assert advice["thresholds"]["min_saving_seconds"] == pytest.approx(1e-3)
    rules = [finding["rule"] for finding in advice["findings"]]
    assert rules == ["round_trip", "blocking_small_read"], \
        f"the round trip first (the larger saving)\n{shown(advice)}"
    trip, read = advice["findings"]
    assert sites(trip) == [expected_site(case, "// up"),
                           expected_site(case, "// down")], shown(trip)
    assert [site["kind"] for site in trip["sites"]] == ["to_device", "to_host"]
    assert (trip["region"], trip["calls"], trip["region_calls"],
            trip["count"]) == ("step", STEPS, STEPS, 2 * STEPS), shown(trip)
    assert trip["bytes"] == 2 * STEPS * 800000
    # The measured time of all pairs but one.
    assert trip["saving_seconds"] == pytest.approx(
        trip["seconds"] * (STEPS - 1) / STEPS)
    assert trip["seconds"] >= 2 * STEPS * 500e-6
    assert trip["saving_per_call"] == pytest.approx(
        trip["saving_seconds"] / STEPS)
    assert "went to the device and back in 20 of 20 calls" in trip["evidence"]
    assert "convert once before the loop" in trip["fix"]
    assert trip["message"].startswith("[round_trip] in region 'step'")
    assert sites(read) == [expected_site(case, "// read")]
    assert read["region"] == "iterate" and read["calls"] == STEPS
    assert read["saving_seconds"] == pytest.approx(read["seconds"])
    assert "to_host_async" in read["fix"]

    run = case.run(CUNUMPY_REPORT="report.txt")
    text = case.read("report.txt")
    assert "\nadvice (2 finding(s), largest estimated saving first" in text, \
        text
    assert "  1. [round_trip] in region 'step' (20 of 20 calls): saves " \
        "about " in text, text
    assert f"       at {expected_site(case, '// up')}: deep_copy(\"state\", " \
        "nbytes=800000) (to_device)\n" in text, text
    assert f"       then {expected_site(case, '// down')}:" in text, text
    for label in ("evidence: ", "estimate: ", "fix: "):
        assert "       " + label in text, text
    assert "  2. [blocking_small_read] in region 'iterate'" in text, text
    assert "(contents not hashed: CUNUMPY_ADVISE=contents" in text, text

    run = case.run()  # no report file: the summary on stderr
    lines = [line for line in run.cunumpy_lines()
             if line.startswith("cunumpy: advice: ")]
    assert len(lines) == 2, f"the top findings on stderr\n{run}"
    assert lines[0].startswith("cunumpy: advice: [round_trip] in region "
                               "'step' (20 of 20 calls) at "), run
    assert "; fix: " in lines[0]


def test_advice_corrected(case):
    run = case.run(["--pattern", "corrected"], CUNUMPY_REPORT="report.json")
    assert run.status == 0, f"the program runs\n{run}"
    report = case.json("report.json", run)
    assert findings(report) == [], shown(report["advice"])
    run = case.run(["--pattern", "corrected"], CUNUMPY_REPORT="report.txt")
    assert "  no copy pattern above the thresholds\n" in case.read("report.txt")
    run = case.run(["--pattern", "corrected"])
    assert not [line for line in run.cunumpy_lines()
                if line.startswith("cunumpy: advice:")], run


def test_advice_settings(case):
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_ADVISE="0")
    report = case.json("report.json", run)
    assert report["advice"]["recording"] == "off" and findings(report) == []
    run = case.run(CUNUMPY_REPORT="report.txt", CUNUMPY_ADVISE="0")
    assert "\nadvice: off (CUNUMPY_ADVISE=0)\n" in case.read("report.txt")

    # Thresholds from the environment.
    run = case.run(CUNUMPY_REPORT="report.json",
                   CUNUMPY_ADVISE_MIN_CALLS=str(STEPS + 1))
    report = case.json("report.json", run)
    assert findings(report) == [], shown(report["advice"])
    assert report["advice"]["thresholds"]["min_calls"] == STEPS + 1
    run = case.run(CUNUMPY_REPORT="report.json",
                   CUNUMPY_ADVISE_MIN_SAVING_US="1000000")
    assert findings(case.json("report.json", run)) == []
    run = case.run(CUNUMPY_REPORT="report.json",
                   CUNUMPY_ADVISE_SMALL_BYTES="4")
    report = case.json("report.json", run)
    assert [f["rule"] for f in findings(report)] == ["round_trip"], \
        "an 8-byte read is not small below 4 bytes"
    run = case.run(CUNUMPY_REPORT="report.json",
                   CUNUMPY_ADVISE_PINNED_MBPS="55000")
    assert case.json("report.json", run)["advice"]["thresholds"][
        "pinned_bandwidth"] == pytest.approx(55e9)

    # A bad value: one line, and the default.
    run = case.run(CUNUMPY_REPORT="report.json",
                   CUNUMPY_ADVISE_MIN_CALLS="ten")
    one_warning(run, r'^cunumpy: CUNUMPY_ADVISE_MIN_CALLS="ten" is not an '
                     r"integer in \[0, 2147483647\]; using 10$")
    report = case.json("report.json", run)
    assert len(findings(report)) == 2 and \
        report["advice"]["thresholds"]["min_calls"] == 10
    run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_ADVISE="maybe")
    one_warning(run, r'^cunumpy: CUNUMPY_ADVISE="maybe" is not one of 0, 1, '
                     r"contents; using 1$")
    assert case.json("report.json", run)["advice"]["recording"] == "on"
    run = case.run(CUNUMPY_ADVISE_TOP="0")
    assert not [line for line in run.cunumpy_lines()
                if line.startswith("cunumpy: advice:")], run
    run = case.run(CUNUMPY_ADVISE_TOP="1")
    assert [line for line in run.cunumpy_lines()
            if line.startswith("cunumpy: advice:")][1:] == [
        "cunumpy: advice: 1 more finding(s) in the full report"], run


def test_advice_contents(case):
    run = case.run(["--pattern", "redundant"], CUNUMPY_REPORT="report.json",
                   CUNUMPY_ADVISE="contents",
                   CUNUMPY_ADVISE_PAGEABLE_BYTES="1048576")
    report = case.json("report.json", run)
    assert report["advice"]["recording"] == "contents"
    redundant = findings(report, "redundant_copy")
    assert len(redundant) == 1, shown(report["advice"])
    assert sites(redundant[0]) == [expected_site(case, "// upload")]
    assert redundant[0]["count"] == STEPS - 1  # all but the first
    assert "copy only when the host data changed" in redundant[0]["fix"]
    run = case.run(["--pattern", "redundant"], CUNUMPY_REPORT="report.json")
    assert findings(case.json("report.json", run), "redundant_copy") == [], \
        "contents are hashed only with CUNUMPY_ADVISE=contents"


def test_advice_never_changes_the_verdict(case):
    # A budget the round trip breaks, and one it keeps.
    broken = case.write("broken.toml", "[phases.step]\n")
    kept = case.write("kept.toml", "[phases.step]\nallow.to_host = {}\n"
                      "allow.to_device = {}\n")
    for advise in ("0", "1", "contents"):
        run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BUDGET=broken,
                       CUNUMPY_ON_VIOLATION="exit", CUNUMPY_ADVISE=advise)
        assert run.status == 3, f"the broken rule fails the run\n{run}"
        report = case.json("report.json", run)
        assert [v["limit"] for v in report["budget"]["violations"]] == \
            ["forbidden", "forbidden"], shown(report["budget"])
        run = case.run(CUNUMPY_REPORT="report.json", CUNUMPY_BUDGET=kept,
                       CUNUMPY_ON_VIOLATION="exit", CUNUMPY_ADVISE=advise)
        assert run.status == 0, f"findings do not fail a run\n{run}"
        report = case.json("report.json", run)
        assert report["budget"]["ok"] and report["budget"]["violations"] == []
        rules = [f["rule"] for f in findings(report)]
        expected = {"0": [], "1": ["round_trip", "blocking_small_read"],
                    # and the reads, whose bytes never change
                    "contents": ["round_trip", "blocking_small_read",
                                 "redundant_copy"]}[advise]
        assert rules == expected, shown(report["advice"])
        if advise != "0":
            assert findings(report)[0]["phase"] == "step"


def test_advice_merged(case, report_tool):
    merge = [report_tool]
    for rank, wait in ((0, "500"), (1, "1000")):
        run = case.run(["--wait-us", wait], CUNUMPY_REPORT="report-%r.json",
                       OMPI_COMM_WORLD_RANK=str(rank),
                       OMPI_COMM_WORLD_SIZE="2", CUNUMPY_RUN_ID="two ranks")
        assert run.status == 0, run
    files = [case.path("report-0.json"), case.path("report-1.json")]
    run = case.run(command=merge + ["--json", "merged.json"] + files)
    assert run.status == 0, f"cunumpy-report merges\n{run}"
    table = run.stdout
    assert "advice (2 finding(s) over 2 rank(s)" in table, table
    # The table shows the sites as its rule shortens them, wherever the
    # checkout is.
    short = short_paths
    assert (f"  [round_trip] region 'step' at "
            f"{short(expected_site(case, '// up'))}, "
            f"then {short(expected_site(case, '// down'))}, on rank(s) 0, 1"
            in table), table
    merged = case.json("merged.json", run)
    trip = merged["advice"]["findings"][0]
    assert trip["rule"] == "round_trip" and trip["ranks"] == [[0, 1]]
    reports = [case.json(f"report-{rank}.json", run) for rank in (0, 1)]
    savings = [findings(r, "round_trip")[0]["saving_seconds"] for r in reports]
    stats = trip["over_ranks"]["saving"]
    assert stats["min"] == pytest.approx(min(savings))
    # The rank of the largest saving is the one whose report has it: rank 1
    # copies twice as long, unless a stall of the machine in rank 0's run
    # (its copies are timed) made rank 0's saving larger.
    assert stats["max"] == pytest.approx(max(savings))
    assert stats["max_rank"] == savings.index(max(savings)), (savings, stats)
    assert stats["mean"] == pytest.approx(sum(savings) / 2)
    calls = trip["over_ranks"]["calls"]
    assert {key: calls[key] for key in ("min", "mean", "max", "max_rank")} \
        == {"min": STEPS, "mean": STEPS, "max": STEPS, "max_rank": 0}
    assert merged["job"]["without_advice"] == []

    # A rank whose report has no advice (an older plugin's) still merges.
    older = reports[1]
    del older["advice"]
    case.write("report-1.json", json.dumps(older))
    run = case.run(command=merge + ["--json", "merged.json"] + files)
    assert run.status == 0, run
    merged = case.json("merged.json", run)
    assert merged["job"]["without_advice"] == [[1, 1]]
    assert merged["advice"]["findings"][0]["ranks"] == [[0, 0]]
    assert "no advice in the report of rank(s) 1" in run.stdout, run
