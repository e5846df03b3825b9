"""Counting transfers: count_transfers, assert_no_transfers, TransferBudget.

One recorder serves C++ and Python: copies made by C++ code called from
Python are counted here too, attributed to the Python line that called into
C++ when the C++ stack offers no better site.
"""

from __future__ import annotations

import collections.abc
import functools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar, Union

from . import _core
from ._core import (
    AssertNoTransfers,
    CountTransfers,
    Event,
    Finding,
    FindingSite,
    Phase,
    Rule,
    SiteSummary,
    TransferCounter,
    Violation,
    cuda_view,
)

__all__ = [
    "Event",
    "Finding",
    "FindingSite",
    "Rule",
    "SiteSummary",
    "TransferBudget",
    "TransferCounter",
    "Violation",
    "advice_rules",
    "advice_thresholds",
    "assert_no_transfers",
    "count_transfers",
    "cuda_view",
    "event_kinds",
    "host_device_transfer_kinds",
    "record_marker",
    "transfer_kinds",
]

_Function = TypeVar("_Function", bound=Callable[..., Any])

#: The limits of one kind in TransferBudget.require(allow=...).
Limits = Mapping[str, Union[int, bool]]


def __dir__() -> list[str]:
    return sorted(__all__)


#: Every event kind, in report order.
event_kinds: tuple[str, ...] = _core.event_kinds
#: The kinds that are transfers: what TransferCounter.total and the first
#: line of every report count (docs/counting.md).
transfer_kinds: tuple[str, ...] = _core.transfer_kinds
#: The kinds assert_no_transfers() rejects: data moved between host and
#: device, host code run on the device backend.
host_device_transfer_kinds: tuple[str, ...] = _core.host_device_transfer_kinds

#: The rules of advice (docs/advice.md), and the default thresholds of
#: advice(**thresholds).
advice_rules: tuple[str, ...] = _core.advice_rules
advice_thresholds: dict[str, float] = dict(_core.advice_thresholds)



def _type_name(value: object) -> str:
    return type(value).__name__


def count_transfers(
    counter: TransferCounter | None = None, *, advice: str | None = None
) -> CountTransfers:
    """A context manager counting the copies, markers and syncs of every
    thread while the block runs, with the file and line that caused them;
    yields the TransferCounter. With `counter`, adds the events to it
    (accumulates over several blocks). Blocks nest. `advice` ("off" by
    default, "on", or "contents" to hash the host side of every copy) is
    what a new counter records for counter.advice().

        with xp.profiling.count_transfers(advice="on") as counter:
            step(state, dt)
        print(counter.report())
        for finding in counter.advice():
            print(finding)
    """
    if counter is not None and not isinstance(counter, TransferCounter):
        raise TypeError(
            "count_transfers: counter must be a TransferCounter (the one a "
            f"block yielded) or None, not {_type_name(counter)}"
        )
    return _core.count_transfers(counter, advice)


def assert_no_transfers() -> AssertNoTransfers:
    """Context manager: AssertionError with the report when the block moved
    data between host and device or ran host code on the device backend:
    an event of a kind in host_device_transfer_kinds (to_host, to_device,
    migration, kernel_conversion, fallback). Device-only copies
    (device_copy) and syncs are allowed; an exception raised in the block
    passes through unchanged.

        with xp.profiling.assert_no_transfers():
            step(state, dt)
    """
    return _core.AssertNoTransfers()


def record_marker(kind: str, what: str) -> None:
    """Records a marker event, no copy and no bytes: "kernel_conversion" (a
    host kernel was called with device arrays, copied to the host and back)
    or "fallback" (a kernel without a device version ran its host version
    on the device backend). `what` describes it in reports."""
    if not isinstance(kind, str):
        raise TypeError(
            "record_marker: kind must be 'kernel_conversion' or 'fallback', "
            f"not {_type_name(kind)} {kind!r}"
        )
    if not isinstance(what, str):
        raise TypeError(
            "record_marker: what must be a str describing the marker in "
            f"reports (e.g. 'spline(x)'), not {_type_name(what)} {what!r}"
        )
    _core.record_marker(kind, what)


def _phase_name(name: object, function: str) -> str:
    if not isinstance(name, str):
        raise TypeError(
            f"TransferBudget.{function}: the phase name must be a str, not "
            f"{_type_name(name)} {name!r}"
        )
    return name


def _kind(name: object, where: str) -> str:
    if not isinstance(name, str):
        raise TypeError(
            f"TransferBudget.require: event kinds in {where} are str such as "
            f"'to_host', not {_type_name(name)} {name!r}"
        )
    if name not in event_kinds:
        raise ValueError(
            f"TransferBudget.require: unknown event kind {name!r} in {where} "
            f"(expected one of {', '.join(event_kinds)})"
        )
    return name


def _limits(kind: str, limits: object) -> dict[str, object]:
    """The limits of `kind` as a dict; the core checks each of them."""
    if limits is None:
        return {}
    if not isinstance(limits, collections.abc.Mapping):
        raise TypeError(
            f"TransferBudget.require: the limits of {kind!r} must be a dict "
            f"such as {{'max_nbytes': 8}}, not {limits!r}"
        )
    return dict(limits)


