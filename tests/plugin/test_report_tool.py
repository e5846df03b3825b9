"""cunumpy-report on reports made from a real one: tool_events with
nested regions (--library-regions) under the plugin and the legacy
example's budget, which it breaks. report_tool_helpers.py turns that
report into the version-3 reports of the ranks of a job.

--check passes only when every rank of the job is there, checked its
budget, kept it and saw every event; input that cannot be trusted gives
status 2 and one line, whatever it is; thousands of ranks merge into lines
of bounded length; a call site keeps its file name and line however deep
the checkout; the region tree exports to Hatchet's literal format,
which Hatchet reads (in a virtual environment of the build)."""

import json
import os
import random
import resource
import subprocess
import sys
import time

import pytest

from plugin_helpers import SANITIZED
from report_tool_helpers import (build_venv, call_tool, passing,
                                 short_paths, skip, version3, write_job,
                                 write_json)

pytestmark = pytest.mark.program("tool_events", budget="examples/legacy_app/budget.toml")

LINE_WIDTH = 160


@pytest.fixture
def sample(case, budget):
    """The report of tool_events: regions step, output and belos_solve
    with two solver regions inside; the budget broken."""
    run = case.run(["--library-regions"], CUNUMPY_REPORT="sample.json",
                   CUNUMPY_BUDGET=budget)
    assert run.status == 0, run
    report = case.json("sample.json", run)
    assert not report["budget"]["ok"], "the legacy budget forbids its copies"
    return report


@pytest.fixture
def merge(report_tool):
    """cunumpy-report with these arguments: (status, stdout, stderr)."""
    return lambda *arguments: call_tool(report_tool,
                                        [str(a) for a in arguments])


def read_json(path):
    with open(path, encoding="utf-8") as stream:
        return json.load(stream)


def one_line(stderr):
    return stderr.count("\n") == 1 and stderr.startswith("cunumpy-report: ")


def test_check_verdicts(case, sample, merge, report_tool):
    good = passing(sample)
    write_job(case.path("good"), good, range(4), size=4)
    status, stdout, _ = merge("--check", case.path("good"))
    assert status == 0 and "check: passed" in stdout, stdout

    # Rank 2 of 4 fails in one way each time; the others pass.
    no_device = version3(good, 2, 4, verdict="unchecked")
    no_device["device"] = {"present": False, "reason": "no device memory "
                           "space in this program (backends: OpenMP)"}
    no_budget = version3(good, 2, 4, verdict="none")
    no_budget["budget"].update(checked=False, file=None)
    lost = version3(good, 2, 4, verdict="incomplete")
    lost.update(complete=False, losses=["12 events lost: queue full"])
    bad_file = version3(good, 2, 4, verdict="unchecked")
    bad_file["budget"].update(checked=False, error="budget.toml:3: bad key")
    contradicts = version3(good, 2, 4, verdict="broken")
    failing = {"broken": (version3(sample, 2, 4), "BROKEN on rank(s) 2"),
               "no_device": (no_device, "backends: OpenMP"),
               "no_budget": (no_budget, "-x CUNUMPY_BUDGET"),
               "lost_events": (lost, "12 events lost"),
               "bad_budget_file": (bad_file, "budget.toml:3: bad key"),
               "ok_but_verdict_broken": (contradicts, "BROKEN on rank(s) 2")}
    for name, (report, needle) in failing.items():
        job = case.path(name)
        write_job(job, good, [0, 1, 3], size=4)
        write_json(os.path.join(job, "report-2.json"), report)
        status, stdout, _ = merge("--check", job)
        assert (status == 1 and needle in stdout and
                "check: FAILED" in stdout), f"{name}: --check fails\n{stdout}"
        status, _, _ = merge(job)
        assert status == 0, f"{name}: merging without --check succeeds"

    # The job has 4096 ranks, six wrote a report.
    write_job(case.path("missing"), good, [0, 1, 2, 4, 5, 6], size=4096)
    status, stdout, _ = merge("--check", case.path("missing"))
    assert (status == 1 and "no report from rank(s) 3, 7-4095" in stdout and
            "4090 rank(s) of 4096 have no report" in stdout), stdout

    # The job's size unknown: ranks may be missing, unless the run had no
    # launcher (one process).
    write_job(case.path("size_unknown"), good, [0, 1], size=None)
    status, stdout, _ = merge("--check", case.path("size_unknown"))
    assert status == 1 and "size is unknown" in stdout, stdout
    alone = write_json(case.path("alone.json"),
                       version3(good, 0, None, run_id="local:node7:4242:17"))
    status, stdout, _ = merge("--check", alone)
    assert status == 0, stdout

    # The command, as CI runs it.
    run = case.run(command=[report_tool, "--check",
                            case.path("missing")])
    assert run.status == 1 and run.stderr == "", run
    run = case.run(command=[report_tool, "--check",
                            case.path("good")])
    assert run.status == 0 and run.stderr == "", run


