"""Recordings of runs (CUNUMPY_RECORD) replayed to the plugin on a machine
without a GPU (tests/tools/cunumpy_replay.cpp, through the fake libcupti of
tests/tools/fake_cuda.cpp): the recordings kept in tests/recordings give the
reports kept beside them and the verdicts their programs had; a run of
fake_cuda_app recorded now gives the same report when replayed; a replay
recorded again is the recording; recordings that cannot stand for their run
(cut, without their end) are refused; CUNUMPY_RECORD's bad paths cost one
line and no file.

What a replay must give as the recorded run did (`summary`): the verdict
and the broken rules (phase, kind, limit, allowed, actual), for the total
and each phase and region the calls and, per kind, count, bytes, blocking,
async and implicit; whether events may be missing; whether the CUDA view
was on, and its counts of records. Not compared: times (the replay runs at its own
pace), call sites (the replay's stack is the driver's), paths, the process,
advice, and whether Kokkos' table of callbacks was watched (no Kokkos in
the replay)."""

import glob
import json
import os
import re
import signal
import stat
import subprocess

import pytest

from plugin_helpers import (EXIT_FROM_SIGNAL_TIMEOUT, SANITIZED,
                            VIOLATION_STATUS, shown)

pytestmark = pytest.mark.program(
    "cunumpy_replay", budget="tests/plugin/fake_cuda_budget.toml")

KIND_FIELDS = ("count", "bytes", "blocking", "async", "implicit")
CUDA_VIEW_FIELDS = ("copy_records", "described", "unmatched",
                    "too_late", "without_record", "migration_records",
                    "migrated_bytes", "dropped_records")


def kinds_of(kinds):
    return {kind: {field: value[field] for field in KIND_FIELDS}
            for kind, value in sorted(kinds.items())}


def summary(report):
    """What a replay must reproduce of a report (see the file's comment)."""
    budget = report["budget"]
    view = report["cuda_view"]
    return {
        "verdict": budget["verdict"],
        "violations": sorted(
            (v["phase"], v["kind"], v["limit"], str(v["allowed"]),
             str(v["actual"])) for v in budget["violations"]),
        "complete": report["complete"],
        "device": report["device"]["present"],
        "total": kinds_of(report["total"]["kinds"]),
        "phases": {p["name"]: {"calls": p["calls"],
                               "kinds": kinds_of(p["kinds"])}
                   for p in report["phases"]},
        "regions": {r["path"]: {"calls": r["calls"],
                                "own": kinds_of(r["own"])}
                    for r in report["regions"]},
        "cuda_view": {field: view[field] for field in CUDA_VIEW_FIELDS} |
                     {"on": view["state"] == "on",
                      "migrations_unseen": bool(view["migrations_unseen"])},
    }


def differences(expected, actual, where=""):
    """The paths at which two summaries differ, with both values."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        found = []
        for key in sorted(set(expected) | set(actual), key=str):
            found += differences(expected.get(key), actual.get(key),
                                 f"{where}/{key}")
        return found
    return [] if expected == actual else [f"{where}: {expected} != {actual}"]


def fake_environment(fake_cuda):
    return {"LD_LIBRARY_PATH": fake_cuda + ":" +
            os.environ.get("LD_LIBRARY_PATH", ""),
            "CUNUMPY_CUPTI_LIBRARY": os.path.join(fake_cuda, "libcupti.so")}


def replay(case, plugin, fake_cuda, recording, **variables):
    """Replays `recording` to the plugin; the report is report.json."""
    return case.run([plugin, recording], CUNUMPY_REPORT="report.json",
                    **fake_environment(fake_cuda), **variables)


def read_lines(path):
    with open(path, encoding="utf-8") as stream:
        return [json.loads(line) for line in stream]


def exits_on_violation(recording):
    """Whether the recorded run asked the plugin to end it with the
    violation status when its budget failed (CUNUMPY_ON_VIOLATION=exit):
    the replay does the same."""
    header = read_lines(recording)[0]
    return header["settings"].get("CUNUMPY_ON_VIOLATION") == "exit"


def check_replay(case, plugin, fake_cuda, recording, report):
    """Replays `recording` and compares with `report`, the recorded run's."""
    run = replay(case, plugin, fake_cuda, recording)
    expected = summary(report)
    budget = report["budget"]
    failed = bool(budget["file"]) and bool(
        budget["violations"] or budget["error"]) and exits_on_violation(
            recording)
    assert run.status == (VIOLATION_STATUS if failed else 0), \
        f"{os.path.basename(recording)}: the replay's status\n{run}"
    replayed = summary(case.json("report.json", run))
    found = differences(expected, replayed)
    assert not found, (f"{os.path.basename(recording)}: the replay differs "
                       "from the recorded run:\n" + "\n".join(found) +
                       f"\n{run}")
    return replayed


