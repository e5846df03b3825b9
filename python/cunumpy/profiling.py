"""Counting transfers: count_transfers, assert_no_transfers, TransferBudget.

One recorder serves C++ and Python: copies made by C++ code called from
Python are counted here too, attributed to the Python line that called into
C++ when the C++ stack offers no better site.
"""

import collections.abc
import functools
import numbers

from . import _core
from ._core import Event, Rule, SiteSummary, TransferCounter, Violation

__all__ = [
    "Event",
    "Rule",
    "SiteSummary",
    "TransferBudget",
    "TransferCounter",
    "Violation",
    "assert_no_transfers",
    "count_transfers",
    "event_kinds",
    "record_marker",
]

#: Every event kind, in report order.
event_kinds = _core.event_kinds

_LIMITS = ("max_nbytes", "max_count", "max_total_bytes", "blocking", "implicit")
_FLAGS = ("blocking", "implicit")

count_transfers = _core.count_transfers


def assert_no_transfers():
    """Context manager: AssertionError with the report when the block copied
    between host and device (to_host, to_device) or ran host code on the
    device backend (kernel_conversion, fallback). Device-only copies
    (device_copy) and syncs are allowed; an exception raised in the block
    passes through unchanged.

        with xp.profiling.assert_no_transfers():
            step(state, dt)
    """
    return _core.AssertNoTransfers()


def record_marker(kind, what):
    """Records a marker event, no copy and no bytes: "kernel_conversion" (a
    host kernel was called with device arrays, copied to the host and back)
    or "fallback" (a kernel without a device version ran its host version
    on the device backend). `what` describes it in reports."""
    _core.record_marker(kind, what)


def _kind(name, where):
    if name not in event_kinds:
        raise ValueError(
            f"TransferBudget.require: unknown event kind {name!r} in {where} "
            f"(expected one of {', '.join(event_kinds)})"
        )
    return name


def _count_limit(value, what):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"TransferBudget.require: {what} must be a non-negative integer, "
            f"not {value!r}"
        )
    if value < 0:
        raise ValueError(
            f"TransferBudget.require: {what} must be a non-negative integer, "
            f"not {value}"
        )
    return int(value)


def _limits(kind, limits):
    if limits is None:
        return {}
    if not isinstance(limits, collections.abc.Mapping):
        raise TypeError(
            f"TransferBudget.require: the limits of {kind!r} must be a dict "
            f"such as {{'max_nbytes': 8}}, not {limits!r}"
        )
    checked = {}
    for key, value in limits.items():
        if key not in _LIMITS:
            raise ValueError(
                f"TransferBudget.require: unknown limit {key!r} for {kind!r} "
                f"(expected one of {', '.join(_LIMITS)})"
            )
        if key in _FLAGS:
            if not isinstance(value, bool):
                raise TypeError(
                    f"TransferBudget.require: {kind}.{key} must be True or "
                    f"False, not {value!r}"
                )
            checked[key] = value
        else:
            checked[key] = _count_limit(value, f"{kind}.{key}")
    return checked


def _kinds(kinds, where):
    if isinstance(kinds, str):
        kinds = (kinds,)
    return [_kind(kind, where) for kind in kinds]


class _PhaseCalls(collections.abc.Mapping):
    """budget.calls: phase name -> number of calls (0 for unknown phases)."""

    def __init__(self, budget):
        self._budget = budget

    def __getitem__(self, name):
        return self._budget._calls(name)

    def __contains__(self, name):
        return name in self._budget.phases()

    def __iter__(self):
        return iter(self._budget.phases())

    def __len__(self):
        return len(self._budget.phases())

    def __repr__(self):
        return repr(dict(self.items()))


class TransferBudget(_core.TransferBudget):
    """Counts the transfers per named phase and checks a rule for each.

        budget = xp.profiling.TransferBudget(started=False)
        model.integrate = budget.count("integrate")(model.integrate)
        budget.start()
        for step in range(n_steps):
            model.integrate(dt)
            with budget.phase("output"):
                save(model)
        budget.require("integrate", allow={"to_host": {"max_nbytes": 8}},
                       calls=n_steps)
        budget.check()  # AssertionError with budget.report()

    phase(name) yields the phase's TransferCounter (budget[name]); the events
    of a phase accumulate over its calls and budget.calls[name] counts the
    calls. Phases nest: an event is counted in the innermost phase only.
    With started=False phases run uncounted until start(), and again after
    stop(). Rules can also come from the TOML rule file the plugin reads:
    TransferBudget.from_file(path) or budget.require_file(path).
    """

    def __init__(self, started=True):
        super().__init__(started)

    @classmethod
    def from_file(cls, path, started=True):
        """A budget with the rules of the TOML rule file at `path`."""
        budget = cls(started=started)
        budget.require_file(path)
        return budget

    def count(self, name):
        """A decorator: the decorated function runs inside phase `name`.

        model.integrate = budget.count("integrate")(model.integrate)
        """
        if not isinstance(name, str):
            raise TypeError(
                "TransferBudget.count(name) takes the phase name and returns "
                "a decorator: budget.count('integrate')(function)"
            )

        def decorator(function):
            @functools.wraps(function)
            def counted(*args, **kwargs):
                with self.phase(name):
                    return function(*args, **kwargs)

            return counted

        return decorator

    @property
    def calls(self):
        """Mapping phase name -> number of calls counted."""
        return _PhaseCalls(self)

    def require(self, name, allow=None, ignore=None, calls=None,
                optional=False):
        """Sets the rule of phase `name` (replacing an earlier one).

        `allow` maps the allowed event kinds to their limits (max_nbytes,
        max_count, max_total_bytes, blocking, implicit), e.g.
        {"to_host": {"max_nbytes": 8, "blocking": False}}; every other kind
        is forbidden except those in `ignore` (default: device_copy and
        sync). `calls` is the number of calls the phase must have had. A
        phase that never ran breaks its rule unless `optional` is true.
        """
        rule = Rule()
        if allow is not None:
            if isinstance(allow, collections.abc.Mapping):
                items = allow.items()
            else:
                items = ((kind, None) for kind in _kinds(allow, "allow"))
            for kind, limits in items:
                rule.allow(_kind(kind, "allow"), **_limits(kind, limits))
        if ignore is not None:
            rule.ignore(_kinds(ignore, "ignore"))
        if calls is not None:
            rule.require_calls(_count_limit(calls, "calls"))
        if not isinstance(optional, bool):
            raise TypeError(
                f"TransferBudget.require: optional must be True or False, "
                f"not {optional!r}"
            )
        rule.set_optional(optional)
        self._require(name, rule)