def test_untrusted_input_is_refused(case, sample, merge, report_tool):
    good = passing(sample)
    directory = case.path("reports")
    os.makedirs(directory)

    def report(rank=0, size=1, **fields):
        return version3(good, rank, size, **fields)

    def refused(name, content, *needles, check=True):
        """Writes `content` (a report, text or bytes) to `name`; --check
        on it gives status 2 and one line naming it, and the needles."""
        path = os.path.join(directory, name)
        if isinstance(content, bytes):
            with open(path, "wb") as stream:
                stream.write(content)
        elif isinstance(content, str):
            with open(path, "w", encoding="utf-8") as stream:
                stream.write(content)
        else:
            write_json(path, content)
        status, stdout, stderr = merge(*(["--check"] if check else []), path)
        assert (status == 2 and one_line(stderr) and name in stderr and
                all(needle in stderr for needle in needles)), \
            f"{name}: status {status}\n{stderr}{stdout}"
        os.remove(path)

    def with_field(place, value):
        """The good report with the field at `place` ("budget.ok") set to
        `value`, or removed when value is ...."""
        result = report()
        *outer, last = place.split(".")
        container = result
        for name in outer:
            container = container[int(name) if name.isdigit() else name]
        if value is ...:
            del container[last]
        else:
            container[int(last) if last.isdigit() else last] = value
        return result

    refused("empty.json", "", "empty")
    refused("text.json", "cunumpy transfer report: tool_events (rank 0)\n",
            "not JSON", "CUNUMPY_REPORT=<file>.json")
    refused("binary.json", bytes(range(256)) * 4, "not UTF-8")
    refused("list.json", [report()], "not a cunumpy plugin report")
    refused("null.json", "null", "not a cunumpy plugin report")
    refused("other.json", {"format": "chrome-trace"},
            "not a cunumpy plugin report")
    refused("truncated.json", json.dumps(report())[:5000], "not JSON")
    refused("nan.json", json.dumps(report()).replace(
        '"elapsed_seconds": ', '"elapsed_seconds": NaN, "x": '),
        "NaN is not a JSON number")
    refused("deep.json", with_field("metadata", json.loads(
        "[" * 80 + "]" * 80)), "nested deeper than 64 levels")
    refused("deeper.json", '{"format": "cunumpy-report", "x": '
            + "[" * 100000 + "]" * 100000 + "}", "nested deeper than 64")
    refused("ok_missing.json", with_field("budget.ok", ...),
            "'budget.ok' is missing, expected true or false")
    refused("ok_string.json", with_field("budget.ok", "yes"),
            "'budget.ok' is \"yes\", expected true or false")
    refused("violations.json", with_field("budget.violations", {}),
            "'budget.violations' is an object, expected a list")
    refused("verdict.json", with_field("budget.verdict", "fine"),
            "'budget.verdict' is \"fine\", expected one of")
    refused("rank.json", with_field("rank", "0"), "'rank' is \"0\"")
    refused("rank_bool.json", with_field("rank", True), "'rank' is true")
    refused("calls.json", with_field("phases.0.calls", -1),
            "'phases[0].calls' is -1, expected an integer")
    refused("seconds.json", json.dumps(with_field(
        "regions.1.seconds", 12345.5)).replace("12345.5", "1e400"),
        "'regions[1].seconds' is Infinity, expected a number")
    refused("count.json", with_field("total.kinds.to_host.count", 2 ** 70),
            "'total.kinds.to_host.count' is")
    refused("run.json", with_field("run", None), "'run' is null")
    refused("run_rank.json", with_field("run.rank", 5), "differs from")
    refused("outside.json", report(rank=4, size=4), "rank 4 of a job of 4")
    refused("parent.json", with_field("regions.1.parent", 7),
            "'regions[1].parent' is 7, not an earlier region")
    refused("version4.json", with_field("version", 4), "version 4")
    version2 = json.loads(json.dumps(sample))
    version2["version"] = 2
    refused("version2.json", version2, "version 2", "merge without --check")
    with open(case.path("version2.json"), "w", encoding="utf-8") as stream:
        json.dump(version2, stream)
    status, _, _ = merge(case.path("version2.json"))
    assert status == 0, "a version-2 report still merges"

    # Larger than any report: refused before it is read as JSON.
    large = os.path.join(directory, "large.json")
    with open(large, "wb") as stream:
        stream.truncate(1025 * 1024 * 1024)  # sparse: no disk used
    status, _, stderr = merge(large)
    assert status == 2 and one_line(stderr) and "larger than 1 GiB" in stderr
    os.remove(large)
    fifo = os.path.join(directory, "fifo.json")
    os.mkfifo(fifo)
    status, _, stderr = merge(fifo)
    assert status == 2 and "not a regular file" in stderr, stderr
    os.remove(fifo)

    # Paths that hold no report.
    status, _, stderr = merge(case.path("nowhere.json"))
    assert (status == 2 and one_line(stderr) and
            "nowhere.json: no such file or directory" in stderr), stderr
    os.makedirs(case.path("empty_directory"))
    status, _, stderr = merge(case.path("empty_directory"))
    assert (status == 2 and one_line(stderr) and
            "no report (*.json) in this directory" in stderr), stderr

    # Two runs mixed: a stale report of another run, then two reports of
    # one rank.
    write_job(case.path("mixed"), good, range(3), size=3)
    write_json(case.path("mixed/report-9.json"),
               version3(good, 9, 12, run_id="slurm:999.0"))
    status, _, stderr = merge("--check", case.path("mixed"))
    assert (status == 2 and one_line(stderr) and "2 different runs" in stderr
            and "run 'slurm:999.0': " in stderr and "report-9.json" in stderr
            and "run 'slurm:1234.0': " in stderr), stderr
    # With the times of the runs, every stale report is named at once.
    for rank in range(3):
        path = case.path(f"mixed/report-{rank}.json")
        report = json.loads(case.read(path))
        report["run"].update(started=100.0, ended=200.0)
        write_json(path, report)
    for rank in (7, 8, 9):
        stale = version3(good, rank, 12, run_id="slurm:999.0")
        stale["run"].update(started=10.0, ended=20.0)
        write_json(case.path(f"mixed/report-{rank}.json"), stale)
    status, _, stderr = merge("--check", case.path("mixed"))
    assert (status == 2 and one_line(stderr) and
            "run 'slurm:1234.0' wrote last: " in stderr and
            "stale, run 'slurm:999.0': " + ", ".join(
                case.path(f"mixed/report-{rank}.json") for rank in (7, 8, 9))
            in stderr), stderr
    for rank in (7, 8):
        os.remove(case.path(f"mixed/report-{rank}.json"))
    # Two launches under one id (a launcher without launch ids): ranks 2
    # and 3 ended before rank 0 started, and are both named.
    os.makedirs(case.path("launches"))
    for rank in range(4):
        report = version3(good, rank, 4, run_id="hydra:node1:4242")
        report["run"].update(id_unique=False, started=10.0 + 100 * (rank < 2),
                             ended=20.0 + 100 * (rank < 2))
        write_json(case.path(f"launches/report-{rank}.json"), report)
    status, _, stderr = merge("--check", case.path("launches"))
    assert (status == 2 and one_line(stderr) and
            "2 stale report(s), written before the process of " in stderr and
            ": " + case.path("launches/report-2.json") + ", " +
            case.path("launches/report-3.json") + ";" in stderr), stderr
    write_job(case.path("twice"), good, range(2), size=2)
    write_json(case.path("twice/report-1-again.json"), version3(good, 1, 2))
    status, _, stderr = merge(case.path("twice"))
    assert (status == 2 and one_line(stderr) and
            "rank 1 already has a report" in stderr), stderr
    write_json(case.path("twice/report-1-again.json"), version3(good, 1, 3))
    status, _, stderr = merge(case.path("twice"))
    assert status == 2 and "its job has 3 rank(s)" in stderr, stderr

    # The command, as CI runs it: one line, no traceback.
    run = case.run(command=[report_tool, "--check",
                            case.path("mixed")])
    assert run.status == 2 and one_line(run.stderr), run


