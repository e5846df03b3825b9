#!/usr/bin/env python3
"""Keeps every code block of README.md and docs/*.md true: a block is the
code of a file the build compiles and the suite runs, or commands run here
whose output is compared, or says that it is a fragment, or is an example
of what cunumpy prints, marked as such. A block that is none of these fails
the test.

    code_blocks.py MARKDOWN... --source-dir DIR [--path DOC_PATH=REAL]...

What precedes a block (an HTML comment on the line before it, blank lines
between allowed) or what it starts with says which it is:

  <!-- example: FILE -->  or  <!-- example: FILE from "TEXT" [to "END"] -->
      the block is FILE (relative to the source directory), whole or from
      its first line that starts with TEXT (to the next line that starts
      with END).
  <!-- output -->  or  <!-- output: exit status N -->
      a console block: its first lines are commands ("$ ...", a line ending
      in "\\" goes on on the next), run by bash in the source directory;
      the rest is what they print (stdout and stderr), and the exit status
      is N (default 0).
  <!-- run by: TEST -->
      the test file TEST (which names this Markdown file) takes the block
      from it and runs it.
  <!-- printed -->
      a block without a language (or "text"): an example of what cunumpy
      prints, shown for reading, not compared.
  a first line "// fragment: ..." (C++) or "# fragment: ..." (Python,
      shell, CMake, TOML, YAML), which readers see: code that leaves
      something out or that the suite does not run, saying which.

--path maps a path or command the docs write (build/examples/...,
python3) to the one of this build; a command that still names build/
after the mapping is an error. Before the comparison, both outputs have
paths reduced to ".../" and their last component, and durations and
bandwidths replaced by placeholders; the run's output loses the warning
that Kokkos 4 and 5 print for KOKKOS_PROFILE_LIBRARY (the README sets it
for Kokkos before 3.7); nothing else. A difference prints a unified diff.
Exit status 0 when all hold, 1 when one does not, 77 (skipped) when a
build without a device (nor a fake one) cannot print what the docs show.
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
MARKER = re.compile(
    r"^\s*<!--\s*(example|output|printed|run by)\b\s*:?\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w+-]*)")
# The comment a fragment's first line starts with, by language.
COMMENTS = {"cpp": "//", "c++": "//", "python": "#", "sh": "#", "bash": "#",
            "cmake": "#", "toml": "#", "yaml": "#"}
PRINTED = ("", "text")
# A path with at least one "/": absolute, relative or shortened (".../name").
PATH = re.compile(r"(?<![\w.+~/-])(?:\.\.\.|[\w.+~-]*)(?:/[\w.+~-]+)+")
DURATION = re.compile(r"\b\d+(?:\.\d+)?(?:e[-+]?\d+)? ?(?:ns|us|µs|ms|s)\b")
BANDWIDTH = re.compile(r"\b\d+(?:\.\d+)? ?[kKMGT]?i?B/s\b")


class Block:
    """A fenced code block: where it starts (the fence's line), its
    language, the marker before it (kind and argument, or None) and its
    lines without the fence's indentation."""

    def __init__(self, where, language, marker, lines):
        self.where = where
        self.language = language
        self.kind, self.argument = marker or (None, None)
        self.lines = lines


def blocks(name, text):
    """Every fenced code block of the Markdown `text` of file `name`."""
    lines = text.splitlines()
    found = []
    index = 0
    while index < len(lines):
        fence = FENCE.match(lines[index])
        if not fence:
            index += 1
            continue
        indent, marks, language = fence.groups()
        start = index
        before = start - 1
        while before >= 0 and not lines[before].strip():
            before -= 1
        marker = MARKER.match(lines[before]) if before >= 0 else None
        index += 1
        body = []
        while index < len(lines) and not lines[index].strip().startswith(marks):
            line = lines[index]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            index += 1
        if index == len(lines):
            sys.exit(f"{name}:{start + 1}: the code block never ends")
        index += 1
        found.append(Block(f"{name}:{start + 1}", language.lower(),
                           marker.groups() if marker else None, body))
    # A marker must stand right before a block: one before prose checks
    # nothing.
    starts = {block.where for block in found}
    for number, line in enumerate(lines):
        if not MARKER.match(line):
            continue
        after = number + 1
        while after < len(lines) and not lines[after].strip():
            after += 1
        if f"{name}:{after + 1}" not in starts:
            sys.exit(f"{name}:{number + 1}: '{line.strip()}' is not followed "
                     "by a fenced code block")
    return found


def unmarked(block):
    """Why `block`, with no marker, is neither a fragment nor printed text;
    None when it is one."""
    comment = COMMENTS.get(block.language)
    first = block.lines[0].strip() if block.lines else ""
    if comment is not None and first.startswith(comment + " fragment:"):
        return None
    if comment is not None:
        return (f"a {block.language} block that no test checks: tie it to a "
                "tested file (<!-- example: FILE -->), run it (<!-- output -->), "
                f'or start it with "{comment} fragment: <what it leaves out>"')
    if block.language in PRINTED:
        return ("printed text without a marker: <!-- output --> to compare it "
                "with a run, or <!-- printed --> for an example shown for "
                "reading")
    return (f"a {block.language} block that no test checks: "
            "<!-- output --> runs it")


def expected_code(source_dir, argument, where):
    match = re.fullmatch(r'(\S+)(?:\s+from\s+"(.*?)")?(?:\s+to\s+"(.*)")?',
                         argument)
    if not match:
        sys.exit(f"{where}: expected <!-- example: FILE --> or "
                 f'<!-- example: FILE from "TEXT" [to "TEXT"] -->, got '
                 f"{argument!r}")
    name, first, last = match.groups()
    path = os.path.join(source_dir, name)
    with open(path, encoding="utf-8") as file:
        lines = file.read().splitlines()
    for text, keep in ((first, lambda i: lines[i:]),
                       (last, lambda i: lines[:i + 1])):
        if text is None:
            continue
        starts = [i for i, line in enumerate(lines) if line.startswith(text)]
        if not starts:
            sys.exit(f"{where}: no line of {name} starts with {text!r}")
        lines = keep(starts[0])
    return name, lines


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
        sys.exit(f"{where}: an output block starts with its command, "
                 "'$ ...'")
    return commands, lines[index:]


def mapped(command, paths, where):
    for written in sorted(paths, key=len, reverse=True):
        command = re.sub(r"(?<![\w./-])" + re.escape(written) + r"(?![\w.-])",
                         lambda _: paths[written], command)
    leftover = re.search(r"(?<![\w./-])build/\S*", command)
    if leftover:
        sys.exit(f"{where}: the test does not know {leftover.group(0)}; "
                 "give it with --path in tests/docs/CMakeLists.txt")
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


def check_output(block, paths, source_dir, failures, skipped):
    status = 0
    if block.argument:
        match = re.fullmatch(r"exit status (\d+)", block.argument)
        if not match:
            sys.exit(f"{block.where}: expected <!-- output --> or "
                     f"<!-- output: exit status N -->, got {block.argument!r}")
        status = int(match.group(1))
    commands, expected = split_console(block.lines, block.where)
    script = "\n".join(mapped(command, paths, block.where)
                       for command in commands)
    print(f"{block.where}: running\n{script}")
    run = subprocess.run(["bash", "-e", "-c", script], cwd=source_dir,
                         env=environment(), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=240)
    if any(mark in run.stdout for mark in SKIP_MARKS):
        print(run.stdout)
        skipped.append(f"{block.where}: this build has no device to copy to")
        return
    if run.returncode != status:
        print(run.stdout)
        failures.append(f"{block.where}: exit status {run.returncode}, the "
                        f"docs say {status}")
        return
    actual = normalized(line for line in run.stdout.splitlines()
                        if not KOKKOS_WARNING.match(line))
    if actual != normalized(expected):
        failures.append(f"{block.where}: the output differs from what the "
                        "docs show")
        sys.stdout.writelines(difflib.unified_diff(
            [line + "\n" for line in normalized(expected)],
            [line + "\n" for line in actual], block.where, "actual"))
    else:
        print(f"{block.where}: the output is the docs'")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("markdown", nargs="+")
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--path", action="append", default=[],
                        metavar="DOC_PATH=REAL")
    args = parser.parse_args()
    paths = dict(item.split("=", 1) for item in args.path)

    failures = []
    skipped = []
    counts = {"example": 0, "output": 0, "run by": 0, "printed": 0,
              "fragment": 0}
    for markdown in args.markdown:
        name = os.path.relpath(markdown, args.source_dir)
        with open(markdown, encoding="utf-8") as file:
            found = blocks(name, file.read())
        for block in found:
            if block.kind == "example":
                counts["example"] += 1
                code_name, code = expected_code(args.source_dir,
                                                block.argument, block.where)
                if block.lines != code:
                    failures.append(f"{block.where}: the code differs from "
                                    f"{code_name}")
                    sys.stdout.writelines(difflib.unified_diff(
                        [line + "\n" for line in code],
                        [line + "\n" for line in block.lines], code_name,
                        block.where))
                else:
                    print(f"{block.where}: the code is {code_name}")
            elif block.kind == "output":
                counts["output"] += 1
                check_output(block, paths, args.source_dir, failures, skipped)
            elif block.kind == "run by":
                counts["run by"] += 1
                test = os.path.join(args.source_dir, block.argument)
                if (not os.path.isfile(test) or os.path.basename(name)
                        not in open(test, encoding="utf-8").read()):
                    failures.append(f"{block.where}: {block.argument} is not "
                                    f"a test file that reads {name}")
            elif block.kind == "printed":
                counts["printed"] += 1
                if block.language not in PRINTED:
                    failures.append(f"{block.where}: <!-- printed --> is for "
                                    "printed text, not a "
                                    f"{block.language} block")
            else:
                problem = unmarked(block)
                if problem is not None:
                    failures.append(f"{block.where}: {problem}")
                else:
                    counts["fragment"] += 1

    print(", ".join(f"{count} {kind}" for kind, count in counts.items()))
    if not counts["example"] or not counts["output"]:
        failures.append("no <!-- example: ... --> or no <!-- output --> "
                        "block")
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
