"""Helpers for cunumpy's Python tests."""

import importlib
import inspect
import os
import re

import pytest


def required_extension(name):
    """A test-only extension module: under ctest
    (CUNUMPY_TEST_EXTENSIONS=required) one that is missing fails the test,
    since what it checks would go unchecked; elsewhere (pytest on an
    installed package) the test skips."""
    if os.environ.get("CUNUMPY_TEST_EXTENSIONS") == "required":
        return importlib.import_module(name)
    return pytest.importorskip(name)


def next_site():
    """"<this test file>:<line>" of the line after the caller's: the call
    site a report must name for the copy made on the next line."""
    caller = inspect.currentframe().f_back
    return f"{caller.f_code.co_filename}:{caller.f_lineno + 1}"


def report_lines(counter):
    """The report's lines, without the trailing newline."""
    return counter.report().rstrip("\n").split("\n")


def without_elapsed(text):
    """A text report without the seconds on its first line ("cunumpy
    transfer report: <program> (rank 0, pid N), 0.123 s"): two reports of
    one run differ there only."""
    first, newline, rest = text.partition("\n")
    return re.sub(r"\), [0-9.]+ s$", ")", first) + newline + rest