def mutated(report, generator):
    """A copy of `report` with one value somewhere replaced by a hostile
    one, or removed."""
    result = json.loads(json.dumps(report))
    container = result
    key = generator.choice(list(container))
    while (isinstance(container[key], (dict, list)) and container[key] and
           generator.random() < 0.85):
        container = container[key]
        key = (generator.choice(list(container)) if isinstance(container, dict)
               else generator.randrange(len(container)))
    if isinstance(container, dict) and generator.random() < 0.25:
        del container[key]
    else:
        container[key] = generator.choice(
            [None, True, False, -1, 0, 2 ** 70, 0.5, 1e308, "", "x", [], {},
             [[[[]]]], {"count": "1"}, [None], 3])
    return result


def test_fuzzed_reports_never_crash(case, sample, merge):
    """Hundreds of reports with one value broken (or text cut or bytes
    flipped): status 0, 1 or 2, one line on stderr for 2, no exception."""
    generator = random.Random(20261201)
    good = version3(passing(sample), 0, 2)
    text = json.dumps(version3(sample, 1, 2))
    job = case.path("job")
    for attempt in range(300):
        write_job(job, good, [0], size=2)
        path = os.path.join(job, "report-1.json")
        if attempt % 10 == 0:
            broken = bytearray(text.encode())
            for _ in range(3):
                broken[generator.randrange(len(broken))] = \
                    generator.randrange(256)
            with open(path, "wb") as stream:
                stream.write(bytes(broken[:generator.randrange(len(broken))]
                                   if attempt % 20 == 0 else broken))
        else:
            write_json(path, mutated(version3(sample, 1, 2), generator))
        arguments = (["--check", "--json", case.path("merged.json")]
                     if attempt % 2 else ["--format", "hatchet", "-o",
                                          case.path("tree.json")])
        status, stdout, stderr = merge(*arguments, job)
        assert (status in (0, 1, 2) and
                "internal error" not in case.without_paths(stderr)), \
            f"attempt {attempt}: status {status}\n{stderr}"
        assert status != 2 or (one_line(stderr) and
                               "report-1.json: " in stderr), \
            f"attempt {attempt}: one line on the broken report\n{stderr}"


