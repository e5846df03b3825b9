#!/usr/bin/env python3
"""Keeps the examples of README.md true: their code is the code of files
that the build compiles, and their output is what running them prints.

    readme_examples.py README --source-dir DIR [--path README_PATH=REAL]...

Two HTML comments mark what is checked:

  <!-- example: FILE -->  or  <!-- example: FILE from "TEXT" -->
      before a code block: the block is FILE (relative to the source
      directory), whole or from its first line that starts with TEXT.
  <!-- output -->  or  <!-- output: exit status N -->
      before a console block: its first lines are commands ("$ ...", a
      line ending in "\\" goes on on the next), run by bash in the source
      directory; the rest is what they print (stdout and stderr), and the
      exit status is N (default 0).

--path maps a path or command the README writes (build/examples/...,
python3) to the one of this build; a command that still names build/
after the mapping is an error. Before the comparison, both outputs have
paths reduced to ".../" and their last component, and durations and
bandwidths replaced by placeholders; the run's output loses the warning
that Kokkos 4 and 5 print for KOKKOS_PROFILE_LIBRARY (the README sets it
for Kokkos before 3.7); nothing else. A difference prints
a unified diff. Exit status 0 when all match, 1 when one does not, 77
(skipped) when a build without a device (nor a fake one) cannot print
what the README shows.
"""

import argparse
import difflib
import os
import re
import subprocess
import sys

SKIPPED = 77
SKIP_MARKS = ("no device distinct from the host", "there is no fake device",
              "no CUDA device is usable here",
              "no device memory space in this program")

# What Kokkos 4 and 5 print at every run when KOKKOS_PROFILE_LIBRARY is set.
KOKKOS_WARNING = re.compile(r"^Warning: environment variable "
                            r"'KOKKOS_PROFILE_LIBRARY' is deprecated\.")
MARKER = re.compile(r"^<!--\s*(example|output)\b\s*:?\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(```+|~~~+)")
# A path with at least one "/": absolute, relative or shortened (".../name").
PATH = re.compile(r"(?<![\w.+~/-])(?:\.\.\.|[\w.+~-]*)(?:/[\w.+~-]+)+")
DURATION = re.compile(r"\b\d+(?:\.\d+)?(?:e[-+]?\d+)? ?(?:ns|us|µs|ms|s)\b")
BANDWIDTH = re.compile(r"\b\d+(?:\.\d+)? ?[kKMGT]?i?B/s\b")


def blocks(readme):
    """(line number, kind, argument, block lines) of every marked block."""
    lines = readme.splitlines()
    found = []
    index = 0
    while index < len(lines):
        marker = MARKER.match(lines[index])
        index += 1
        if not marker:
            continue
        start = index
        while index < len(lines) and not lines[index].strip():
            index += 1
        fence = FENCE.match(lines[index]) if index < len(lines) else None
        if not fence:
            sys.exit(f"README.md:{start}: '{marker.group(0)}' is not followed "
                     "by a fenced code block")
        body_start = index + 1
        index = body_start
        while index < len(lines) and not lines[index].startswith(
                fence.group(1)):
            index += 1
        if index == len(lines):
            sys.exit(f"README.md:{body_start}: the code block never ends")
        found.append((start, marker.group(1), marker.group(2),
                      lines[body_start:index]))
        index += 1
    return found


def expected_code(source_dir, argument, where):
    match = re.fullmatch(r'(\S+)(?:\s+from\s+"(.*)")?', argument)
    if not match:
        sys.exit(f"README.md:{where}: expected <!-- example: FILE --> or "
                 f'<!-- example: FILE from "TEXT" -->, got {argument!r}')
    path = os.path.join(source_dir, match.group(1))
    with open(path, encoding="utf-8") as file:
        lines = file.read().splitlines()
    if match.group(2) is not None:
        starts = [i for i, line in enumerate(lines)
                  if line.startswith(match.group(2))]
        if not starts:
            sys.exit(f"README.md:{where}: no line of {match.group(1)} starts "
                     f"with {match.group(2)!r}")
        lines = lines[starts[0]:]
    return match.group(1), lines


