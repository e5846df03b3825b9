"""The main build's plugin under programs built against another Kokkos
(tests/other_kokkos): it loads without a Kokkos of its own, reads that
Kokkos' interface, and its verdicts hold (a forbidden copy fails the run,
an allowed one passes)."""

import argparse
import json
import os
import subprocess
import sys


def run(command, work, **variables):
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith(("CUNUMPY_", "KOKKOS_"))}
    environment.update(variables)
    environment.setdefault("OMP_PROC_BIND", "false")
    return subprocess.run(command, cwd=work, env=environment, text=True,
                          capture_output=True, timeout=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--plugin", required=True)
    parser.add_argument("--programs", required=True)
    parser.add_argument("--work", required=True)
    arguments = parser.parse_args()
    tool_events = os.path.join(arguments.programs, "tool_events")
    hostile = os.path.join(arguments.programs, "hostile_program")
    budget = os.path.join(arguments.work, "budget.toml")
    with open(budget, "w") as stream:
        stream.write("[phases.step]\nallow.to_device = {}\n"
                     "[phases.output]\nallow.to_device = {}\n")
    report = os.path.join(arguments.work, "report.json")
    done = run([tool_events], arguments.work, KOKKOS_TOOLS_LIBS=arguments.plugin,
               CUNUMPY_REPORT=report, CUNUMPY_BUDGET=budget,
               CUNUMPY_ON_VIOLATION="exit")
    failures = []
    if done.returncode != 0:
        failures.append(f"tool_events failed ({done.returncode}):\n"
                        f"{done.stdout}{done.stderr}")
    else:
        with open(report) as stream:
            data = json.load(stream)
        kokkos = data["kokkos"]
        print(f"Kokkos {kokkos['version']} (tools interface "
              f"{kokkos['interface']}, backends {kokkos['backends']}): "
              f"{data['total']['transfers']} transfer(s), budget "
              f"{data['budget']['verdict']}")
        if not (kokkos["interface_known"] and kokkos["version"] and
                data["budget"]["verdict"] == "ok" and
                data["total"]["transfers"] == 12 and data["complete"]):
            failures.append("the report of tool_events:\n"
                            + json.dumps(data["kokkos"]) + "\n"
                            + json.dumps(data["budget"], indent=1))
    budget_step = os.path.join(arguments.work, "forbid.toml")
    with open(budget_step, "w") as stream:
        stream.write("[phases.step]\n")
    done = run([hostile, "region", "solve"], arguments.work,
               KOKKOS_TOOLS_LIBS=arguments.plugin, CUNUMPY_BUDGET=budget_step,
               CUNUMPY_ON_VIOLATION="exit")
    if done.returncode != 3 or "BROKEN" not in done.stderr:
        failures.append("a forbidden copy must fail the run with status 3 "
                        f"({done.returncode}):\n{done.stderr}")
    for failure in failures:
        print(failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
