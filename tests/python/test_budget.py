"""TransferBudget: the documented examples verbatim, phases, rules, violations,
reports and the TOML rule file."""

import numpy as np
import pytest

import cunumpy as xp
from helpers import next_site, without_elapsed


class Model:
    """A time-stepping model whose state lives on the device."""

    def __init__(self, n):
        self.state = xp.to_cunumpy(np.linspace(0.0, 1.0, n))
        self.norm = xp.to_cunumpy(np.array(0.0))
        self.leak = False

    def integrate(self, dt):
        self.state = self.state.astype(np.float64)  # the kernel, on the device
        if self.leak:
            self.leak_site = next_site()
            xp.to_numpy(self.state)  # the copy that sneaked into the loop
        return float(xp.to_numpy(self.norm))  # an 8-byte residual norm


def save(model):
    return xp.to_numpy(model.state)


def run_the_documented_example(model, n_steps, dt=0.1):
    budget = xp.profiling.TransferBudget(started=False)
    model.integrate = budget.count("integrate")(model.integrate)  # a decorator
    model.integrate(dt)  # setup: not counted
    budget.start()
    for step in range(n_steps):
        model.integrate(dt)
        with budget.phase("output"):  # or a context
            save(model)
    return budget


def test_the_documented_budget_example_passes(device_space):
    n_steps = 4
    model = Model(1000)
    budget = run_the_documented_example(model, n_steps)
    n, b = n_steps, n_steps * model.state.nbytes

    budget.require("integrate", allow={"to_host": {"max_nbytes": 8}}, calls=n_steps)
    budget.require("output", allow={"to_host": {"max_count": n, "max_total_bytes": b}})
    budget.check()  # AssertionError with budget.report() if a rule is broken

    assert budget.violations() == []
    assert budget.calls["integrate"] == n_steps  # the setup call is not counted
    assert budget.calls["output"] == n_steps
    assert budget["integrate"].to_host == n_steps
    assert budget["integrate"].device_copy == n_steps
    assert budget["output"].bytes_to_host == b
    assert "\nbudget: ok (2 rule(s))\n" in budget.report()


def test_the_documented_budget_example_catches_a_copy_in_the_time_loop(device_space):
    n_steps = 4
    model = Model(1000)
    model.leak = True
    budget = run_the_documented_example(model, n_steps)
    budget.require("integrate", allow={"to_host": {"max_nbytes": 8}}, calls=n_steps)
    budget.require(
        "output", allow={"to_host": {"max_count": n_steps, "max_total_bytes": 10**9}}
    )
    with pytest.raises(AssertionError) as error:
        budget.check()
    assert without_elapsed(str(error.value)) == without_elapsed(budget.report())

    (violation,) = budget.violations()
    assert (violation.phase, violation.kind, violation.limit) == (
        "integrate",
        "to_host",
        "max_nbytes",
    )
    assert (violation.allowed, violation.actual) == ("8", "8000")
    (offender,) = violation.events
    assert offender.site == model.leak_site
    assert offender.count == n_steps and offender.max_nbytes == 8000
    assert (
        f"    {model.leak_site}: to_numpy(shape=(1000,), dtype=float64) (x{n_steps})"
        in budget.report()
    )
    assert "broken rules (1):" in budget.report()
    assert "phase 'integrate': to_host max_nbytes=8 exceeded" in str(violation)


def test_phase_yields_the_phase_counter_which_accumulates_over_calls(device_space):
    budget = xp.profiling.TransferBudget()
    for _ in range(3):
        with budget.phase("output") as counter:
            xp.to_device(np.ones(4))
    assert isinstance(counter, xp.profiling.TransferCounter)
    assert counter.to_device == 3
    assert budget["output"].to_device == 3
    assert budget.calls["output"] == 3
    assert budget.calls["never"] == 0
    assert "output" in budget.calls and "never" not in budget.calls
    assert dict(budget.calls) == {"output": 3}
    assert budget.total.to_device == 3


def test_phases_nest_and_an_event_counts_in_the_innermost_only(device_space):
    budget = xp.profiling.TransferBudget()
    with budget.phase("step"):
        xp.to_device(np.ones(2))
        with budget.phase("halo"):
            xp.to_device(np.ones(2))
            xp.to_device(np.ones(2))
        xp.to_device(np.ones(2))
    assert budget["step"].to_device == 2
    assert budget["halo"].to_device == 2
    assert budget.total.to_device == 4
    assert budget.phases() == ["step", "halo"]


