"""What real programs do that the plugin must survive without a false
"ok": Kokkos initialized twice, tools paused or cleared, copy callbacks
taken away for a moment, a tool that swallows the ends of copies, exit
paths that skip handlers, names with control characters, and no device at
all (tests/programs/hostile_program.cpp). The rule file forbids every copy
in the region "step"."""

import os
import re
import subprocess
import time

import pytest

from plugin_helpers import (EXIT_FROM_SIGNAL_TIMEOUT, SANITIZED,
                            VIOLATION_STATUS, shown)

pytestmark = pytest.mark.program("hostile_program")

RULES = "[phases.step]\noptional = true\n"


def run_case(case, *arguments, rules=RULES, **variables):
    budget = case.write("budget.toml", rules)
    variables.setdefault("CUNUMPY_ON_VIOLATION", "exit")
    run = case.run(list(arguments), CUNUMPY_REPORT="report.json",
                   CUNUMPY_BUDGET=budget, **variables)
    return run, case.json("report.json", run)


def check_incomplete(run, report, why):
    """The verdict fails, as incomplete, and says why."""
    assert run.status == VIOLATION_STATUS, f"the run fails\n{run}"
    assert (report["budget"]["verdict"] == "incomplete" and
            not report["budget"]["ok"] and not report["complete"]), \
        f"incomplete, not ok\n{shown(report['budget'])}"
    reasons = (why,) if isinstance(why, str) else why
    assert any(reason in loss for loss in report["losses"]
               for reason in reasons), \
        f"the report says why: {why}\n{shown(report['losses'])}"
    assert any("INCOMPLETE" in line for line in run.cunumpy_lines()), \
        f"stderr says so\n{run}"


def test_reinitialized(case, kokkos_major):
    if kokkos_major >= 4:
        pytest.skip("Kokkos 4 refuses a second Kokkos::initialize")
    run, report = run_case(case, "reinitialize")
    check_incomplete(run, report, "initialized again")


def test_tools_paused(case):
    run, report = run_case(case, "pause-tools")
    check_incomplete(run, report, "tools")


def test_callbacks_cleared(case):
    run, report = run_case(case, "clear-callbacks")
    check_incomplete(run, report, "tools")


def test_copy_callbacks_cleared_for_a_while(case, kokkos_major):
    run, report = run_case(case, "clear-copy-callbacks")
    if report["kokkos"]["interface"] < 20210623:
        # Kokkos 3.4 fences nothing inside its copies: only the watch of
        # Kokkos' table may tell that the callbacks were taken away, when a
        # check (at most every 10 ms) falls in the moment they were
        # (docs/budgets.md): ok, or incomplete, never broken.
        assert report["budget"]["verdict"] in ("ok", "incomplete"), \
            shown(report["budget"])
        return
    # Told by the copies' fences, or first by the watch of Kokkos' table
    # (at most every 10 ms), whichever comes first.
    check_incomplete(run, report, ("deep-copy callbacks were taken away",
                                   "(the callback was removed)"))


def test_region_callbacks_dropped_for_a_step(case):
    # No push nor pop of "step" reaches cunumpy; its copy does, and shows
    # that the region callbacks were missing from Kokkos' table.
    run, report = run_case(case, "drop-region-callbacks")
    check_incomplete(run, report, "push_region")


def test_half_forwarder(case):
    # A tool forwards the begins of the copies and swallows their ends:
    # cunumpy learns that it forwards one callback, never the other.
    run, report = run_case(case, "half-forwarder")
    check_incomplete(run, report, "replaced cunumpy's")


def test_helper_thread(case):
    # A thread that pushes no region counts in the regions of the thread
    # that initialized Kokkos: its copy breaks the rule of "step".
    run, report = run_case(case, "helper-thread")
    assert run.status == VIOLATION_STATUS, f"the run fails\n{run}"
    assert report["budget"]["verdict"] == "broken", shown(report["budget"])
    assert [v["phase"] for v in report["budget"]["violations"]] == ["step"], \
        shown(report["budget"])


def test_driver_thread(case):
    # Kokkos initialized on the main thread, the simulation on another,
    # which hands the copy to a pool thread with no region of its own: the
    # copy counts in the simulation's "step".
    run, report = run_case(case, "driver-thread")
    assert run.status == VIOLATION_STATUS, f"the run fails\n{run}"
    assert report["budget"]["verdict"] == "broken", shown(report["budget"])
    assert [v["phase"] for v in report["budget"]["violations"]] == ["step"], \
        shown(report["budget"])