def kept(recordings):
    """Every recording kept in tests/recordings (and its directories), with
    the report its run wrote beside it."""
    found = sorted(glob.glob(os.path.join(recordings, "**", "*.jsonl"),
                             recursive=True))
    assert found, f"no recording in {recordings}"
    for recording in found:
        report = recording[:-len(".jsonl")] + ".report.json"
        assert os.path.exists(report), f"{recording} has no report beside it"
        with open(report, encoding="utf-8") as stream:
            yield recording, json.load(stream)


def test_kept_recordings_replay_to_their_reports(case, cupti_built, plugin,
                                                 fake_cuda, recordings):
    """Each recording of tests/recordings, replayed, gives the counts and
    the verdict of the report its run wrote."""
    assert cupti_built
    for recording, report in kept(recordings):
        check_replay(case, plugin, fake_cuda, recording, report)


# What fake_cuda_app's runs give (tests/plugin/test_cuda_copies.py), with
# tests/plugin/fake_cuda_budget.toml and 5 steps: the verdict, and counts
# per kind of the whole run.
PROGRAMS_COPY = {"verdict": "broken", "to_device": 2, "kokkos_own": 3}
FAKE_CUDA_APP_RUNS = {
    "fake_cuda_app": {"verdict": "ok", "to_device": 1, "kokkos_own": 3},
    "fake_cuda_app-pause": {"verdict": "ok", "to_device": 1, "kokkos_own": 3},
    "fake_cuda_app-raw-copy": PROGRAMS_COPY,
    "fake_cuda_app-uvm-copy": PROGRAMS_COPY,
    "fake_cuda_app-host-kernel-copy": PROGRAMS_COPY,
    "fake_cuda_app-thrown-host-kernel": PROGRAMS_COPY,
    "fake_cuda_app-thrown-device-kernel": PROGRAMS_COPY,
    "fake_cuda_app-raw-allocation": PROGRAMS_COPY,
    "fake_cuda_app-header-size-elsewhere": PROGRAMS_COPY,
    "fake_cuda_app-reduce": {"verdict": "broken", "to_host": 5,
                             "kokkos_own": 3},
    "fake_cuda_app-reduce-copy": {"verdict": "broken", "to_host": 5,
                                  "kokkos_own": 3},
    "fake_cuda_app-migration": {"verdict": "broken", "to_device": 1,
                                "kokkos_own": 3, "migration": 1},
}


def test_kept_recordings_of_fake_cuda_app_keep_their_verdicts(
        case, cupti_built, plugin, fake_cuda, recordings):
    """The sequences of tests/programs/fake_cuda_app.cpp, kept as
    recordings: replayed, each has the verdict and the counts its option
    gives (Kokkos' own copies pass; the program's copy where a time window
    would take it for Kokkos', a reduction's result, a migration break
    'integrate'), whatever the reports kept beside them say."""
    assert cupti_built
    for name, expected in FAKE_CUDA_APP_RUNS.items():
        recording = os.path.join(recordings, "fake_cuda_app", name + ".jsonl")
        run = replay(case, plugin, fake_cuda, recording)
        report = case.json("report.json", run)
        assert report["budget"]["verdict"] == expected["verdict"], \
            f"{name}\n{shown(report['budget'])}\n{run}"
        assert run.status == (0 if expected["verdict"] == "ok" else
                              VIOLATION_STATUS), f"{name}\n{run}"
        total = report["total"]["kinds"]
        for kind, count in expected.items():
            if kind != "verdict":
                assert total[kind]["count"] == count, \
                    f"{name}: {kind}\n{shown(total)}"
        if expected["verdict"] == "broken":
            assert {v["phase"] for v in report["budget"]["violations"]} == \
                {"integrate"}, f"{name}\n{shown(report['budget'])}"
        assert report["cuda_view"]["described"] > 0, \
            f"{name}: CUDA's records reached the plugin\n" \
            f"{shown(report['cuda_view'])}"