def split_console(lines, where):
    """The commands ("$ " lines and their continuations) and the output."""
    commands = []
    index = 0
    while index < len(lines) and lines[index].startswith("$ "):
        command = lines[index][2:]
        while command.endswith("\\") and index + 1 < len(lines):
            index += 1
            command += "\n" + lines[index]
        commands.append(command)
        index += 1
    if not commands:
        sys.exit(f"README.md:{where}: an output block starts with its "
                 "command, '$ ...'")
    return commands, lines[index:]


def mapped(command, paths, where):
    for written in sorted(paths, key=len, reverse=True):
        command = re.sub(r"(?<![\w./-])" + re.escape(written) + r"(?![\w.-])",
                         lambda _: paths[written], command)
    leftover = re.search(r"(?<![\w./-])build/\S*", command)
    if leftover:
        sys.exit(f"README.md:{where}: the test does not know "
                 f"{leftover.group(0)}; give it with --path in "
                 "tests/docs/CMakeLists.txt")
    return command


def normalized(lines):
    result = []
    for line in lines:
        line = DURATION.sub("<time>", line)
        line = BANDWIDTH.sub("<bandwidth>", line)
        line = PATH.sub(lambda m: ".../" + m.group(0).rsplit("/", 1)[1], line)
        result.append(line.rstrip())
    while result and not result[-1]:
        result.pop()
    return result


def environment():
    """This environment without the variables that would change what the
    README's commands print: the tools Kokkos loads, cunumpy's own."""
    return {name: value for name, value in os.environ.items()
            if not name.startswith("CUNUMPY_")
            and name not in ("KOKKOS_TOOLS_LIBS", "KOKKOS_PROFILE_LIBRARY")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("readme")
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--path", action="append", default=[],
                        metavar="README_PATH=REAL")
    args = parser.parse_args()
    paths = dict(item.split("=", 1) for item in args.path)
    with open(args.readme, encoding="utf-8") as file:
        marked = blocks(file.read())

    failures = []
    skipped = []
    examples = outputs = 0
    for where, kind, argument, lines in marked:
        if kind == "example":
            examples += 1
            name, code = expected_code(args.source_dir, argument, where)
            if lines != code:
                failures.append(f"README.md:{where}: the code differs from "
                                f"{name}")
                sys.stdout.writelines(difflib.unified_diff(
                    [line + "\n" for line in code],
                    [line + "\n" for line in lines], name, "README.md"))
            else:
                print(f"README.md:{where}: the code is {name}")
            continue
        outputs += 1
        status = 0
        if argument:
            match = re.fullmatch(r"exit status (\d+)", argument)
            if not match:
                sys.exit(f"README.md:{where}: expected <!-- output --> or "
                         f"<!-- output: exit status N -->, got {argument!r}")
            status = int(match.group(1))
        commands, expected = split_console(lines, where)
        script = "\n".join(mapped(command, paths, where)
                           for command in commands)
        print(f"README.md:{where}: running\n{script}")
        run = subprocess.run(["bash", "-e", "-c", script], cwd=args.source_dir,
                             env=environment(), stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, timeout=240)
        if any(mark in run.stdout for mark in SKIP_MARKS):
            print(run.stdout)
            skipped.append(f"README.md:{where}: this build has no device to "
                           "copy to")
            continue
        if run.returncode != status:
            print(run.stdout)
            failures.append(f"README.md:{where}: exit status "
                            f"{run.returncode}, the README says {status}")
            continue
        actual = normalized(line for line in run.stdout.splitlines()
                            if not KOKKOS_WARNING.match(line))
        if actual != normalized(expected):
            failures.append(f"README.md:{where}: the output differs from "
                            "what the README shows")
            sys.stdout.writelines(difflib.unified_diff(
                [line + "\n" for line in normalized(expected)],
                [line + "\n" for line in actual], "README.md", "actual"))
        else:
            print(f"README.md:{where}: the output is the README's")

    if not examples or not outputs:
        failures.append("README.md has no <!-- example: ... --> or no "
                        "<!-- output --> block")
    for message in failures:
        print(f"FAILED: {message}")
    if failures:
        return 1
    if skipped:
        for message in skipped:
            print(f"skipped: {message}")
        return SKIPPED
    return 0


if __name__ == "__main__":
    sys.exit(main())