def test_not_started_phases_run_uncounted_until_start_and_after_stop(device_space):
    budget = xp.profiling.TransferBudget(started=False)
    assert not budget.started
    with budget.phase("io"):
        xp.to_device(np.ones(2))
    budget.start()
    with budget.phase("io"):
        xp.to_device(np.ones(2))
    budget.stop()
    with budget.phase("io"):
        xp.to_device(np.ones(2))
    assert budget["io"].to_device == 1
    assert budget.calls["io"] == 1
    assert xp.profiling.TransferBudget().started


def test_count_is_a_decorator_keeping_the_function(device_space):
    budget = xp.profiling.TransferBudget()

    @budget.count("solve")
    def solve(a, scale=1.0):
        """Solves."""
        return xp.to_numpy(xp.to_device(a)) * scale

    np.testing.assert_array_equal(solve(np.ones(2), scale=3.0), [3.0, 3.0])
    assert solve.__name__ == "solve" and solve.__doc__ == "Solves."
    assert budget.calls["solve"] == 1
    assert budget["solve"].total == 2
    with pytest.raises(TypeError, match="phase name"):
        budget.count(solve)


def test_an_exception_inside_a_phase_closes_it(device_space):
    budget = xp.profiling.TransferBudget()
    with pytest.raises(RuntimeError):
        with budget.phase("failing"):
            raise RuntimeError("boom")
    xp.to_device(np.ones(2))
    assert budget["failing"].total == 0
    assert budget.total.to_device == 1


def test_require_forbids_every_kind_not_allowed_except_the_ignored(device_space):
    budget = xp.profiling.TransferBudget()
    with budget.phase("step"):
        state = xp.to_device(np.ones(3))  # forbidden
        state.copy()  # device_copy: ignored by default
        xp.synchronize()  # sync: ignored by default
    budget.require("step")
    (violation,) = budget.violations()
    assert (violation.kind, violation.limit, violation.actual) == ("to_device", "forbidden", "1")
    budget.require("step", allow={"to_device": {}})
    assert budget.violations() == []
    budget.require("step", allow=["to_device"], ignore=("sync",))
    (violation,) = budget.violations()
    assert violation.kind == "device_copy"


def test_blocking_false_allows_only_non_blocking_scalar_copies(device_space):
    budget = xp.profiling.TransferBudget()
    norm = xp.to_device(np.array(1.0))
    with budget.phase("integrate"):
        pending = xp.to_host_async(norm)
        assert pending.ready() and pending.result() == 1.0
    budget.require("integrate", allow={"to_host": {"max_nbytes": 8, "blocking": False}})
    assert budget.violations() == []
    with budget.phase("integrate"):
        site = next_site()
        xp.to_numpy(norm)  # a blocking read
    (violation,) = budget.violations()
    assert (violation.limit, violation.allowed, violation.actual) == ("blocking", "false", "true")
    assert violation.events[0].site == site


def test_implicit_false_rejects_scalar_reads_of_cpp_code(device_space, ext):
    budget = xp.profiling.TransferBudget()
    with budget.phase("converge"):
        xp.synchronize()  # an explicit wait: allowed
    budget.require(
        "converge",
        allow={"to_host": {"max_nbytes": 8}, "sync": {"implicit": False}},
        ignore=("device_copy",),
    )
    assert budget.violations() == []
    with budget.phase("converge"):
        site = next_site()
        assert ext.read_scalar(2.5) == 2.5  # C++ reads a device scalar
    (violation,) = budget.violations()
    assert (violation.kind, violation.limit) == ("sync", "implicit")
    assert violation.events[0].site.startswith(f"{site} (in ")
    assert violation.events[0].implicit