def test_threads_in_different_regions(case):
    # The main thread in "output" (copies allowed), the simulation thread in
    # "step": the pool thread's copy belongs to one of them, not known which.
    rules = RULES + "[phases.output]\nallow.to_device = { max_count = 10 }\n"
    run, report = run_case(case, "threads-in-different-regions", rules=rules)
    check_incomplete(run, report, "which phase they belong to is not known")


def test_region_never_popped(case):
    # A region left open at the end, with a phase at or below it: the
    # events after the missing pop may count in that phase.
    rules = RULES + "[phases.output]\nallow.to_device = { max_count = 10 }\n"
    run, report = run_case(case, "unpopped", rules=rules)
    check_incomplete(run, report,
                     "region 'step' (main thread) was never popped")
    assert report["open_regions"] == ["'step' (main thread)"], shown(report)


def test_unpopped_loop(case):
    # 4,000 steps that each miss a pop nest 4,000 deep: the tree is cut at
    # 64 levels, said once, and the end of the run stays small and quick.
    started = time.monotonic()
    run, report = run_case(case, "unpopped-loop", "4000")
    seconds = time.monotonic() - started
    check_incomplete(run, report, "was never popped")
    assert seconds < 60, f"the end of the run is linear ({seconds:.0f} s)"
    size = os.path.getsize(case.path("report.json"))
    assert size < 1 << 20, f"so is the report ({size} bytes)"
    cut = report["region_tree_cut"]
    assert cut is not None and cut.count("/") == 63, shown(cut)
    assert any("the tree of regions is cut at 64 levels" in line
               for line in run.cunumpy_lines()), f"said once\n{run}"
    assert len(report["open_regions"]) <= 128, shown(report["open_regions"])


def test_exit_status_paths(case):
    run, report = run_case(case, "exit", "exit5")
    assert run.status == 5, f"the program's own status stands\n{run}"
    assert report["budget"]["verdict"] == "broken", shown(report["budget"])
    assert not any("ends with status" in line for line in run.cunumpy_lines()),\
        f"cunumpy decided nothing, so says nothing of the status\n{run}"
    run, report = run_case(case, "exit", "quick_exit0")
    assert run.status == VIOLATION_STATUS, f"quick_exit(0) is failed\n{run}"
    assert any("ends with status 3" in line for line in run.cunumpy_lines()), \
        f"and says so\n{run}"
    run, report = run_case(case, "exit", "_exit0")
    assert run.status == 0, f"_exit skips every handler\n{run}"
    assert report["budget"]["verdict"] == "broken", shown(report["budget"])
    assert any("BROKEN" in line for line in run.cunumpy_lines()), run
    assert not any("ends with status" in line for line in run.cunumpy_lines()),\
        f"no promise cunumpy cannot keep\n{run}"
    docs = os.path.join(os.path.dirname(__file__), "..", "..", "docs",
                        "plugin.md")
    with open(docs, encoding="utf-8") as stream:
        table = stream.read().split("### Exit status", 1)[1].split("##", 1)[0]
    assert re.search(r"^\| the program ends with `_exit\(0\)`.*\| 0", table,
                     re.MULTILINE), \
        "docs/plugin.md's table of exit statuses says what _exit(0) gives"


def test_exit_from_a_signal_handler(case):
    # SIGALRM's handler calls exit(0) wherever it lands, sometimes while
    # cunumpy holds its lock on that thread: the process ends, and fails.
    budget = case.write("budget.toml", RULES)
    stuck = 0
    for run_index in range(24):
        delay = 2000 + 397 * run_index
        try:
            run = case.run(["exit-from-signal", str(delay)],
                           timeout=EXIT_FROM_SIGNAL_TIMEOUT,
                           CUNUMPY_BUDGET=budget, CUNUMPY_ON_VIOLATION="exit")
        except subprocess.TimeoutExpired:
            if not SANITIZED:
                raise
            # AddressSanitizer's allocator: an exit handler's allocation
            # waits for the allocator's lock that the interrupted
            # allocation holds.
            stuck += 1
            continue
        assert run.status == VIOLATION_STATUS, f"the run fails\n{run}"
        lines = run.cunumpy_lines()
        assert any("no report: the process ended from a signal handler" in
                   line or "BROKEN" in line for line in lines), run
    assert stuck <= 12, f"{stuck} of 24 runs never ended"


