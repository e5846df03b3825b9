"""One recorder when the Python module meets a plugin (pip_install.sh): the
pip-installed module with the wheel's plugin, with the plugin of another
install of the same build (the build tree's), with one of another build of
the same soname, and with one that brings a core of its own (another
soname). Each run is a child process under the plugin, its report and
stderr read back.

    python two_installs.py VENV_PYTHON BUILD_PLUGIN WORK_DIR
"""

import json
import os
import re
import shutil
import subprocess
import sys

venv_python, build_plugin, work = sys.argv[1:4]

# The program: one upload to the fake device under the module's counter,
# then the core files the process mapped.
PROGRAM = """
import json, os, sys
import numpy as np
import cunumpy as xp
with xp.testing.use_fake_device():
    with xp.profiling.count_transfers() as counter:
        xp.to_device(np.arange(5.0))
    try:
        with xp.profiling.assert_no_transfers():
            pass
        asserted = "passed"
    except AssertionError as error:
        asserted = str(error)
cores = set()
with open("/proc/self/maps") as maps:
    for line in maps:
        if "libcunumpy_core" in line:
            cores.add(os.path.realpath(line.split()[-1]))
print(json.dumps({"to_device": counter.to_device, "complete": counter.complete,
                  "asserted": asserted, "cores": sorted(cores)}))
"""

failures = []


def check(condition, what, run):
    if not condition:
        failures.append(f"{what}\n--- stdout\n{run.stdout}--- stderr\n"
                        f"{run.stderr}")


def run(name, plugin, **variables):
    directory = os.path.join(work, name)
    os.makedirs(directory, exist_ok=True)
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith(("CUNUMPY_", "KOKKOS_"))}
    environment.pop("PYTHONPATH", None)
    environment.update(KOKKOS_TOOLS_LIBS=plugin, KOKKOS_PROFILE_LIBRARY=plugin,
                       CUNUMPY_REPORT=os.path.join(directory, "report.json"),
                       CUNUMPY_DEVICE_SPACES="FakeDevice", **variables)
    done = subprocess.run([venv_python, "-c", PROGRAM], capture_output=True,
                          text=True, env=environment, cwd=directory,
                          timeout=300)
    lines = done.stdout.strip().splitlines()
    result = json.loads(lines[-1]) if lines and lines[-1].startswith("{") \
        else {}
    report_path = os.path.join(directory, "report.json")
    report = None
    if os.path.exists(report_path):
        with open(report_path) as file:
            report = json.load(file)
    return done, result, report


def one_recorder(name, plugin):
    """The module and the plugin count the one upload once, in one core."""
    done, result, report = run(name, plugin)
    check(done.returncode == 0, f"{name}: the program runs", done)
    check(result.get("to_device") == 1 and result.get("complete"),
          f"{name}: the module counts the upload once: {result}", done)
    check(len(result.get("cores", [])) == 1,
          f"{name}: one core in the process: {result.get('cores')}", done)
    check(report is not None and
          report["total"]["kinds"]["to_device"]["count"] == 1,
          f"{name}: the plugin's report counts it once", done)
    check("another tool replaced" not in done.stderr,
          f"{name}: no note about cunumpy's own callbacks", done)
    return done, result


# The wheel ships the plugin, and one command prints its path.
where = subprocess.run([venv_python, "-m", "cunumpy.plugin"],
                       capture_output=True, text=True, timeout=120)
wheel_plugin = where.stdout.strip()
check(where.returncode == 0 and os.path.isfile(wheel_plugin) and
      os.path.realpath(wheel_plugin).startswith(
          os.path.realpath(os.path.dirname(os.path.dirname(venv_python)))),
      "python -m cunumpy.plugin prints the wheel's plugin", where)

if os.path.isfile(wheel_plugin):
    one_recorder("wheel_plugin", wheel_plugin)
# Another install of the same build: its plugin uses the core the module
# loaded (their sonames agree).
done, result = one_recorder("build_tree_plugin", build_plugin)
check(all("site-packages" in core for core in result.get("cores", [])),
      "the core the process loaded first (the module's) is the one", done)

# Another build of the same soname: the plugin refuses the core in one line,
# and under CUNUMPY_ON_VIOLATION=exit the run fails; the module counts on.
identity = re.search(rb"\d+\.\d+\.\d+ [0-9a-f]{16}",
                     open(build_plugin, "rb").read())
other_build = os.path.join(work, "other_build", "libkp_cunumpy.so")
os.makedirs(os.path.dirname(other_build), exist_ok=True)
data = open(build_plugin, "rb").read()
digest = identity.group(0).split(b" ")[1]
data = data.replace(digest, bytes(reversed(digest)))
with open(other_build, "wb") as file:
    file.write(data)
done, result, report = run("other_build", other_build,
                           CUNUMPY_ON_VIOLATION="exit")
errors = [line for line in done.stderr.splitlines()
          if line.startswith("cunumpy: error:")]
check(len(errors) == 1 and other_build in errors[0] and
      "another build" in errors[0] and "python -m cunumpy.plugin" in errors[0],
      "one line naming the plugin, the core and what to do", done)
check(done.returncode == 3, "a run that could not be checked fails", done)
check(result.get("to_device") == 1 and result.get("complete"),
      f"the module's own counter is right: {result}", done)

# A plugin with a core of its own (another version: another soname): the
# module finds it in Kokkos' table, says so in one line, and its counters
# are not complete; the plugin's report is its own.
core = os.path.join(os.path.dirname(os.path.dirname(build_plugin)),
                    "libcunumpy_core.so")
soname = re.search(rb"libcunumpy_core\.so\.\d+\.\d+",
                   open(os.path.realpath(core), "rb").read()).group(0)
other_soname = soname[:-1] + (b"8" if soname[-1:] == b"9" else b"9")
other = os.path.join(work, "other_version")
os.makedirs(other, exist_ok=True)
for source, target in ((os.path.realpath(core), other_soname.decode()),
                       (build_plugin, "libkp_cunumpy.so")):
    with open(source, "rb") as file:
        data = file.read().replace(soname, other_soname)
    with open(os.path.join(other, target), "wb") as file:
        file.write(data)
done, result, report = run("other_version",
                           os.path.join(other, "libkp_cunumpy.so"),
                           LD_LIBRARY_PATH=other)
notes = [line for line in done.stderr.splitlines()
         if "two cunumpy cores" in line]
check(len(notes) == 1 and "libkp_cunumpy.so" in notes[0],
      "one line naming the plugin that feeds its own core", done)
check(len(result.get("cores", [])) == 2, "two cores were loaded", done)
check(result.get("complete") is False and result.get("asserted") != "passed",
      f"the module's counters are not complete: {result}", done)
check("another tool replaced" not in done.stderr,
      "the module left the plugin's callbacks alone", done)

if failures:
    print("\n\n".join(failures))
    sys.exit(1)
print("two installs: one recorder, or one line and a failed verdict")