def test_calls_is_the_number_of_calls_the_phase_must_have_had(device_space):
    budget = xp.profiling.TransferBudget()
    with budget.phase("io"):
        pass
    budget.require("io", calls=2)
    budget.require("absent", calls=1)
    violations = budget.violations()
    assert [(v.phase, v.limit, v.allowed, v.actual, v.kind) for v in violations] == [
        ("io", "calls", "2", "1", None),
        ("absent", "calls", "1", "0", None),
    ]
    assert "phase 'absent' (0 calls); rule: allow nothing; ignore device_copy, sync; calls=1 [BROKEN]\n  never entered" in budget.report()
    with pytest.raises(AssertionError, match="calls=2 required, got 1"):
        budget.check()


def test_max_count_and_max_total_bytes(device_space):
    budget = xp.profiling.TransferBudget()
    with budget.phase("output"):
        for _ in range(3):
            xp.to_numpy(xp.to_device(np.ones(10)))
    budget.require(
        "output",
        allow={"to_host": {"max_count": 2, "max_total_bytes": 160}, "to_device": None},
    )
    limits = sorted((v.limit, v.actual) for v in budget.violations())
    assert limits == [("max_count", "3"), ("max_total_bytes", "240")]


def test_rules_describe_themselves():
    budget = xp.profiling.TransferBudget()
    budget.require(
        "integrate", allow={"to_host": {"max_nbytes": 8, "blocking": False}}, calls=100
    )
    rule = budget.rule("integrate")
    assert str(rule) == (
        "allow to_host (max_nbytes=8, blocking=false); ignore device_copy, sync; calls=100"
    )
    assert rule.allowed == {"to_host": {"max_nbytes": 8, "blocking": False}}
    assert rule.ignored == ("device_copy", "sync")
    assert rule.calls == 100
    assert budget.rule("other") is None


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"allow": {"to_hst": {}}}, ValueError, "unknown event kind 'to_hst'"),
        ({"allow": {"to_host": {"max_size": 8}}}, ValueError, "unknown limit 'max_size'"),
        ({"allow": {"to_host": {"max_nbytes": -1}}}, ValueError, "non-negative"),
        ({"allow": {"to_host": {"max_count": 2.5}}}, TypeError, "non-negative integer"),
        ({"allow": {"to_host": {"blocking": 1}}}, TypeError,
         "to_host.blocking must be true or false, not 1"),
        ({"allow": {"to_host": 8}}, TypeError, "must be a dict"),
        ({"ignore": ("sink",)}, ValueError, "unknown event kind 'sink'"),
        ({"calls": -2}, ValueError, "calls must be a non-negative integer"),
        ({"allow": {"sync": {}}}, ValueError, "both allowed and ignored"),
    ],
)
def test_require_rejects_mistakes(kwargs, error, message):
    budget = xp.profiling.TransferBudget()
    with pytest.raises(error, match=message):
        budget.require("phase", **kwargs)
    assert budget.rule("phase") is None


RULE_FILE = """
[phases.integrate]
calls = 2                                    # optional
allow.to_host = { max_nbytes = 8, blocking = true }
ignore = ["device_copy", "sync"]             # the default

[phases.output]
allow.to_host = { max_count = 10, max_total_bytes = 8000000 }
"""


def test_the_toml_rule_file_of_the_budget_issue(device_space, tmp_path):
    path = tmp_path / "rules.toml"
    path.write_text(RULE_FILE)
    norm = xp.to_device(np.array(0.0))
    state = xp.to_device(np.ones(100))
    budget = xp.profiling.TransferBudget.from_file(path)
    assert isinstance(budget, xp.profiling.TransferBudget)
    for _ in range(2):
        with budget.phase("integrate"):
            xp.to_numpy(norm)
    with budget.phase("output"):
        xp.to_numpy(state)
    assert budget.violations() == [], budget.report()
    assert budget.rule("output").allowed == {
        "to_host": {"max_count": 10, "max_total_bytes": 8000000}
    }
    with budget.phase("integrate"):
        xp.to_numpy(state)
    assert {v.limit for v in budget.violations()} == {"calls", "max_nbytes"}


def test_rules_from_toml_text_and_not_started_files(device_space, tmp_path):
    budget = xp.profiling.TransferBudget()
    budget.require_toml("[phases.quiet]\n")
    with budget.phase("quiet"):
        xp.to_device(np.ones(1))
    assert [v.phase for v in budget.violations()] == ["quiet"]
    path = tmp_path / "rules.toml"
    path.write_text(RULE_FILE)
    later = xp.profiling.TransferBudget.from_file(str(path), started=False)
    assert not later.started