def record(case, fake_cuda, budget, arguments, name):
    """fake_cuda_app run with the fake CUDA, recorded into <name>.jsonl,
    its report in <name>.report.json."""
    run = case.run(arguments, **fake_environment(fake_cuda),
                   FAKE_CUPTI_REPLAY="1", CUNUMPY_BUDGET=budget,
                   CUNUMPY_ON_VIOLATION="exit",
                   CUNUMPY_RECORD=f"{name}.jsonl",
                   CUNUMPY_REPORT=f"{name}.report.json")
    assert run.status in (0, VIOLATION_STATUS), f"{name}\n{run}"
    assert not [line for line in run.cunumpy_lines()
                if "CUNUMPY_RECORD" in line], f"{name}: recorded\n{run}"
    return case.path(f"{name}.jsonl"), case.json(f"{name}.report.json", run)


LIVE_RUNS = {
    "plain": ["--steps", "5"],
    "raw-copy": ["--steps", "5", "--raw-copy"],
    "thrown-device-kernel": ["--steps", "5", "--thrown-device-kernel"],
    "reduce-copy": ["--steps", "5", "--reduce-copy"],
    "migration": ["--steps", "5", "--migration"],
    "pause": ["--steps", "5", "--pause-ms", "300"],
}


def test_a_recorded_run_replays_to_its_report(case, cupti_built, plugin,
                                              fake_cuda, fake_cuda_app,
                                              budget):
    """fake_cuda_app's runs recorded now, replayed at once: the same
    counts and verdicts, CUDA's records handed over at the end of the run
    (a read) and by the collector's own thread while the program waits
    (--pause-ms), on threads of their own in the replay."""
    assert cupti_built
    for name, arguments in LIVE_RUNS.items():
        recording, report = record(case.__class__(
            case.path(name), fake_cuda_app), fake_cuda, budget, arguments,
            name)
        check_replay(case, plugin, fake_cuda, recording, report)
        lines = read_lines(recording)
        buffers = [line for line in lines[1:] if line["ev"] == "cuda_buffer"]
        assert buffers, f"{name}: CUDA's records are in the recording"
        if name == "pause":
            init_thread = lines[1]["th"]
            assert any(line["th"] != init_thread for line in buffers), \
                f"{name}: a buffer handed over by the collector's thread\n" \
                f"{shown(buffers)}"


def normalized(path):
    """A recording as a replay must write it again: without the times of
    its lines (each replay has its own), its CUDA records' times as the
    number of lines before them (between the same events) and their
    durations, and without what is the process' (its program, pid, start,
    the rule file's path)."""
    lines = read_lines(path)
    header = {key: value for key, value in lines[0].items()
              if key not in ("program", "pid", "started", "budget_file")}
    times = [line["t"] for line in lines[1:]]

    def place(time):
        return None if time is None else sum(1 for t in times if t <= time)

    def record(entry):
        entry = dict(entry)
        start, end = entry.pop("start"), entry.pop("end")
        entry["start_after"] = place(start)
        entry["duration"] = None if end is None or start is None else \
            end - start
        return entry

    result = [header]
    for line in lines[1:]:
        line = {key: value for key, value in line.items() if key != "t"}
        if line["ev"] == "cuda_buffer":
            line["copies"] = [record(copy) for copy in line["copies"]]
            line["migrations"] = [record(m) for m in line["migrations"]]
        result.append(line)
    return result


def same_line(first, second):
    """Two normalized lines are the same, CUDA records' durations within
    their times' printed precision (a replay's times are of another start,
    so end - start may round the other way)."""
    def same_record(a, b):
        a, b = dict(a), dict(b)
        da, db = a.pop("duration"), b.pop("duration")
        return a == b and (da is None) == (db is None) and \
            (da is None or abs(da - db) <= 3e-7)
    if not isinstance(first, dict) or first.keys() != second.keys():
        return first == second
    for key, value in first.items():
        if key in ("copies", "migrations"):
            if len(value) != len(second[key]) or not all(
                    same_record(a, b) for a, b in zip(value, second[key])):
                return False
        elif value != second[key]:
            return False
    return True


