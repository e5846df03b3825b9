"""xp.cuda.debug_sync(): while the block runs, the host waits after every
Kokkos kernel, and each wait is an implicit sync named after the kernel."""

import numpy as np

import cunumpy as xp


def test_debug_sync_records_a_wait_after_every_kernel(device_space, ext):
    state = xp.to_cunumpy(np.ones(16))
    with xp.profiling.count_transfers() as counter:
        with xp.cuda.debug_sync():
            ext.scale(state, 2.0)
            ext.scale(state, 0.5)
        ext.scale(state, 1.0)  # off again
    waits = [event for event in counter.events if event.kind == "sync"
             and event.what.startswith("debug_sync")]
    assert [event.what for event in waits] == \
        ['debug_sync(after kernel "scale")'] * 2, counter.report()
    assert all(event.implicit for event in waits)
    assert '[implicit]' in counter.report()


def test_debug_sync_waits_are_implicit_syncs_to_a_budget(device_space, ext):
    state = xp.to_cunumpy(np.ones(16))
    budget = xp.profiling.TransferBudget()
    with xp.cuda.debug_sync(), budget.phase("solve"):
        ext.scale(state, 2.0)
    budget.require("solve", allow={"sync": {"implicit": False}},
                   ignore=("device_copy",))
    (violation,) = budget.violations()
    assert violation.limit == "implicit"
    assert 'debug_sync(after kernel "scale")' in str(violation)
