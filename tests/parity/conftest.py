"""Options of the budget parity test (tests/parity/CMakeLists.txt passes
them; `ctest --test-dir build -V -R '^parity\\.'` prints the command)."""

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("cunumpy budget parity")
    group.addoption("--cases", help="cases.json")
    group.addoption("--parity-cpp", help="the C++ front end's program")
    group.addoption("--parity-events",
                    help="the plugin's program (events only)")
    group.addoption("--plugin", help="libkp_cunumpy.so")
    group.addoption("--tools-variable",
                    help="KOKKOS_TOOLS_LIBS or KOKKOS_PROFILE_LIBRARY")
    group.addoption("--python", help="the Python of the cunumpy module")
    group.addoption("--python-path",
                    help="PYTHONPATH of the cunumpy module and of the "
                         "cunumpy_parity_events extension")


@pytest.fixture
def options(request):
    return request.config.option
