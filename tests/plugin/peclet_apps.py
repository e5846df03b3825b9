"""Real Kokkos applications from PyPI, for the plugin's test
(tests/plugin/real_apps.py) and benchmark (bench/plugin/real_apps.py):
peclet-flow and peclet-dem, CPU wheels with their own Kokkos 5 linked in
statically (OpenMP).

Imported with the standard library only, this module makes (or reuses) a
venv with the two packages and builds their command lines. Run with that
venv's python, it is the workload itself:

    python peclet_apps.py flow 8 1 dem 1000 200

imports every module named first (peclet.flow, then peclet.dem, in the
order given), then runs each workload in turn and prints one JSON line per
workload: the numbers it computed and a SHA-256 of its result arrays, so
that two runs can be compared byte for byte.

  flow CELLS STEPS: Stokes flow driven by a body force through a periodic
    2x2x2 lattice of spheres in a box of CELLS^3 unit cells (the cut-cell
    pressure operator, so its multigrid runs), STEPS time steps.
  dem SPHERES STEPS: peclet-dem's quick start (its README) with SPHERES
    spheres placed by a seeded generator, STEPS steps, then its relax(50).
"""

import fcntl
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request

REQUIREMENTS = ("peclet-flow==1.4.0", "peclet-dem==1.1.0")
MODULES = {"flow": "peclet.flow", "dem": "peclet.dem"}
# ctest's SKIP_RETURN_CODE for these tests.
SKIP = 77
# The quick start's relax(50) after its steps.
RELAX_STEPS = 50
DEFAULT_INDEX = "https://pypi.org/simple/"
# What pip prints when it cannot reach the index (urllib3 and requests).
NETWORK_ERRORS = re.compile(
    r"NewConnectionError|ConnectTimeoutError|ReadTimeoutError|ProxyError|"
    r"Temporary failure in name resolution|Name or service not known|"
    r"Network is unreachable|No route to host|Connection refused|"
    r"connection broken by|Could not fetch URL|SSLError")
# Kokkos reads these at initialize; a caller's own must not leak in.
FOREIGN_PREFIXES = ("KOKKOS_", "CUNUMPY_", "OMP_", "GOMP_")
FOREIGN_VARIABLES = ("PYTHONPATH", "PYTHONHOME", "LD_PRELOAD")


class Unreachable(Exception):
    """PyPI (or the index pip is configured with) cannot be reached."""


class SetupError(Exception):
    """The venv could not be made for another reason than the network."""