def small(report):
    """`report` without what the merge does not read (sites, events,
    metadata): a few KiB."""
    result = json.loads(json.dumps(report))
    for section in [result["total"], result["outside"], *result["phases"],
                    *result["regions"]]:
        section["top_sites"] = []
    for violation in result["budget"]["violations"]:
        violation["events"] = []
    for name in ("metadata", "cuda_view", "dual_views"):
        result.pop(name, None)
    return result


def test_many_ranks(case, sample, report_tool):
    """3000 ranks, every 7th breaking its budget: every line of the table
    is short, the reports are read one at a time."""
    good, broken = small(passing(sample)), small(sample)
    job = case.path("job")
    os.makedirs(job)
    for rank in range(3000):
        write_json(os.path.join(job, f"report-{rank}.json"),
                   version3(broken if rank % 7 == 3 else good, rank, 3000))
    start = time.monotonic()
    run = case.run(command=[report_tool, "--check", job])
    seconds = time.monotonic() - start
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    lines = run.stdout.splitlines()
    assert run.status == 1 and "check: FAILED" in run.stdout, run
    assert lines[0].startswith("cunumpy-report: 3000 rank(s) (0-2999) of "), \
        lines[0]
    assert "budget: BROKEN on rank(s) 3, 10, 17, 24, " in run.stdout, lines[:4]
    assert "… (" in run.stdout and " more)" in run.stdout, run
    longest = max(lines, key=len)
    assert len(longest) <= LINE_WIDTH, f"{len(longest)} characters: {longest}"
    print(f"3000 ranks: {seconds:.1f} s, peak {peak_mib:.0f} MiB (children)")
    # Under AddressSanitizer (scripts/test-sanitizers) freed memory waits in
    # its quarantine: the bound is the plain build's.
    assert peak_mib < 80 or SANITIZED, \
        f"{peak_mib:.0f} MiB: the reports are all kept"
    assert seconds < 120, f"{seconds:.0f} s"