def test_rule_file_errors_name_the_file_the_line_and_the_key(tmp_path):
    path = tmp_path / "rules.toml"
    path.write_text("[phases.a]\nallow.to_hst = {}\n")
    with pytest.raises(ValueError, match=r"rules.toml:2: key 'phases.a.allow.to_hst': unknown event kind"):
        xp.profiling.TransferBudget.from_file(path)
    with pytest.raises(ValueError, match="cannot read rule file '/nonexistent/rules.toml'"):
        xp.profiling.TransferBudget().require_file("/nonexistent/rules.toml")
    with pytest.raises(ValueError, match=r"<string>:2: key 'phases.a.cals': unknown key"):
        xp.profiling.TransferBudget().require_toml("[phases.a]\ncals = 3\n")


def test_a_rule_file_without_phases_is_refused(tmp_path):
    # Checked, it would pass whatever the program copies.
    with pytest.raises(ValueError, match="is a directory; name the .toml file in it"):
        xp.profiling.TransferBudget.from_file(tmp_path)
    path = tmp_path / "rules.toml"
    path.write_text("# rules to come\n")
    with pytest.raises(ValueError, match=r"rules.toml' defines no phases"):
        xp.profiling.TransferBudget.from_file(path)


def test_a_rule_whose_phase_never_ran_is_broken_unless_optional():
    budget = xp.profiling.TransferBudget()
    with budget.phase("integrate"):
        pass
    with budget.phase("output"):
        pass
    budget.require("integrat")  # a typo
    (violation,) = budget.violations()
    assert violation.limit == "never_entered"
    assert violation.phase == "integrat"
    assert violation.details == [
        "regions and phases that ran: 'integrate', 'output'"]
    with pytest.raises(AssertionError, match="never entered while counting"):
        budget.check()
    budget.require("integrat", optional=True)
    assert budget.rule("integrat").optional
    budget.check()
    with pytest.raises(TypeError, match="optional must be True or False"):
        budget.require("integrat", optional="yes")


def test_optional_in_the_rule_file(tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text("[phases.checkpoint]\noptional = true\n")
    budget = xp.profiling.TransferBudget.from_file(rules)
    assert budget.rule("checkpoint").optional
    budget.check()


def test_migration_rules_read_alike_from_python_and_a_rule_file():
    """allow.migration limits the bytes unified memory migrated in a phase
    (CUDA's own record, docs/cuda.md): the same rule from require() and from
    TOML, and a phase that never ran is a violation like any other."""
    assert "migration" in xp.profiling.event_kinds
    from_python = xp.profiling.TransferBudget()
    from_python.require("step", allow={"migration": {"max_total_bytes": 1 << 20}})
    from_toml = xp.profiling.TransferBudget()
    from_toml.require_toml(
        "[phases.step]\nallow.migration = { max_total_bytes = 1048576 }\n"
    )
    expected = "allow migration (max_total_bytes=1048576); ignore device_copy, sync"
    assert str(from_python.rule("step")) == expected
    assert str(from_toml.rule("step")) == expected
    assert [v.limit for v in from_python.violations()] == ["never_entered"]
    optional = xp.profiling.TransferBudget()
    optional.require_toml(
        "[phases.step]\noptional = true\n"
        "allow.migration = { max_total_bytes = 1048576 }\n"
    )
    assert optional.violations() == []


def test_cuda_view_says_where_it_stands():
    view = xp.profiling.cuda_view()
    assert view["state"] in ("on", "off", "unavailable", "not built", "not started")
    assert view["line"].startswith("CUDA view: " + view["state"])
    if view["state"] != "on":
        assert view["reason"] != ""


def test_errors_of_the_core_name_the_python_api(tmp_path):
    # What the C++ core refuses reaches Python under Python's names.
    budget = xp.profiling.TransferBudget()
    with pytest.raises(ValueError, match=r"^cunumpy\.profiling\.TransferBudget\.require: "
                                         r"phase 'x': 'sync' is both allowed and ignored"):
        budget.require("x", allow={"sync": {}})
    with pytest.raises(ValueError, match=r"^cunumpy\.profiling\.TransferBudget: cannot read "
                                         r"rule file"):
        budget.require_file(str(tmp_path / "missing.toml"))
