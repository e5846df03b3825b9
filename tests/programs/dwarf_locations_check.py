#!/usr/bin/env python3
"""cunumpy's DWARF reader against llvm-addr2line, address for address: for
every call instruction of each module (objdump -d), the source locations
of the call (the return address minus one, as a site is looked up),
innermost first with the calls of the inlined functions it is in, must be
the same, file and line. Exits 77 (skipped) without llvm-addr2line or
objdump.

    dwarf_locations_check.py --reader test_dwarf_locations MODULE...
"""

import argparse
import re
import shutil
import subprocess
import sys

SKIP = 77


def call_addresses(module, limit):
    """The address of the last byte of each call instruction (a return
    address minus one), at most `limit` spread over the module."""
    listing = subprocess.run(["objdump", "-d", "--no-show-raw-insn", module],
                             capture_output=True, text=True,
                             check=True).stdout.splitlines()
    addresses = []
    for i, line in enumerate(listing):
        if re.match(r"\s*[0-9a-f]+:\s+call", line):
            for following in listing[i + 1:i + 3]:
                found = re.match(r"\s*([0-9a-f]+):", following)
                if found:
                    addresses.append(int(found.group(1), 16) - 1)
                    break
    step = max(1, len(addresses) // limit)
    return addresses[::step]


def normalized(location):
    """file:line, a line llvm-addr2line does not know (?) as 0, and its
    ??:0 for no location as the reader's empty one."""
    location = re.sub(r" \(discriminator \d+\)$", "", location.strip())
    location = re.sub(r":\?$", ":0", location)
    return "" if location in ("??:0", ":0") else location


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reader", required=True)
    parser.add_argument("--addr2line", default="llvm-addr2line")
    parser.add_argument("--limit", type=int, default=1500)
    parser.add_argument("modules", nargs="+")
    arguments = parser.parse_args()
    addr2line = shutil.which(arguments.addr2line)
    if addr2line is None or shutil.which("objdump") is None:
        print("skipped: needs llvm-addr2line and objdump")
        return SKIP
    failures = 0
    for module in arguments.modules:
        addresses = call_addresses(module, arguments.limit)
        text = "".join(f"{a:x}\n" for a in addresses)
        mine = subprocess.run([arguments.reader, module], input=text,
                              capture_output=True, text=True,
                              check=True).stdout.splitlines()
        theirs = []
        for line in subprocess.run([addr2line, "-i", "-a", "-e", module],
                                   input=text, capture_output=True, text=True,
                                   check=True).stdout.splitlines():
            if line.startswith("0x"):
                theirs.append([])
            elif theirs:
                theirs[-1].append(normalized(line))
        different = 0
        for address, ours, expected in zip(addresses, mine, theirs):
            # One empty location and none are the same answer: no location
            # (the symbolizer then names the module and offset).
            ours = [normalized(part) for part in ours.split("|")[1:]]
            ours = [] if ours == [""] else ours
            expected = [] if expected == [""] else expected
            if ours != expected:
                different += 1
                if different <= 5:
                    print(f"{module} 0x{address:x}:\n  reader:     {ours}\n"
                          f"  addr2line:  {expected}")
        same = len(addresses) - different
        print(f"{module}: {same} of {len(addresses)} call addresses the same")
        if different or len(mine) != len(addresses) or not addresses:
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