def test_a_recorded_replay_is_the_recording(case, cupti_built, plugin,
                                            fake_cuda, recordings,
                                            fake_cuda_app, budget):
    """A replay recorded again (CUNUMPY_RECORD in the replay) writes the
    recording it replayed: the same events, arguments, threads, depths,
    addresses and CUDA records, each record between the same lines."""
    assert cupti_built
    sources = [os.path.join(recordings, "fake_cuda_app", name + ".jsonl")
               for name in ("fake_cuda_app-raw-copy", "fake_cuda_app-migration",
                            "fake_cuda_app-pause")]
    sources.append(record(case.__class__(case.path("live"), fake_cuda_app),
                          fake_cuda, budget,
                          ["--steps", "5", "--header-size-elsewhere"],
                          "live")[0])
    for source in sources:
        again = case.path("again.jsonl")
        run = replay(case, plugin, fake_cuda, source, CUNUMPY_RECORD=again)
        assert run.status in (0, VIOLATION_STATUS), run
        first, second = normalized(source), normalized(again)
        found = [f"line {i + 1}: {a}\n     != {b}"
                 for i, (a, b) in enumerate(zip(first, second))
                 if not same_line(a, b)]
        assert len(first) == len(second) and not found, \
            f"{os.path.basename(source)}: {len(first)} and {len(second)} " \
            "lines\n" + "\n".join(found[:5])


def test_recordings_that_cannot_be_replayed_are_refused(
        case, cupti_built, plugin, fake_cuda, fake_cuda_app, budget):
    """A recording cut at CUNUMPY_RECORD_LIMIT_MB says so in its last line
    and one line on stderr, the run goes on; its replay fails (status 2,
    one line, no report), as does one without its end line (the process was
    killed), of another version, not JSON, or with CUDA's lines but no CUDA
    view: never a replay that passes for a run it does not stand for."""
    assert cupti_built
    recorder = case.__class__(case.path("cut"), fake_cuda_app)
    run = recorder.run(["--steps", "5000"], **fake_environment(fake_cuda),
                       FAKE_CUPTI_REPLAY="1", CUNUMPY_BUDGET=budget,
                       CUNUMPY_RECORD="cut.jsonl",
                       CUNUMPY_RECORD_LIMIT_MB="1",
                       CUNUMPY_REPORT="report.json")
    assert run.status == 0, f"the run goes on\n{run}"
    notes = [line for line in run.cunumpy_lines() if "CUNUMPY_RECORD" in line]
    assert len(notes) == 1 and "was cut" in notes[0] and \
        "limit of 1 MiB" in notes[0], f"one line says so\n{run}"
    assert recorder.json("report.json", run)["total"]["kinds"]["to_device"][
        "count"] == 1, "the report is whole"
    cut = recorder.path("cut.jsonl")
    assert os.path.getsize(cut) <= 1 << 20, "the recording keeps its limit"
    lines = read_lines(cut)
    assert lines[-1]["ev"] == "cut", lines[-1]

    with open(cut, encoding="utf-8") as stream:
        whole = stream.read().splitlines()
    live = record(case.__class__(case.path("whole"), fake_cuda_app), fake_cuda,
                  budget, ["--steps", "5"], "whole")[0]
    with open(live, encoding="utf-8") as stream:
        complete = stream.read().splitlines()
    newer = json.loads(complete[0]) | {"version": 2}
    broken = {
        "cut.jsonl": (whole, "the recording was cut"),
        "no-end.jsonl": (complete[:-1], "it has no end line"),
        "version-2.jsonl": ([json.dumps(newer)] + complete[1:],
                            "a recording of version 2"),
        "not-json.jsonl": (complete[:3] + ["{\"t\": 0.1, \"ev\""] +
                           complete[3:], "line 4 is not JSON"),
        "report.jsonl": ([json.dumps({"format": "cunumpy-report"})],
                         "not a recording of cunumpy's"),
        "no-cuda-view.jsonl": ([line for line in complete
                                if '"ev":"cuda_view"' not in line],
                               "no line says the CUDA view was on"),
    }
    for name, (text, why) in broken.items():
        path = case.write(name, "\n".join(text) + "\n")
        if os.path.exists(case.path("report.json")):
            os.unlink(case.path("report.json"))
        run = replay(case, plugin, fake_cuda, path)
        assert run.status == 2, f"{name}: refused\n{run}"
        assert why in run.stderr and len(run.stderr.splitlines()) == 1, \
            f"{name}: one line says why\n{run}"
        assert not os.path.exists(case.path("report.json")), \
            f"{name}: no report stands for the run\n{run}"