def test_deep_checkout_keeps_sites_whole(case, sample, merge, report_tool):
    """Reports of a program whose sources lie more than 150 characters
    deep: the table shows each call site's path from its last components,
    with its file name and line whole, even on a line that is too long; the
    merged JSON keeps the whole paths."""
    short = short_paths
    deep = ("/scratch/" + "/".join(f"a-project-with-a-long-name-{level}"
                                   for level in range(5)) + "/cunumpy")
    assert len(deep) > 150
    up, down, read = (f"{deep}/tests/programs/advice_events.cpp:{line}"
                      for line in (88, 92, 91))
    assert short(up) == "…/tests/programs/advice_events.cpp:88"
    copy = f"{deep}/tests/programs/tool_events.cpp:57"
    report = json.loads(json.dumps(sample))
    report["program"] = f"{deep}/build/tests/tool_events"
    report["budget"]["violations"] = [{
        "phase": "step", "kind": "to_host", "limit": "forbidden",
        "message": "phase 'step': to_host is not allowed, got 20 event(s)\n"
                   f"  {copy}: deep_copy(\"state\", nbytes=800) (x20)\n"}]
    long_region = "a region whose name is long " * 5

    def finding(rule, region, sites):
        return {"rule": rule, "region": region, "phase": "step",
                "fix": "fix it", "message": f"[{rule}] ...",
                "saving_seconds": 0.01, "seconds": 0.02, "count": 40,
                "calls": 20, "sites": [{"site": site} for site in sites]}

    report["advice"] = {"recording": "on", "findings": [
        finding("round_trip", "step", [up, down]),
        finding("blocking_small_read", long_region, [read])]}
    paths = write_job(case.path("job"), report, [0, 1], size=2)
    status, table, stderr = merge("--json", case.path("merged.json"), *paths)
    assert status == 0, stderr
    lines = table.splitlines()
    assert lines[0].endswith(f" of {short(report['program'])}"), lines[0]
    assert (f"  [round_trip] region 'step' at {short(up)}, then "
            f"{short(down)}, on rank(s) 0, 1" in lines), table
    assert f"{' ' * 10}{short(copy)}: deep_copy(\"state\", nbytes=800) " \
        "(x20)" in lines, table
    # A line too long for the table is cut after its last site.
    cut = next(line for line in lines if "[blocking_small_read]" in line)
    assert cut.endswith(f" at {short(read)}…"), cut
    assert all(len(line) <= LINE_WIDTH for line in lines if line != cut), \
        table

    merged = read_json(case.path("merged.json"))
    assert merged["program"] == report["program"]
    assert [[site["site"] for site in finding["sites"]]
            for finding in merged["advice"]["findings"]] == [[up, down], [read]]
    assert copy in merged["budget"]["violations"][0]["message"]


def two_ranks(case, sample):
    """Ranks 0 and 1 of a job: rank 1 copies twice as many bytes in the
    solver region and never entered the region "output"."""
    rank1 = json.loads(json.dumps(sample))
    regions = rank1["regions"]
    solver = next(region for region in regions
                  if region["name"] == "Tpetra::CrsMatrix::apply")
    for kinds in (solver["own"], solver["inclusive"],
                  regions[solver["parent"]]["inclusive"]):
        kinds["to_device"]["bytes"] *= 2
    output = next(index for index, region in enumerate(regions)
                  if region["name"] == "output")
    assert all(region["parent"] != output for region in regions), \
        "output has no subregion"
    del regions[output]
    label = "two ranks"
    return write_job(case.path("job"), sample, [0], size=2, label=label) + \
        [write_json(case.path("job/report-1.json"),
                    version3(rank1, 1, 2, label=label))]


def nodes_by_path(roots):
    """{"program/belos_solve/...": metrics} of a literal tree."""
    nodes = {}
    stack = [(root, root["frame"]["name"]) for root in roots]
    while stack:
        node, path = stack.pop()
        nodes[path] = node["metrics"]
        stack.extend((child, f"{path}/{child['frame']['name']}")
                     for child in node["children"])
    return nodes


def region_value(report, path, where, kind, field):
    """A region's number in a report, 0 when the report has no such path."""
    for region in report["regions"]:
        if region["path"] == path:
            return region[where][kind][field]
    return 0


def chained(report, levels, chains=1, minimal=False):
    """`report` with `chains` chains of `levels` regions, each inside the
    last, as a loop that misses a pop makes them: with the paths the plugin
    writes, or, `minimal`, a hostile report's smallest regions."""
    result = small(passing(report))
    regions = result["regions"]
    template = json.dumps(regions[-1])
    for _ in range(chains):
        parent, names = 0, []
        for _ in range(levels):
            names.append("level")
            if minimal:
                region = {"name": "level", "path": "x", "calls": 1,
                          "seconds": 0.0, "transfers": 0, "own": {},
                          "inclusive": {}}
            else:
                region = json.loads(template)
                region.update(name="level", depth=len(names),
                              path="/".join(names))
            region["parent"] = parent
            parent = len(regions)
            regions.append(region)
    return result