def index_url(python=sys.executable):
    """The index pip installs from: PIP_INDEX_URL, else index-url in pip's
    configuration files, else PyPI's."""
    if os.environ.get("PIP_INDEX_URL"):
        return os.environ["PIP_INDEX_URL"]
    try:
        completed = subprocess.run([python, "-m", "pip", "config", "list"],
                                   stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, text=True,
                                   timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return DEFAULT_INDEX
    for line in completed.stdout.splitlines():
        key, _, value = line.partition("=")
        if key.endswith(".index-url") and value.strip("'\" "):
            return value.strip("'\" ")
    return DEFAULT_INDEX


def probe_index(python=sys.executable, timeout=10):
    """Raises Unreachable when the index does not answer an HTTP request
    (any HTTP status is an answer; proxies as the environment sets them)."""
    url = index_url(python).rstrip("/") + "/peclet-flow/"
    request = urllib.request.Request(url, method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=timeout):
            pass
    except urllib.error.HTTPError:
        pass
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise Unreachable(f"{url}: {reason}") from None


def venv_python(directory, base_python=sys.executable, log=None):
    """The python of a venv in `directory` with REQUIREMENTS installed:
    the one there when a previous call completed it, else a new one (a
    lock file beside it keeps two processes from making it at once).
    Raises Unreachable when pip cannot reach the index, SetupError for any
    other failure."""
    directory = os.path.abspath(directory)
    python = os.path.join(directory, "bin", "python")
    marker = os.path.join(directory, "cunumpy-real-apps.json")
    wanted = {"requirements": list(REQUIREMENTS)}
    os.makedirs(os.path.dirname(directory), exist_ok=True)
    with open(directory + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(marker) as stream:
                if json.load(stream) == wanted and os.access(python, os.X_OK):
                    return python
        except (OSError, ValueError):
            pass
        probe_index(base_python)
        if log:
            log(f"making {directory}: pip install {' '.join(REQUIREMENTS)}")
        _run_setup([base_python, "-m", "venv", "--clear", directory], 300)
        try:
            _run_setup([python, "-m", "pip", "install", "--no-input",
                        "--disable-pip-version-check", "--retries", "1",
                        "--timeout", "30", *REQUIREMENTS], 900)
        except SetupError as error:
            if NETWORK_ERRORS.search(str(error)):
                raise Unreachable(f"pip install: {_last_error_line(error)}") \
                    from None
            raise
        _run_setup([python, "-c", "import numpy"], 120)
        with open(marker, "w") as stream:
            json.dump(wanted, stream)
        return python


def _run_setup(command, timeout):
    try:
        completed = subprocess.run(command, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True,
                                   timeout=timeout, env=_setup_environment())
    except subprocess.TimeoutExpired as error:
        raise SetupError(f"{' '.join(command)}: no answer after {timeout} s"
                         f"\n{error.output or ''}") from None
    except OSError as error:
        raise SetupError(f"{' '.join(command)}: {error}") from None
    if completed.returncode != 0:
        raise SetupError(f"{' '.join(command)} failed with status "
                         f"{completed.returncode}:\n{completed.stdout}")


def _setup_environment():
    environment = {name: value for name, value in os.environ.items()
                   if name not in FOREIGN_VARIABLES
                   and not name.startswith("PYTHON")}
    environment["PIP_NO_INPUT"] = "1"
    return environment


def _last_error_line(error):
    lines = [line.strip() for line in str(error).splitlines()
             if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")]
    return (errors or lines or ["(no output)"])[-1]


def command(python, *workloads):
    """The command line running `workloads`, each (app, size, steps)."""
    arguments = [str(value) for workload in workloads for value in workload]
    return [python, os.path.abspath(__file__), *arguments]


def environment(threads=1, tools=None, extra=None):
    """The environment of a workload's process: the caller's less what
    Kokkos, OpenMP, cunumpy or another venv would read from it, with
    OMP_NUM_THREADS=threads, OMP_PROC_BIND=false, KOKKOS_TOOLS_LIBS=tools
    when given, and `extra`."""
    result = {name: value for name, value in os.environ.items()
              if not name.startswith(FOREIGN_PREFIXES)
              and name not in FOREIGN_VARIABLES}
    result.update(OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="false",
                  PYTHONNOUSERSITE="1", PYTHONDONTWRITEBYTECODE="1")
    if tools:
        result["KOKKOS_TOOLS_LIBS"] = tools
    result.update(extra or {})
    return result


def _digest(array):
    import hashlib

    import numpy

    array = numpy.ascontiguousarray(array)
    return f"{array.dtype.str}{list(array.shape)}:" + \
        hashlib.sha256(array.tobytes()).hexdigest()


def run_flow(cells, steps):
    import numpy
    from peclet import flow

    # Signed distance to the nearest of 8 spheres (2x2x2, periodic images),
    # sampled at the cell centres (unit cells), negative inside.
    centres = (numpy.arange(cells) + 0.5)
    x, y, z = numpy.meshgrid(centres, centres, centres, indexing="ij")
    radius = 0.18 * cells
    sdf = numpy.full((cells,) * 3, numpy.inf)
    for cx in (0.25 * cells, 0.75 * cells):
        for cy in (0.25 * cells, 0.75 * cells):
            for cz in (0.25 * cells, 0.75 * cells):
                offsets = [axis - centre for axis, centre in
                           ((x, cx), (y, cy), (z, cz))]
                offsets = [o - cells * numpy.round(o / cells)
                           for o in offsets]
                distance = numpy.sqrt(sum(o * o for o in offsets)) - radius
                sdf = numpy.minimum(sdf, distance)
    solver = flow.Solver(cells, cells, cells)
    solver.set_rho(1.0)
    solver.set_mu(0.1)
    solver.set_dt(60.0)
    solver.set_body_force((1e-3, 0.0, 0.0))
    solver.set_advection(False)
    solver.set_solid(numpy.asfortranarray(sdf), cutcell_pressure=True)
    for _ in range(steps):
        solver.step()
    u = solver.get_u()
    return {"app": "flow", "version": flow.__version__,
            "execution_space": str(flow.execution_space),
            "cells": cells, "steps": steps,
            "mean_u": float(u.mean()),
            "max_open_divergence": float(solver.max_open_divergence()),
            "u": _digest(u), "v": _digest(solver.get_v()),
            "w": _digest(solver.get_w()), "p": _digest(solver.get_p())}


def dem_simulation(spheres):
    """peclet-dem's quick start with `spheres` spheres placed by a seeded
    generator, before its steps (peclet-dem and peclet-dem-cu13 alike)."""
    import numpy
    from peclet import dem

    simulation = dem.Simulation(capacity=max(20000, spheres))
    simulation.initialize_shape("sphere", 0.5)
    simulation.set_global_scale(0.01)
    simulation.set_domain(extent=(0.2, 0.2, 0.4), origin=(0, 0, 0),
                          periodic=(True, True, False))
    simulation.add_plane(point=(0, 0, 0), normal=(0, 0, 1))
    positions = numpy.random.default_rng(0).random((spheres, 3))
    simulation.set_positions(
        (positions * [0.2, 0.2, 0.4]).astype(numpy.float32))
    simulation.set_gravity((0, 0, -9.81))
    simulation.set_material_params(restitution_normal=0.3, friction=0.4)
    simulation.set_solver_iterations(pos=10, vel=8)
    simulation.set_dt(1e-4)
    return simulation


def run_dem(spheres, steps):
    from peclet import dem

    simulation = dem_simulation(spheres)
    simulation.step(steps)
    simulation.relax(RELAX_STEPS)
    return {"app": "dem", "version": dem.__version__,
            "spheres": spheres, "steps": steps,
            "particles": int(simulation.num_particles),
            "contacts": int(simulation.num_contacts),
            "overlaps": float(simulation.compute_overlaps()),
            "positions": _digest(simulation.get_positions())}


RUNNERS = {"flow": run_flow, "dem": run_dem}


def main(arguments):
    import importlib

    if not arguments or len(arguments) % 3:
        sys.exit("usage: peclet_apps.py {flow|dem} SIZE STEPS "
                 "[{flow|dem} SIZE STEPS ...]")
    workloads = [(arguments[i], int(arguments[i + 1]), int(arguments[i + 2]))
                 for i in range(0, len(arguments), 3)]
    for app, _, _ in workloads:
        if app not in MODULES:
            sys.exit(f"peclet_apps.py: unknown application '{app}' "
                     f"(expected {' or '.join(MODULES)})")
        importlib.import_module(MODULES[app])
    for app, size, steps in workloads:
        result = RUNNERS[app](size, steps)
        print(json.dumps(result, sort_keys=True), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
