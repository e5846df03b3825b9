"""Helpers for cunumpy's Python tests."""

import inspect


def next_site():
    """"<this test file>:<line>" of the line after the caller's: the call
    site a report must name for the copy made on the next line."""
    caller = inspect.currentframe().f_back
    return f"{caller.f_code.co_filename}:{caller.f_lineno + 1}"


def report_lines(counter):
    """The report's lines, without the trailing newline."""
    return counter.report().rstrip("\n").split("\n")