def test_deep_trees(case, sample, merge, report_tool):
    # 600 nested regions: the Hatchet tree is written without recursion.
    write_json(case.path("deep.json"), version3(chained(sample, 600), 0, 1))
    status, _, stderr = merge("--format", "hatchet", "-o",
                              case.path("tree.json"), case.path("deep.json"))
    assert status == 0, stderr
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10000)  # json.load recurses; the export did not
    try:
        roots = read_json(case.path("tree.json"))
    finally:
        sys.setrecursionlimit(limit)
    assert "program" + "/level" * 600 in nodes_by_path(roots)
    # A hostile report of 60,000 chained regions: memory linear in the
    # file, in a process of its own with 2 GiB of address space.
    write_json(case.path("hostile.json"),
               version3(chained(sample, 60000, minimal=True), 0, 1))
    for arguments in ([], ["--format", "hatchet", "-o",
                           case.path("hostile-tree.json")]):
        run = subprocess.run(
            [report_tool, *arguments,
             case.path("hostile.json")],
            capture_output=True, text=True, timeout=120,
            # AddressSanitizer's shadow memory needs more address space.
            preexec_fn=None if SANITIZED else lambda: resource.setrlimit(
                resource.RLIMIT_AS, (2 << 30, 2 << 30)))
        assert run.returncode == 0, f"{arguments}: merged\n{run.stderr}"
    # The largest tree the plugin makes, 65,536 regions (in chains of 64
    # levels): its report, beyond 64 MiB, is one.
    write_json(case.path("largest.json"),
               version3(chained(sample, 64, chains=1024), 0, 1))
    assert os.path.getsize(case.path("largest.json")) > 64 << 20
    status, _, stderr = merge(case.path("largest.json"))
    assert status == 0, stderr


def test_hatchet_tree(case, sample, merge):
    files = two_ranks(case, sample)
    reports = [read_json(path) for path in files]
    status, _, stderr = merge("--format", "hatchet", "-o",
                              case.path("tree.json"), *files)
    assert status == 0, stderr
    roots = read_json(case.path("tree.json"))
    assert len(roots) == 1 and roots[0]["frame"] == {"name": "program",
                                                     "type": "region"}
    nodes = nodes_by_path(roots)
    expected = {"program" + (f"/{region['path']}" if region["path"] else "")
                for region in sample["regions"]}
    assert set(nodes) == expected, sorted(nodes)
    names = set(nodes["program"])
    assert all(set(metrics) == names for metrics in nodes.values())
    for name in ("calls", "time", "time (inc)", "to_host bytes (inc)",
                 "to_device count", "sync seconds max", "to_host bytes min"
                 " (inc)"):
        assert name in names, sorted(names)

    path = "belos_solve/Tpetra::CrsMatrix::apply"
    metrics = nodes[f"program/{path}"]
    values = [region_value(report, path, "own", "to_device", "bytes")
              for report in reports]
    assert values[1] == 2 * values[0] > 0
    assert metrics["to_device bytes"] == sum(values) / 2
    assert metrics["to_device bytes min"] == values[0]
    assert metrics["to_device bytes max"] == values[1]
    inclusive = [region_value(report, "belos_solve", "inclusive", "to_device",
                              "bytes") for report in reports]
    assert nodes["program/belos_solve"]["to_device bytes (inc)"] == \
        sum(inclusive) / 2
    # A region one rank never entered counts 0 there.
    calls = region_value(reports[0], "output", "own", "to_device", "count")
    assert nodes["program/output"]["to_device count"] == calls / 2
    assert nodes["program/output"]["to_device count min"] == 0

    metadata = roots[0]["metadata"]
    for key, value in {"program": sample["program"], "ranks": 2,
                       "label": "two ranks", "run_id": reports[0]["run"]["id"],
                       "kokkos_version": reports[0]["kokkos"]["version"],
                       "cunumpy_version": reports[0]["cunumpy_version"],
                       "device": True}.items():
        assert metadata[key] == value, f"{key}: {metadata}"


def hatchet_venv(case, request):
    """The python of the build's hatchet-venv, with llnl-hatchet."""
    return build_venv(case, request, "hatchet-venv", ["llnl-hatchet"],
                      "hatchet")


