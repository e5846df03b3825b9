"""The Python front end of the budget parity test: case <index> of the
cases file, its rules set with TransferBudget.require(name, allow=...,
ignore=..., calls=..., optional=...) as a Python user writes them, its
events made through the Kokkos of the cunumpy module (the test extension
cunumpy_parity_events); prints the violations as JSON, in the shape
parity_cpp prints them.

    python3 parity_python.py <cases.json> <index>
"""

import json
import sys

import cunumpy as xp
import cunumpy_parity_events


def violation_json(violation):
    return {
        "phase": violation.phase,
        "kind": violation.kind,
        "limit": violation.limit,
        "allowed": violation.allowed,
        "actual": violation.actual,
        "details": list(violation.details),
        "message": str(violation),
        "events": [{"kind": e.kind, "what": e.what, "blocking": e.blocking,
                    "implicit": e.implicit, "count": e.count,
                    "bytes": e.nbytes, "max_bytes": e.max_nbytes}
                   for e in violation.events],
    }


def main(cases_path, index):
    with open(cases_path, encoding="utf-8") as file:
        case = json.load(file)["cases"][index]
    budget = xp.profiling.TransferBudget()
    for phase, fields in case["rules"].items():
        budget.require(phase, **fields)
    cunumpy_parity_events.run_events(json.dumps(case["events"]))
    print(json.dumps([violation_json(v) for v in budget.violations()],
                     indent=1))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: parity_python.py <cases.json> <index>")
    main(sys.argv[1], int(sys.argv[2]))