def test_exit_between_the_begin_and_end_of_a_copy(case):
    # The process ends (exit or quick_exit from a signal handler) in the
    # middle of the run's only copy, in "step": that copy counts, and fails
    # the budget.
    for how in ["exit", "quick_exit"]:
        run, report = run_case(case, "exit-in-copy", how)
        assert run.status == VIOLATION_STATUS, f"{how}: the run fails\n{run}"
        # (After quick_exit the main thread is still there, in "step": the
        # report also says that region was never popped.)
        assert report["budget"]["verdict"] == "broken" and \
            (report["complete"] or how == "quick_exit"), \
            f"{how}: {shown(report['budget'])}"
        assert report["total"]["kinds"]["to_device"]["count"] == 1 and \
            report["total"]["kinds"]["to_device"]["bytes"] == 64, \
            f"{how}: {shown(report['total'])}"


def test_empty_variables(case):
    # A variable set to nothing is one line on stderr, whatever its kind.
    budget = case.write("budget.toml", RULES)
    run = case.run(["region", "solve"], CUNUMPY_BUDGET=budget,
                   CUNUMPY_ON_VIOLATION="")
    assert ['cunumpy: CUNUMPY_ON_VIOLATION="" is not one of warn, exit; '
            'using warn'] == [line for line in run.cunumpy_lines()
                              if '=""' in line], run
    run = case.run(["region", "solve"], CUNUMPY_BUDGET="",
                   CUNUMPY_ON_VIOLATION="exit")
    assert ['cunumpy: CUNUMPY_BUDGET="" is empty, not a TOML file; using '
            'none'] == [line for line in run.cunumpy_lines()
                        if '=""' in line], run
    for name in ["CUNUMPY_REPORT", "CUNUMPY_TRACE", "CUNUMPY_LABEL",
                 "CUNUMPY_RUN_ID", "CUNUMPY_ADVISE", "CUNUMPY_BACKTRACE"]:
        run = case.run(["region", "solve"], CUNUMPY_BUDGET=budget,
                       **{name: ""})
        lines = [line for line in run.cunumpy_lines()
                 if line.startswith(f'cunumpy: {name}=""')]
        assert len(lines) == 1, f"{name}: one line\n{run}"


def test_misspelt_variables(case):
    # Each CUNUMPY_* variable cunumpy does not read is one line, once,
    # naming the closest one it reads; the known ones are not named.
    budget = case.write("budget.toml", RULES)
    run = case.run(["region", "solve"], CUNUMPY_BUDGET=budget,
                   CUNUMPY_BUGDET=budget, CUNUMPY_REPROT="report.txt",
                   CUNUMPY_BACKEND="kokkos",
                   **{"CUNUMPY_\nFORGED": "1"})
    lines = [line for line in run.cunumpy_lines()
             if "is not a variable cunumpy reads" in line]
    # A name with a newline cannot forge a line: it shows escaped.
    forged = [line for line in lines if "CUNUMPY_\\x0aFORGED is not" in line]
    assert len(forged) == 1, run
    lines.remove(forged[0])
    assert sorted(lines) == [
        "cunumpy: CUNUMPY_BUGDET is not a variable cunumpy reads, and is "
        "ignored; did you mean CUNUMPY_BUDGET? (docs/plugin.md#environment-"
        "variables lists them)",
        "cunumpy: CUNUMPY_REPROT is not a variable cunumpy reads, and is "
        "ignored; did you mean CUNUMPY_REPORT? (docs/plugin.md#environment-"
        "variables lists them)"], run
    assert not os.path.exists(case.path("report.txt")), run


def test_control_characters_in_names(case):
    # Without a budget the summary lists the regions that copied, by path.
    forged = "cunumpy: budget budget.toml: ok (1 rule(s))"
    name = "solve\n" + forged + "\r"
    run = case.run(["region", name])  # the summary on stderr
    assert run.status == 0, run
    lines = run.stderr.splitlines()
    assert not any(line.startswith(forged) for line in lines), \
        f"a name cannot forge a line of cunumpy's\n{run}"
    assert any("'step/solve\\x0a" + forged + "\\x0d'" in line
               for line in lines), f"the name shows, escaped\n{run}"
    run = case.run(["region", name], CUNUMPY_REPORT="report.json")
    report = case.json("report.json", run)
    assert report["regions"][-1]["name"] == name, \
        "the JSON keeps the name as it is"