def test_hostile_record_paths(case, cupti_built, fake_cuda, fake_cuda_app,
                              budget):
    """CUNUMPY_RECORD naming what must not be written (a FIFO, a directory,
    /dev/full, the report, the rule file, nothing at all) costs one line
    naming it, and the run and its report go on; %r is the MPI rank, as in
    the other outputs; without CUNUMPY_RECORD the plugin writes no file but
    the report."""
    assert cupti_built
    recorder = case.__class__(case.path("runs"), fake_cuda_app)
    fifo = recorder.path("fifo")
    os.mkfifo(fifo)
    os.mkdir(recorder.path("directory"))
    cases = {
        fifo: "it is a FIFO",
        recorder.path("directory"): "it is a directory",
        "/dev/full": "it is not a regular file",
        "report.json": "it is also CUNUMPY_REPORT",
        budget: "it is also CUNUMPY_BUDGET",
        "": "is empty",
    }
    for path, problem in cases.items():
        run = recorder.run(["--steps", "3"], **fake_environment(fake_cuda),
                           FAKE_CUPTI_REPLAY="1", CUNUMPY_BUDGET=budget,
                           CUNUMPY_RECORD=path, CUNUMPY_REPORT="report.json")
        assert run.status == 0, f"{path!r}: the run goes on\n{run}"
        notes = [line for line in run.cunumpy_lines()
                 if "CUNUMPY_RECORD" in line]
        assert len(notes) == 1 and problem in notes[0], \
            f"{path!r}: one line names the problem\n{run}"
        report = recorder.json("report.json", run)
        assert report["total"]["kinds"]["to_device"]["count"] == 1, \
            f"{path!r}: the report is whole\n{shown(report['total'])}"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    with open(budget, encoding="utf-8") as stream:
        assert stream.read().startswith("# tests/programs/fake_cuda_app"), \
            "the rule file is untouched"

    ranked = case.__class__(case.path("ranked"), fake_cuda_app)
    run = ranked.run(["--steps", "3"], **fake_environment(fake_cuda),
                     FAKE_CUPTI_REPLAY="1", PMI_RANK="3",
                     CUNUMPY_RECORD="run-%r.jsonl")
    assert run.status == 0 and os.listdir(ranked.work) == ["run-3.jsonl"], \
        f"%r is the rank\n{os.listdir(ranked.work)}\n{run}"

    quiet = case.__class__(case.path("quiet"), fake_cuda_app)
    run = quiet.run(["--steps", "3"], **fake_environment(fake_cuda),
                    FAKE_CUPTI_REPLAY="1", CUNUMPY_BUDGET=budget,
                    CUNUMPY_REPORT="report.json")
    assert run.status == 0, run
    assert os.listdir(quiet.work) == ["report.json"], \
        f"no file but the report\n{os.listdir(quiet.work)}"


