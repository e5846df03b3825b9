#!/usr/bin/env python3
"""Checks the advice an example prints: the examples written the right way
get no finding but, at most, pageable-memory ones whose estimated saving is
at least the default min_saving_seconds (1 ms; docs/advice.md), or whose
saving is not estimated because no copy through page-locked memory was
seen (the fake device has none); the wrong-way loop of time_loop gets one
round trip, at the lines of its two conversions.

    check_example.py time_loop|budget_time_loop|cg_poisson PROGRAM SOURCE

Exit status 0 when the advice is as expected, 1 when not, 77 (skipped) on a
build with no device distinct from the host (nothing is copied there).
"""

import re
import subprocess
import sys

SKIPPED = 77
# Findings the right way may have: the host side of its copies is pageable.
ALLOWED = {"pageable_memory"}
# AdviceOptions::min_saving_seconds, the default the examples use.
MIN_SAVING_SECONDS = 1e-3
UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def sections(output):
    """{title: [finding lines]} of every "<title> advice: N finding(s)" (or
    "advice: N finding(s)") block of the output."""
    result = {}
    lines = output.splitlines()
    for index, line in enumerate(lines):
        match = re.match(r"^(.*?)\s*advice: (\d+) finding\(s\)$", line)
        if not match:
            continue
        found = lines[index + 1:index + 1 + int(match.group(2))]
        if not all(entry.startswith("  [") for entry in found):
            sys.exit(f"check_example: the findings of '{line}' are not "
                     f"listed after it:\n{output}")
        result[match.group(1)] = found
    return result


def rule(finding):
    return re.match(r"^  \[([a-z_]+)\]", finding).group(1)


def saving(finding):
    """The estimated saving of a finding line in seconds, or None when it
    says "saving not estimated"."""
    if "; saving not estimated (" in finding:
        return None
    match = re.search(r"; saves about ([0-9.]+) (s|ms|us|ns)[;( ]", finding)
    if match is None:
        sys.exit(f"check_example: no saving in the finding '{finding}'")
    return float(match.group(1)) * UNITS[match.group(2)]


def pageable_problem(finding):
    """Why a right-way pageable finding is not one advice may list: its
    saving is below the threshold, or not estimated for another reason
    than the missing page-locked reference."""
    value = saving(finding)
    if value is None:
        if "no blocking page-locked copy" not in finding:
            return f"a pageable finding not estimated for another reason: " \
                   f"{finding}"
        return None
    # time_text rounds to 3 significant digits.
    if value < MIN_SAVING_SECONDS * (1 - 5e-3):
        return f"a pageable finding below the threshold of " \
               f"{MIN_SAVING_SECONDS} s: {finding}"
    return None


def source_line(source, text):
    with open(source, encoding="utf-8") as stream:
        numbers = [number for number, line in enumerate(stream, 1)
                   if text in line]
    if len(numbers) != 1:
        sys.exit(f"check_example: '{text}' must be once in {source}: {numbers}")
    return numbers[0]


def main():
    example, program, source = sys.argv[1:4]
    run = subprocess.run([program], capture_output=True, text=True,
                         timeout=600)
    output = run.stdout + run.stderr
    if "no device distinct from the host" in output:
        print("skipped: this build has no device distinct from the host")
        return SKIPPED
    if run.returncode != 0:
        print(f"{example} failed with status {run.returncode}:\n{output}")
        return 1
    found = sections(output)
    problems = []
    right = {"time_loop": "right way"}.get(example, "")
    if right not in found:
        problems.append(f"no '{right} advice:' block")
    for finding in found.get(right, []):
        if rule(finding) not in ALLOWED:
            problems.append(f"a finding the right way must not have: "
                            f"{finding}")
        elif problem := pageable_problem(finding):
            problems.append(problem)
    if example == "time_loop":
        up = source_line(source, "// up every step")
        down = source_line(source, "// and down again")
        wrong = found.get("wrong way", [])
        if len(wrong) != 1 or rule(wrong[0]) != "round_trip":
            problems.append(f"the wrong way has one finding, round_trip: "
                            f"{wrong}")
        elif not re.search(rf"at \S*time_loop\.cpp:{up}, then "
                           rf"\S*time_loop\.cpp:{down}: ", wrong[0]):
            problems.append(f"the round trip names lines {up} and {down}: "
                            f"{wrong[0]}")
    if problems:
        print("\n".join(problems) + "\n--- output ---\n" + output)
        return 1
    print(f"{example}: advice as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