def test_no_device(case):
    run, report = run_case(case, "no-device")
    assert run.status == VIOLATION_STATUS, f"nothing checked fails\n{run}"
    budget = report["budget"]
    assert (budget["verdict"] == "unchecked" and not budget["ok"] and
            not report["device"]["present"] and
            "no device memory space in this program (backends: " in
            report["device"]["reason"]), shown(budget)
    assert any("NOT CHECKED: no device memory space in this program" in line
               for line in run.cunumpy_lines()), run
    # Kokkos 3 declares its default execution space by the mangled name of
    # its type (N6Kokkos6SerialE): the report names it as Kokkos 4 does.
    assert report["kokkos"]["backends"] and all(
        re.fullmatch(r"[A-Za-z]+", name)
        for name in report["kokkos"]["backends"]), shown(report["kokkos"])
    run, report = run_case(case, "no-device", CUNUMPY_ALLOW_NO_DEVICE="1")
    assert run.status == 0, f"allowed on a CPU-only job\n{run}"
    budget = report["budget"]
    assert (budget["verdict"] == "ok" and budget["ok"] and
            any("no copy was checked" in note for note in budget["notes"])), \
        shown(budget)


def test_two_launches_in_one_batch_job(case, report_tool):
    # Two mpiruns in one Slurm job, 2 ranks each: the second's rank 1
    # writes no report (the plugin not loaded there). Rank 1's report of
    # the first launch must not pass for it.
    budget = case.write("budget.toml", RULES)

    def launch(launch_id, ranks):
        for rank in ranks:
            run = case.run(["no-device"], CUNUMPY_REPORT="reports/r-%r.json",
                           CUNUMPY_BUDGET=budget, CUNUMPY_ALLOW_NO_DEVICE="1",
                           SLURM_JOB_ID="4242",
                           SLURM_NTASKS="2", SLURM_PROCID=str(rank),
                           OMPI_MCA_ess_base_jobid=launch_id)
            assert run.status == 0, run
    os.makedirs(case.path("reports"), exist_ok=True)
    check = [report_tool, "--check", case.path("reports")]
    launch("4242001", [0, 1])
    run = case.run(command=check)
    assert run.status == 0, f"one launch's reports pass\n{run}"
    launch("4242002", [0])
    run = case.run(command=check)
    assert run.status != 0 and "different runs" in run.stderr, \
        f"the reports of two launches are refused\n{run}"


def test_messages_tell_one_story(case, report_tool):
    # A broken rule and an uncertain placement: each heading counts what it
    # lists, as the verdict line counts the rules.
    rules = RULES + "[phases.output]\n"
    run = case.run(["threads-in-different-regions"],
                   CUNUMPY_BUDGET=case.write("budget.toml", rules))
    lines = run.cunumpy_lines()
    assert any(": BROKEN, 1 broken rule(s) (and events may be missing)" in
               line for line in lines), run
    assert "cunumpy: broken rules (1):" in lines, run
    assert "cunumpy: cannot be sure (1):" in lines, run
    # No device and no budget: the count says that no copy could be one,
    # and advice does not suggest hashing contents, which finds nothing.
    run = case.run(["no-device"], CUNUMPY_REPORT="report.txt")
    text = case.read("report.txt")
    assert "total (no device memory space in this program" in text, text
    assert "CUNUMPY_ADVISE=contents" not in case.without_paths(text), text
    run = case.run(["no-device"])
    assert "no copy could be a transfer" in run.cunumpy_lines()[0], run
    # cunumpy-report on a run without a budget: one story.
    run = case.run(["no-device"], CUNUMPY_REPORT="report.json")
    run = case.run(command=[report_tool,
                            case.path("report.json")])
    assert "budget: no rank broke it" not in run.stdout, run
    assert "budget: none on any rank" in run.stdout, run
    assert "no device on rank(s) 0: no device memory space" in run.stdout, run


def test_two_kokkos_in_one_process(case):
    # Two Python packages, each with its own Kokkos: both versions show.
    run, report = run_case(case, "second-kokkos", "9.8.7")
    versions = report["kokkos"]["versions"]
    assert len(versions) == 2 and versions[1] == "9.8.7", \
        shown(report["kokkos"])
    assert report["kokkos"]["version"] == ", ".join(versions), \
        shown(report["kokkos"])