READ_WITH_HATCHET = """
import json, sys
import hatchet
roots = json.load(open(sys.argv[1]))
graph = hatchet.GraphFrame.from_literal(roots)
frame = graph.dataframe
nodes = {"/".join(node.frame["name"] for node in n.path()):
         {name: float(frame.loc[n, name]) for name in sys.argv[2:]}
         for n in graph.graph.traverse()}
json.dump({"nodes": nodes, "inclusive": sorted(graph.inc_metrics),
           "exclusive": sorted(graph.exc_metrics)}, sys.stdout)
"""


@pytest.mark.ctest(TIMEOUT=900)
def test_hatchet_reads_the_export(case, sample, merge, request):
    python = hatchet_venv(case, request)
    files = two_ranks(case, sample)
    status, _, stderr = merge("--format", "hatchet", "-o",
                              case.path("tree.json"), *files)
    assert status == 0, stderr
    expected = nodes_by_path(read_json(case.path("tree.json")))
    metrics = ["to_device bytes", "to_device bytes (inc)", "calls"]
    read = subprocess.run([python, "-c", READ_WITH_HATCHET,
                           case.path("tree.json"), *metrics],
                          capture_output=True, text=True, timeout=300)
    assert read.returncode == 0, read.stderr
    graph = json.loads(read.stdout)
    assert set(graph["nodes"]) == set(expected), sorted(graph["nodes"])
    for path, values in graph["nodes"].items():
        for name in metrics:
            assert values[name] == pytest.approx(expected[path][name]), \
                (path, name)
    assert "to_host bytes (inc)" in graph["inclusive"] and \
        "to_host bytes" in graph["exclusive"], graph
    solver = graph["nodes"]["program/belos_solve/Tpetra::CrsMatrix::apply"]
    reports = [read_json(path) for path in files]
    assert solver["to_device bytes"] == sum(
        region_value(report, "belos_solve/Tpetra::CrsMatrix::apply", "own",
                     "to_device", "bytes") for report in reports) / 2