def test_recorded_kokkos_programs_replay_to_their_reports(
        case, cupti_built, plugin, fake_cuda, legacy_app, legacy_budget,
        hostile_program, library_programs):
    """Kokkos programs without CUDA's record, recorded and replayed: the
    legacy example (DualViews, 100 steps, a copy in the step; a run that
    exits without Kokkos::finalize, its report written at the exit); what
    the plugin's tests of hostile programs do with threads: a helper thread
    with no region of its own, a pool thread of a simulation thread, threads
    in different regions (incomplete), a region never popped; and programs
    that call cunumpy's library (the C++ conversion tests, the Python time
    loop on the fake device), whose calls, phases and device spaces are
    recorded and replayed with the Kokkos events inside them."""
    assert cupti_built
    hostile_rules = case.write(
        "hostile.toml", "[phases.step]\noptional = true\n[phases.output]\n"
        "allow.to_device = { max_count = 10 }\n")
    runs = {
        "legacy": (legacy_app, ["--copy-in-step"], legacy_budget),
        "legacy-exit": (legacy_app, ["--exit-without-finalize",
                                     "--copy-in-step"], legacy_budget),
        "helper-thread": (hostile_program, ["helper-thread"], hostile_rules),
        "driver-thread": (hostile_program, ["driver-thread"], hostile_rules),
        "threads-in-different-regions": (
            hostile_program, ["threads-in-different-regions"], hostile_rules),
        "unpopped": (hostile_program, ["unpopped"], hostile_rules),
        "control-characters": (hostile_program,
                               ["region", "solve\n\x01\x7fé\"\\"],
                               hostile_rules),
    }
    runs = {name: (program, arguments, rules, {})
            for name, (program, arguments, rules) in runs.items()}
    for name, (command, variables) in library_programs.items():
        runs[name] = (command[0], command[1:], None, variables)
    for name, (program, arguments, rules, variables) in runs.items():
        recorder = case.__class__(case.path(name), program)
        run = recorder.run(arguments, CUNUMPY_BUDGET=rules,
                           CUNUMPY_ON_VIOLATION="exit",
                           CUNUMPY_RECORD="run.jsonl",
                           CUNUMPY_REPORT="report.json", **variables)
        assert run.status in (0, VIOLATION_STATUS), f"{name}\n{run}"
        report = recorder.json("report.json", run)
        replayed = check_replay(case, plugin, fake_cuda,
                                recorder.path("run.jsonl"), report)
        threads = {line["th"] for line in
                   read_lines(recorder.path("run.jsonl"))[1:]}
        if "thread" in name:
            assert len(threads) > 1, f"{name}: events of several threads"
        if name in library_programs:
            events = {line["ev"] for line in
                      read_lines(recorder.path("run.jsonl"))[1:]}
            # Without a device (Kokkos 4.3+ has no fake one) the C++
            # conversion tests that copy are skipped: no call of cunumpy's
            # that copies.
            called = {"register_device_space"} | (
                {"api_enter"} if report["total"]["transfers"] else set())
            assert called <= events, \
                f"{name}: cunumpy's calls are in the recording\n{events}"
            assert sum(kind["count"] for kind in
                       replayed["total"].values()) > 0 or \
                not report["total"]["transfers"], \
                f"{name}: copies counted\n{shown(replayed)}"


def test_exit_from_a_signal_handler_while_recording(case, cupti_built, plugin,
                                                    fake_cuda, hostile_program):
    """SIGALRM's handler calls exit(0) wherever it lands, sometimes while a
    line of the recording is being written: the process ends, never waits
    for ever; the recording either has its end line and replays to the
    report, or has none and its replay is refused."""
    assert cupti_built
    rules = case.write("budget.toml", "[phases.step]\noptional = true\n")
    ended = refused = aborted = 0
    for run_index in range(24):
        delay = 10000 + 397 * run_index
        recorder = case.__class__(case.path(f"run{run_index}"),
                                  hostile_program)
        try:
            run = recorder.run(["exit-from-signal", str(delay)],
                               timeout=EXIT_FROM_SIGNAL_TIMEOUT,
                               CUNUMPY_BUDGET=rules,
                               CUNUMPY_ON_VIOLATION="exit",
                               CUNUMPY_RECORD="run.jsonl",
                               CUNUMPY_REPORT="report.json")
        except subprocess.TimeoutExpired:
            if not SANITIZED:
                raise
            # AddressSanitizer's allocator: an exit handler's allocation
            # waits for the allocator's lock that the interrupted
            # allocation holds (glibc's aborts instead, as below).
            aborted += 1
            continue
        # Copies were made in "step", unless the signal came in the first
        # one (which then never happened). exit() from a handler that
        # interrupted malloc may make glibc abort in the next malloc, the
        # program's own or an exit handler's: the process still ends.
        if run.status == -signal.SIGABRT and "malloc" in run.stderr:
            aborted += 1
            continue
        assert run.status in (0, VIOLATION_STATUS), f"the run ends\n{run}"
        with open(recorder.path("run.jsonl"), encoding="utf-8") as stream:
            last = stream.read().splitlines()[-1]
        if json.loads(last).get("ev") == "end":
            ended += 1
            check_replay(case, plugin, fake_cuda, recorder.path("run.jsonl"),
                         recorder.json("report.json", run))
        else:
            refused += 1
            replayed = replay(case, plugin, fake_cuda,
                              recorder.path("run.jsonl"))
            assert replayed.status == 2 and "no end line" in replayed.stderr, \
                f"refused\n{replayed}"
            notes = [line for line in run.cunumpy_lines()
                     if "CUNUMPY_RECORD" in line]
            assert len(notes) <= 1, f"at most one line says so\n{run}"
    assert ended + refused + aborted == 24 and ended + refused >= 12
