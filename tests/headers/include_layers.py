#!/usr/bin/env python3
"""Every #include "..." of src/core goes down the layers docs/architecture.md
lists (its "Layers" section): a file includes files of its own layer and
of the layers below, never above, and nothing else of the repository; the
section's exceptions, each named with its file and header, are the only
others. Prints each include that breaks it and exits 1.

    include_layers.py REPOSITORY
"""

import os
import re
import sys


def layers_and_exceptions(architecture):
    """The layers, bottom first, as path prefixes under src/core, and the
    allowed (file, header) pairs, from the Layers section."""
    with open(architecture, encoding="utf-8") as stream:
        text = stream.read()
    section = re.search(r"^### Layers\n(.*?)(?=^#)", text, re.M | re.S)
    if section is None:
        sys.exit(f"{architecture}: no '### Layers' section")
    layers = []
    exceptions = set()
    for line in section.group(1).splitlines():
        found = re.match(r"\d+\. (.*)", line)
        if found:
            layers.append(re.findall(r"`([^`]+)`", found.group(1).split(":")[0]))
        for pair in re.findall(r"`([\w/.]+)` includes `([\w/.]+)`", line):
            exceptions.add(pair)
    if not layers:
        sys.exit(f"{architecture}: its Layers section lists no layer")
    return layers, exceptions


def layer_of(path, layers):
    """The index of the layer of `path` (relative to src/core): the most
    specific prefix that names it."""
    best, length = None, -1
    for index, prefixes in enumerate(layers):
        for prefix in prefixes:
            if (path == prefix or path.startswith(prefix)) and \
                    len(prefix) > length:
                best, length = index, len(prefix)
    return best


def main():
    repository = sys.argv[1]
    core = os.path.join(repository, "src", "core")
    layers, exceptions = layers_and_exceptions(
        os.path.join(repository, "docs", "architecture.md"))
    problems = []
    for directory, _, files in os.walk(core):
        for name in sorted(files):
            if not name.endswith((".cpp", ".hpp")):
                continue
            path = os.path.relpath(os.path.join(directory, name), core)
            own = layer_of(path, layers)
            if own is None:
                problems.append(f"src/core/{path}: in no layer")
                continue
            with open(os.path.join(core, path), encoding="utf-8") as stream:
                for number, line in enumerate(stream, 1):
                    found = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    if not found:
                        continue
                    header = found.group(1)
                    if "/" not in header:  # beside the file
                        header = os.path.join(os.path.dirname(path), header)
                    # A header the build makes (support/build_identity.hpp)
                    # is in the layer its path names.
                    where = f"src/core/{path}:{number}: includes {header}"
                    theirs = layer_of(header, layers)
                    if theirs is None:
                        problems.append(f"{where}, in no layer of src/core")
                    elif theirs > own and (path, header) not in exceptions:
                        problems.append(
                            f"{where}, a layer above its own "
                            f"({', '.join(layers[theirs])} over "
                            f"{', '.join(layers[own])})")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