def test_thicket_example(case, sample, merge, request):
    # The Thicket script of docs/plugin.md on two runs whose region names
    # repeat under different parents (ArborX's, under "step" and "output").
    python = hatchet_venv(case, request)
    if subprocess.run([python, "-c", "import thicket"],
                      capture_output=True).returncode != 0:
        installed = subprocess.run(
            [python, "-m", "pip", "install", "--disable-pip-version-check",
             "--retries", "1", "--timeout", "20", "llnl-thicket"],
            capture_output=True, text=True, timeout=600)
        if installed.returncode != 0:
            skip(request, "llnl-thicket cannot be installed from PyPI")
    report = small(passing(sample))
    regions = report["regions"]
    for parent in ("step", "output"):
        index = next(i for i, region in enumerate(regions)
                     if region["path"] == parent)
        query = json.loads(json.dumps(regions[index]))
        query.update(name="ArborX::query", parent=index,
                     path=f"{parent}/ArborX::query")
        regions.append(query)
    for label in ("before", "after"):
        write_json(case.path(f"{label}-report.json"),
                   version3(report, 0, 1, label=label))
        status, _, stderr = merge("--format", "hatchet", "-o",
                                  case.path(f"{label}.json"),
                                  case.path(f"{label}-report.json"))
        assert status == 0, stderr
    docs = os.path.join(os.path.dirname(__file__), "..", "..", "docs",
                        "plugin.md")
    with open(docs, encoding="utf-8") as stream:
        text = stream.read()
    script = text.split("With [Thicket]", 1)[1].split("```python\n", 1)[1]
    script = script.split("```", 1)[0]
    run = subprocess.run([python, "-c", script], cwd=case.work,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "program/step/ArborX::query" in run.stdout and \
        "program/output/ArborX::query" in run.stdout, run.stdout


def test_hatchet_format_of_one_run(case, sample, merge, budget):
    """CUNUMPY_REPORT_FORMAT=hatchet: the tree cunumpy-report makes of the
    run's JSON report (the times of another run apart)."""
    run = case.run(["--library-regions"], CUNUMPY_REPORT="tree.json",
                   CUNUMPY_REPORT_FORMAT="hatchet", CUNUMPY_BUDGET=budget)
    assert run.status == 0, run
    ours = read_json(case.path("tree.json"))
    os.makedirs(case.path("one"))
    write_json(case.path("one/report-0.json"), sample)
    status, _, stderr = merge("--format", "hatchet", "-o",
                              case.path("merged.json"), case.path("one"))
    assert status == 0, stderr
    theirs = read_json(case.path("merged.json"))
    mine, other = nodes_by_path(ours), nodes_by_path(theirs)
    assert set(mine) == set(other) and len(mine) > 3, sorted(mine)
    for path, metrics in other.items():
        assert set(mine[path]) == set(metrics), path
        for name, value in metrics.items():
            if "seconds" not in name and "time" not in name:
                assert mine[path][name] == value, (path, name)
    assert {key: value for key, value in ours[0]["metadata"].items()
            if key != "run_id"} == \
        {key: value for key, value in theirs[0]["metadata"].items()
         if key != "run_id"}


def test_unknown_report_format(case, budget):
    """A format cunumpy does not have: one line, and the format of the
    file's name."""
    run = case.run([], CUNUMPY_REPORT="report.json",
                   CUNUMPY_REPORT_FORMAT="csv", CUNUMPY_BUDGET=budget)
    lines = [line for line in run.stderr.splitlines()
             if "CUNUMPY_REPORT_FORMAT" in line]
    assert lines == ['cunumpy: CUNUMPY_REPORT_FORMAT="csv" is not one of '
                     'text, json, hatchet, summary, sarif, junit; using json '
                     'for *.json, sarif for *.sarif, junit for *.xml, else '
                     'text'], run.stderr
    assert case.json("report.json", run)["format"] == "cunumpy-report"


def test_merged_reports_merge_again(case, sample, merge):
    """A job's report merges again: ranks 0-1 and 2-3 merged apart, then
    together, are the 4 ranks merged at once; a rank in two files is
    refused; a merged report's ranks are checked as any member, and a
    claim of two billion ranks costs no more than one."""
    good = passing(sample)
    files = write_job(case.path("job"), good, range(4), size=4)
    for name, part in (("a.json", files[:2]), ("b.json", files[2:]),
                       ("all.json", files)):
        status, _, stderr = merge("--json", case.path(name), *part)
        assert status == 0, stderr
    status, table, stderr = merge("--check", "--json", case.path("ab.json"),
                                  case.path("a.json"), case.path("b.json"))
    assert status == 0 and "check: passed" in table, stderr + table
    assert read_json(case.path("ab.json")) == read_json(case.path("all.json"))
    status, _, stderr = merge(case.path("a.json"), files[1])
    assert status == 2 and "rank 1 already has a report" in stderr, stderr

    merged = read_json(case.path("a.json"))
    for place, value, needle in (
            ("ranks", [[1, 0]], "not a range after the previous one"),
            ("ranks", [[0, 5]], "beyond the job's 4"),
            ("broken", [[3, 3]], "which 'job.ranks' does not"),
            ("ranks", "0-1", "'job.ranks' is \"0-1\"")):
        hostile = json.loads(json.dumps(merged))
        hostile["job"][place] = value
        write_json(case.path("hostile.json"), hostile)
        status, _, stderr = merge(case.path("hostile.json"))
        assert status == 2 and one_line(stderr) and needle in stderr, \
            f"{place}={value}: {stderr}"
    # Two billion ranks, one finding on all but one: as quick as one rank.
    huge = json.loads(json.dumps(merged))
    huge["run"]["size"] = None
    huge["job"]["ranks"] = [[0, 2 ** 31 - 2]]
    huge["advice"]["findings"] = [{
        "rule": "round_trip", "region": "step", "phase": "step",
        "fix": "fix it", "message": "[round_trip] ...", "saving_seconds": 0.5,
        "seconds": 1.0, "count": 4, "calls": 2, "sites": [{"site": "a.cpp:1"}],
        "rank": 0, "ranks": [[0, 2 ** 31 - 2]],
        "estimated_on_ranks": [[1, 2 ** 31 - 2]],
        "over_ranks": {name: {"min": 1, "max": 1, "max_rank": 0, "sum": 1,
                              "mean": 1}
                       for name in ("calls", "events", "saving", "seconds")}}]
    write_json(case.path("huge.json"), huge)
    start = time.monotonic()
    status, table, stderr = merge(case.path("huge.json"))
    assert status == 0 and "saving not estimated on rank(s) 0\n" in table, \
        stderr + table
    assert time.monotonic() - start < 2, f"{time.monotonic() - start:.1f} s"
