"""Benchmarks of the Python front end, against their goals:

- to_numpy() of a NumPy array (a reference-only call): <= 1 us
- entering and leaving count_transfers(): <= 5 us
- 64 MiB round trips (to_device then to_numpy) on the fake device, against
  the same round trip with the C++ conversions: speed ratio >= 0.9

    PYTHONPATH=build/python python3 bench/python/bench_python.py [--quick] [--check]

--quick uses fewer repetitions and 8 MiB arrays (a smoke run for ctest);
--check exits with status 1 when a goal is missed.
"""

import argparse
import statistics
import sys
import time
import timeit

import numpy as np

import cunumpy as xp


def per_call_seconds(statement, number, repeat, setup_globals):
    timer = timeit.Timer(statement, globals=setup_globals)
    return min(timer.repeat(repeat=repeat, number=number)) / number


def bench_to_numpy(number, repeat):
    a = np.ones(16)
    return per_call_seconds("to_numpy(a)", number, repeat, {"to_numpy": xp.to_numpy, "a": a})


def bench_count_transfers(number, repeat):
    def enter_and_exit(count_transfers=xp.profiling.count_transfers):
        with count_transfers():
            pass

    return per_call_seconds("f()", number, repeat, {"f": enter_and_exit})


def bench_round_trip(nbytes, repeat):
    """Median seconds of a Python and of a C++ round trip of `nbytes`."""
    host = np.ones(nbytes // 8)
    python = []
    with xp.testing.use_fake_device():
        for _ in range(repeat):
            start = time.perf_counter()
            device = xp.to_device(host)
            back = xp.to_numpy(device)
            python.append(time.perf_counter() - start)
            del device, back
    cpp = xp._core.cpp_round_trip_seconds(nbytes, repeat)
    return statistics.median(python), statistics.median(cpp)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    parser.add_argument("--check", action="store_true", help="fail when a goal is missed")
    args = parser.parse_args()

    number, repeat, mib, trips = (
        (20000, 3, 8, 5) if args.quick else (200000, 7, 64, 21)
    )
    results = []

    seconds = bench_to_numpy(number, repeat)
    results.append(("to_numpy(numpy array)", seconds * 1e6, "us", 1.0, seconds * 1e6 <= 1.0))

    seconds = bench_count_transfers(number // 4, repeat)
    results.append(("count_transfers enter+exit", seconds * 1e6, "us", 5.0, seconds * 1e6 <= 5.0))

    if xp.testing.has_fake_device:
        python, cpp = bench_round_trip(mib << 20, trips)
        ratio = cpp / python
        print(
            f"{mib} MiB round trip: Python {python * 1e3:.2f} ms, "
            f"C++ {cpp * 1e3:.2f} ms ({2 * mib / python / 1024:.2f} GiB/s)"
        )
        results.append((f"{mib} MiB round trip, C++/Python", ratio, "x", 0.9, ratio >= 0.9))
    else:
        print("no fake device: round trips skipped")

    print(f"{'benchmark':34} {'result':>10}   goal")
    for name, value, unit, goal, met in results:
        bound = ">=" if unit == "x" else "<="
        print(f"{name:34} {value:8.3f} {unit:2} {bound} {goal:<5} {'met' if met else 'MISSED'}")
    if args.check and not all(met for *_, met in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