def _kinds(kinds: object, where: str) -> list[str]:
    if isinstance(kinds, str):
        kinds = (kinds,)
    if not isinstance(kinds, Iterable):
        raise TypeError(
            f"TransferBudget.require: {where} must be a kind or a sequence of "
            f"kinds such as ('device_copy', 'sync'), not {_type_name(kinds)} "
            f"{kinds!r}"
        )
    return [_kind(kind, where) for kind in kinds]


class _PhaseCalls(Mapping[str, int]):
    """budget.calls: phase name -> number of calls (0 for unknown phases)."""

    def __init__(self, budget: TransferBudget) -> None:
        self._budget = budget

    def __getitem__(self, name: str) -> int:
        return self._budget._calls(_phase_name(name, "calls"))

    def __contains__(self, name: object) -> bool:
        return name in self._budget.phases()

    def __iter__(self) -> Iterator[str]:
        return iter(self._budget.phases())

    def __len__(self) -> int:
        return len(self._budget.phases())

    def __repr__(self) -> str:
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

    def __init__(self, started: bool = True, advice: str = "off") -> None:
        if not isinstance(started, bool):
            raise TypeError(
                f"TransferBudget: started must be True or False, not "
                f"{_type_name(started)} {started!r}"
            )
        super().__init__(started, advice)

    @classmethod
    def from_file(
        cls, path: str | os.PathLike[str], started: bool = True, advice: str = "off"
    ) -> TransferBudget:
        """A budget with the rules of the TOML rule file at `path`."""
        budget = cls(started=started, advice=advice)
        budget.require_file(path)
        return budget

    def phase(self, name: str) -> Phase:
        """Context manager: phase `name` while the block runs; yields its
        TransferCounter."""
        return super().phase(_phase_name(name, "phase"))

    def __getitem__(self, name: str) -> TransferCounter:
        """The TransferCounter of phase `name`."""
        return super().__getitem__(_phase_name(name, "__getitem__"))

    def rule(self, name: str) -> Rule | None:
        """The Rule of phase `name`, or None."""
        return super().rule(_phase_name(name, "rule"))

    def require_toml(self, toml: str, source: str = "<string>") -> None:
        """Adds the rules of TOML text (the rule file's format)."""
        if not isinstance(toml, str) or not isinstance(source, str):
            raise TypeError(
                "TransferBudget.require_toml: toml and source must be str, not "
                f"{_type_name(toml)} and {_type_name(source)}; for a file use "
                "require_file(path)"
            )
        super().require_toml(toml, source)

    def count(self, name: str) -> Callable[[_Function], _Function]:
        """A decorator: the decorated function runs inside phase `name`.

        model.integrate = budget.count("integrate")(model.integrate)
        """
        if not isinstance(name, str):
            raise TypeError(
                "TransferBudget.count(name) takes the phase name and returns "
                "a decorator: budget.count('integrate')(function)"
            )

        def decorator(function: _Function) -> _Function:
            @functools.wraps(function)
            def counted(*args: Any, **kwargs: Any) -> Any:
                with self.phase(name):
                    return function(*args, **kwargs)

            return counted  # type: ignore[return-value]

        return decorator

    @property
    def calls(self) -> _PhaseCalls:
        """Mapping phase name -> number of calls counted."""
        return _PhaseCalls(self)

    def require(
        self,
        name: str,
        allow: Mapping[str, Limits | None] | Iterable[str] | str | None = None,
        ignore: Iterable[str] | str | None = None,
        calls: int | None = None,
        optional: bool = False,
    ) -> None:
        """Sets the rule of phase `name` (replacing an earlier one).

        `allow` maps the allowed event kinds to their limits (max_nbytes,
        max_count, max_total_bytes, blocking, implicit), e.g.
        {"to_host": {"max_nbytes": 8, "blocking": False}}; every other kind
        is forbidden except those in `ignore` (default: device_copy and
        sync). `calls` is the number of calls the phase must have had. A
        phase that never ran breaks its rule unless `optional` is true.
        """
        name = _phase_name(name, "require")
        rule = Rule()
        if allow is not None:
            items: Iterable[tuple[object, object]]
            if isinstance(allow, collections.abc.Mapping):
                items = allow.items()
            else:
                items = ((kind, None) for kind in _kinds(allow, "allow"))
            for kind, limits in items:
                checked = _kind(kind, "allow")
                rule._allow_checked(checked, _limits(checked, limits),
                                    "TransferBudget.require")
        if ignore is not None:
            rule.ignore(_kinds(ignore, "ignore"))
        if calls is not None:
            rule._calls_checked(calls, "TransferBudget.require")
        if not isinstance(optional, bool):
            raise TypeError(
                f"TransferBudget.require: optional must be True or False, "
                f"not {optional!r}"
            )
        rule.set_optional(optional)
        self._require(name, rule)
